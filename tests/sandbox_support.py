"""Whether the bwrap sandbox can run here, asked once, as a skip mark that keeps its reason.

A ``pytest.skip`` raised inside an async test or fixture (pytest-trio) reaches pytest wrapped,
and the report says only "Skipped"; a mark evaluated at collection keeps the reason.
"""

from __future__ import annotations

import functools

import pytest
import trio

from arena.referee.process import check_bwrap


@functools.cache
def bwrap_problem() -> str | None:
    return trio.run(check_bwrap)


needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None, reason=bwrap_problem() or "")
BWRAP = pytest.param("bwrap", marks=needs_bwrap, id="bwrap")
