"""Without the web extra, the commands that serve pages say how to install it, in one line."""

from __future__ import annotations

import sys

import click
import pytest

from arena.cli.serve import WEB_EXTRA_MISSING, web_server


def test_a_missing_web_extra_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import arena.web

    monkeypatch.setitem(sys.modules, "arena.web.server", None)  # import now raises ImportError
    monkeypatch.delattr(arena.web, "server", raising=False)  # as if never imported
    with pytest.raises(click.ClickException) as raised:
        web_server()
    assert raised.value.message == WEB_EXTRA_MISSING
    assert "pip install -e '.[web]'" in WEB_EXTRA_MISSING
