"""The league's rate limits against a real ``arena league serve``: open registrations per client
address and per hour (429, one line saying when to try again, nothing stored), and both that
limit and the uploads' one still counted after the server is killed and started again."""

from __future__ import annotations

import http.client
import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from arena.league.config import load_league
from arena.tournament.config import ConfigError
from tests.league.conftest import add_author, league_toml, open_store, serving


def _register(url: str, name: str, source: str = "127.0.0.1") -> tuple[int, dict, str | None]:
    """POST /api/register from the client address ``source``: status, body, Retry-After."""
    where = urlsplit(url)
    assert where.hostname is not None
    connection = http.client.HTTPConnection(
        where.hostname, where.port, timeout=60, source_address=(source, 0)
    )
    try:
        connection.request(
            "POST",
            "/api/register",
            json.dumps({"name": name}),
            {"Content-Type": "application/json"},
        )
        response = connection.getresponse()
        return response.status, json.loads(response.read()), response.getheader("Retry-After")
    finally:
        connection.close()


def _authors(toml: Path) -> list[str]:
    store = open_store(toml)
    try:
        return [a.name for a in store.authors()]
    finally:
        store.close()


def test_registrations_are_limited_per_address_and_hour_across_a_restart(tmp_path: Path) -> None:
    toml = league_toml(
        tmp_path,
        house=0,
        extra='[organiser]\nregistration = "open"\nregistrations_per_hour = 2\n',
    )
    with serving(toml) as server:
        assert _register(server.url, "ann")[0] == 200
        assert _register(server.url, "ann")[0] == 409  # a name taken is not counted
        assert _register(server.url, "bob")[0] == 200
        status, body, retry_after = _register(server.url, "cy")
        assert status == 429
        assert "2 registrations from this address in the last hour" in body["error"]
        assert "organiser.registrations_per_hour" in body["error"]
        assert re.search(r"try again in \d+ min, after \d\d:\d\d UTC$", body["error"])
        assert "\n" not in body["error"]
        assert retry_after is not None and 0 < int(retry_after) <= 3600
        # another client address has a limit of its own
        assert _register(server.url, "dee", source="127.0.0.2")[0] == 200
    assert sorted(_authors(toml)) == ["ann", "bob", "dee", "house"]  # nothing stored for cy
    with serving(toml) as server:  # killed and started again: the hour still counts
        status, body, _ = _register(server.url, "cy")
        assert status == 429, body
        assert _register(server.url, "eve", source="127.0.0.2")[0] == 200
        assert _register(server.url, "fay", source="127.0.0.2")[0] == 429
    assert sorted(_authors(toml)) == ["ann", "bob", "dee", "eve", "house"]


def test_the_upload_limit_holds_across_a_restart(tmp_path: Path) -> None:
    toml = league_toml(tmp_path, house=0, extra="[organiser]\nsubmissions_per_hour = 1\n")
    token = add_author(toml, "ann")
    with serving(toml) as server:
        status, body = server.post("/api/submit", b"not an archive", token=token)
        assert status == 400 and "not a tar.gz or zip" in body["error"]
    with serving(toml) as server:
        status, body = server.post("/api/submit", b"not an archive", token=token)
        assert status == 400
        assert "1 uploads in the last hour already" in body["error"]
        assert "organiser.submissions_per_hour" in body["error"]


def test_registrations_per_hour_is_read_and_checked(tmp_path: Path) -> None:
    assert load_league(league_toml(tmp_path)).organiser.registrations_per_hour == 5
    toml = league_toml(tmp_path, extra="[organiser]\nregistrations_per_hour = 0\n")
    with pytest.raises(ConfigError, match=r"organiser\.registrations_per_hour"):
        load_league(toml)
