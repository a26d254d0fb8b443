"""Sealed tables, proved by attack on a real server over a real results file and records (SPEC
10.7): a match of the tournament is being played (its record a third written) while the other
three rotations of its deal (the same cards, other seats) are finished. Every route that could
carry a card of it is asked for, without a token, with a wrong one, with the token of a bot at
its table, and with the organiser's: only what each may see comes back."""

from __future__ import annotations

import contextlib
import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path

import pytest
import trio

from arena.games import find_game
from arena.games.cards import Dealer, Rng
from arena.referee.record import RecordShelf, RecordWriter
from arena.tournament.store import StoredMatch
from arena.web.access import Access, bot_token
from arena.web.source import TournamentSource
from tests.web.conftest import CARD
from tests.web.test_server import (
    compact_lines,
    go_on,
    member_of,
    own_record,
    source_without,
    stored_matches,
)

server = pytest.importorskip("arena.web.server", reason="the web extra is not installed")

SECRET = "organiser-secret-of-the-tests-0123456789"
GAME = "eight-rounds"  # deals every card: any card not seat k's is another seat's


def ask(url: str, token: str | None = None, how: str = "header") -> tuple[int, bytes, dict]:
    """(status, body, headers) of a GET; an event stream's first event only."""
    headers = {}
    if token is not None and how == "header":
        headers["Authorization"] = f"Bearer {token}"
    elif token is not None and how == "cookie":
        headers["Cookie"] = f"arena_token={token}"
    elif token is not None:
        url += ("&" if "?" in url else "?") + urllib.parse.urlencode({"token": token})
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            if response.headers.get("content-type", "").startswith("text/event-stream"):
                body = b""
                for line in response:  # up to the end of the first event with data
                    body += line
                    if line == b"\n" and b"data: " in body:
                        break
            else:
                body = response.read()
            return response.status, body, dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read(), dict(error.headers)


class Table:
    """The running match, its finished rotations, and every seat's cards of the deal."""

    def __init__(self, running: StoredMatch, played: Path) -> None:
        self.running = running
        self.rotations = [
            m
            for m in stored_matches(played)
            if (m.game, m.table, m.deal) == (running.game, running.table, running.deal)
            and m.match_id != running.match_id
        ]
        spec = find_game(running.game_id)
        state = spec.new_match(4, running.options, running.seed, Dealer(Rng(running.seed)))
        self.hands = [set(hand) for hand in state.view(None)["hands"]]

    def others(self, seat: int) -> set[str]:
        return {card for s, hand in enumerate(self.hands) if s != seat for card in hand}

    def routes(self, match_id: str) -> list[str]:
        """Every address that shows a match's cards."""
        return [
            f"api/{route}?" + urllib.parse.urlencode({"id": match_id, "seat": seat})
            for route in ("match", "match/stream")
            for seat in ("all", 0, 1, 2, 3)
        ]


@contextlib.asynccontextmanager
async def serving(
    played: Path, tmp_path: Path, layout: str
) -> AsyncIterator[tuple[str, Table, TournamentSource]]:
    """A server (URL) of the tournament with one Eight Rounds match being played: its record
    the unfinished last member of a records file after finished ones (or, as an older arena
    wrote it, a file of its own)."""
    source, (running,) = source_without(played, GAME)
    records = tmp_path / "records"
    records.mkdir()
    lines = compact_lines(running)
    file = RecordShelf(records).take()
    if layout == "records file":
        for done in [m for m in stored_matches(played) if m != running][:3]:
            file.append(member_of(done))
        go_on(RecordWriter(file), lines[: len(lines) // 3])
    else:
        own_record(records, running, lines[: len(lines) // 3])
    source.records_dir = records
    access = Access(SECRET, source.bots)
    async with trio.open_nursery() as nursery:
        url = await nursery.start(
            partial(server.serve_tournament, access=access), source, "127.0.0.1", 0
        )
        yield url, Table(running, played), source
        nursery.cancel_scope.cancel()
    file.close()


@pytest.fixture(params=["records file", "own file"])
async def table(
    played: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[tuple[str, Table, TournamentSource]]:
    """:func:`serving`, in both layouts."""
    async with serving(played, tmp_path, request.param) as served:
        yield served


@pytest.fixture
async def one_table(
    played: Path, tmp_path: Path
) -> AsyncIterator[tuple[str, Table, TournamentSource]]:
    """:func:`serving`, a records file (for what does not depend on where records are)."""
    async with serving(played, tmp_path, "records file") as served:
        yield served


async def get(url: str, token: str | None = None, how: str = "header") -> tuple[int, bytes, dict]:
    return await trio.to_thread.run_sync(ask, url, token, how)


def faults_of_the_deal(body: bytes, table: Table) -> list[dict]:
    """The faults listed in a summary or bot page of the sealed deal's matches."""
    data = json.loads(body.split(b"data: ", 1)[1] if body.startswith(b"retry") else body)
    ids = {m.match_id for m in [table.running, *table.rotations]}
    return [f for f in data["faults"] if f["match_id"] in ids]


@pytest.mark.parametrize("who", ["nobody", "a wrong cookie", "an old cookie"])
async def test_without_a_token_no_route_shows_a_card_of_the_deal_in_play(table, who) -> None:
    url, deal, _source = table
    token = {"nobody": None, "a wrong cookie": "x" * 40, "an old cookie": bot_token("old", "x")}
    how = "cookie"
    matches = [deal.running, *deal.rotations]
    assert len(matches) == 4
    for match in matches:
        for route in deal.routes(match.match_id):
            status, body, _headers = await get(url + route, token[who], how)
            assert status == 403, (route, status, body[:200])
            assert not CARD.findall(body.decode()), (route, body[:300])
            assert b"seed" not in body
    # The duplicate view of the deal: who held which seat and the scores, not the cards.
    status, body, _ = await get(url + f"api/deal?game={GAME}&table=0&deal=0", token[who], how)
    data = json.loads(body)
    assert status == 200 and data["sealed"] and data["hands"] is None
    assert not CARD.findall(body.decode()) and b"seed" not in body
    # The tournament page and its event stream, the bots' pages: the deal's faults (whose
    # messages name the faulting seat's cards) without their messages.
    for route in ["api/summary", "api/stream", *(f"api/bot?name={bot}" for bot in _source.bots)]:
        status, body, _ = await get(url + route, token[who], how)
        assert status == 200
        listed = faults_of_the_deal(body, deal)
        assert all(f["message"] is None and f["withheld"] for f in listed)
        assert b"seed" not in body
    assert faults_of_the_deal((await get(url + "api/bot?name=illegal"))[1], deal)  # (there are)
    # No route hands out a records file, the results file or the tournament file.
    for path in [
        "records",
        "api/record?id=" + deal.running.match_id,
        "static/..%2Frecords%2F",
        "static/%2e%2e%2f%2e%2e%2fresults.sqlite",
        "static/..%5c..%5cwebtest.toml",
        "api/tokens",
    ]:
        status, body, _ = await get(url + path, token[who], how)
        assert status in (403, 404), (path, status)
        assert not CARD.findall(body.decode())


async def test_a_token_given_in_the_request_must_be_known(one_table) -> None:
    url, deal, _source = one_table
    for how in ("header", "query"):
        status, body, _ = await get(url + "api/summary", "not-a-token-of-this-server", how)
        assert status == 401 and json.loads(body) == {"error": "unknown token"}


async def test_a_bots_token_shows_that_seat_of_the_match_being_played_only(table) -> None:
    url, deal, _source = table
    running = deal.running
    seat = 1
    token = bot_token(SECRET, running.bots[seat])
    query = urllib.parse.urlencode({"id": running.match_id, "seat": seat})
    for how in ("header", "query", "cookie"):
        status, body, _ = await get(url + "api/match?" + query, token, how)
        data = json.loads(body)
        assert status == 200 and data["seat"] == seat and data["running"]
        assert data["seats_allowed"] == [seat] and not data["all_hands_allowed"]
        assert set(data["frames"][0]["view"]["hand"]) == deal.hands[seat]  # (the first deal's)
        assert not set(CARD.findall(json.dumps(data["frames"][0]))) & deal.others(seat)
        assert "seed" not in data
    status, body, _ = await get(url + "api/match/stream?" + query, token)
    assert status == 200 and json.loads(body.split(b"data: ", 1)[1])["seat"] == seat
    # Every other seat, all hands, and the finished rotations (the same cards elsewhere).
    for route in deal.routes(running.match_id):
        if f"seat={seat}" not in route:
            status, body, _ = await get(url + route, token)
            assert status == 403 and not CARD.findall(body.decode()), route
    for match in deal.rotations:
        assert running.bots[seat] in match.bots  # it holds a seat there too
        for route in deal.routes(match.match_id):
            status, body, _ = await get(url + route, token)
            assert status == 403 and not CARD.findall(body.decode()), route
    status, body, _ = await get(url + f"api/deal?game={GAME}&table=0&deal=0", token)
    assert json.loads(body)["hands"] is None
    status, body, _ = await get(url + "api/tokens", token)
    assert status == 403
    status, body, _ = await get(url + "api/summary", token)
    assert all(f["message"] is None for f in faults_of_the_deal(body, deal))


async def test_the_organisers_token_shows_everything(table) -> None:
    url, deal, source = table
    for match in [deal.running, *deal.rotations]:
        for route in deal.routes(match.match_id):
            status, body, _ = await get(url + route, SECRET)
            assert status == 200, (route, body[:200])
    status, body, _ = await get(
        url + "api/match?" + urllib.parse.urlencode({"id": deal.running.match_id}), SECRET
    )
    data = json.loads(body)
    hands = data["frames"][0]["view"]["hands"]
    assert [set(h) for h in hands] == deal.hands and data["all_hands_allowed"]
    status, body, _ = await get(url + f"api/deal?game={GAME}&table=0&deal=0", SECRET)
    assert [set(h) for h in json.loads(body)["hands"]] == deal.hands
    status, body, _ = await get(url + "api/summary", SECRET)
    assert any(f["message"] for f in faults_of_the_deal(body, deal))
    status, body, _ = await get(url + "api/tokens", SECRET)
    tokens = json.loads(body)["bots"]
    assert {t["bot"]: t["token"] for t in tokens} == {
        bot: bot_token(SECRET, bot) for bot in source.bots
    }
    assert all(t["url"] == f"{url}?token={t['token']}" for t in tokens)


async def test_once_every_rotation_is_over_the_deal_is_open_to_everyone(table) -> None:
    url, deal, source = table
    source.add(deal.running)  # the last rotation is stored (its record as the tournament wrote it)
    for match in [deal.running, *deal.rotations]:
        for route in deal.routes(match.match_id):
            if "stream" not in route:
                status, body, _ = await get(url + route)
                assert status == 200, (route, body[:200])
    status, body, _ = await get(url + f"api/deal?game={GAME}&table=0&deal=0")
    assert [set(h) for h in json.loads(body)["hands"]] == deal.hands
    status, body, _ = await get(url + "api/summary")
    assert all(f["message"] for f in faults_of_the_deal(body, deal))


async def test_a_pages_token_becomes_an_httponly_cookie_and_leaves_the_address(one_table) -> None:
    url, deal, _source = one_table
    token = bot_token(SECRET, deal.running.bots[2])

    def first_answer(address: str) -> tuple[int, dict]:
        class Keep(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
                return None

        try:
            with urllib.request.build_opener(Keep).open(address, timeout=10) as response:
                return response.status, dict(response.headers)
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers)

    query = urllib.parse.urlencode({"id": deal.running.match_id, "seat": 2, "token": token})
    status, headers = await trio.to_thread.run_sync(first_answer, url + "match?" + query)
    assert status == 303
    assert headers["location"] == "/match?" + urllib.parse.urlencode(
        {"id": deal.running.match_id, "seat": 2}
    )
    cookie = headers["set-cookie"]
    assert cookie.startswith(f"arena_token={token};")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie


async def test_every_answer_is_nosniff_with_a_policy_and_only_its_own_hosts_are_served(
    one_table,
) -> None:
    url, deal, _source = one_table
    port = int(url.rsplit(":", 1)[1].strip("/"))
    for path in ["", "match?id=x", "static/app.js", "static/nope.js", "api/summary", "api/nope"]:
        status, _body, headers = await get(url + path)
        assert headers["x-content-type-options"] == "nosniff", path
        assert "script-src 'self'" in headers["content-security-policy"]
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
    request = urllib.request.Request(url + "api/summary", method="POST")
    status, _body, headers = await trio.to_thread.run_sync(_raw_status, request)
    assert status == 405 and headers["x-content-type-options"] == "nosniff"

    def with_host(host: str | None) -> int:
        """The status of a GET of /api/summary with this Host header (None: none at all)."""
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            header = "" if host is None else f"Host: {host}\r\n"
            sock.sendall(f"GET /api/summary HTTP/1.1\r\n{header}Connection: close\r\n\r\n".encode())
            return int(sock.recv(64).split()[1])

    for host in ["127.0.0.1", f"127.0.0.1:{port}", f"localhost:{port}", "[::1]", "LOCALHOST."]:
        assert await trio.to_thread.run_sync(with_host, host) == 200, host
    for host in ["evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", "10.0.0.1"]:
        assert await trio.to_thread.run_sync(with_host, host) == 400, host


def _raw_status(request: urllib.request.Request) -> tuple[int, bytes, dict]:
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read(), dict(error.headers)


FUZZ = [
    "",
    "x",
    "-1",
    "0",
    "3",
    "4",
    "99999999999999999999999999",
    "1e3",
    "１",
    "٣",
    " 1",
    "+1",
    "\x00",
    "..%2F..",
    "eight-rounds/t0/d0/r0",
    "eight-rounds/t0/d0/r9",
    "eight-rounds/t99999999999999999999/d0/r0",
    "all",
    "\u202e",
    "a" * 5000,
]
PARAMETERS = {
    "/": ["token"],
    "/match": ["id", "seat", "token"],
    "/api/summary": ["token"],
    "/api/stream": ["token"],
    "/api/bot": ["name", "token"],
    "/api/deal": ["game", "table", "deal", "token"],
    "/api/match": ["id", "seat", "token"],
    "/api/match/stream": ["id", "seat", "token"],
    "/api/tokens": ["token"],
    "/compare": ["token"],
    "/api/compare": ["token"],
}


async def test_no_malformed_request_answers_500(one_table) -> None:
    """Every route's every parameter given every odd value (the rest kept sensible), odd
    paths, and odd requests: a 2xx, 3xx or 4xx each time, never a 5xx. (Before, a table or
    deal number too large for SQLite answered 500.)"""
    url, deal, _source = one_table
    port = int(url.rsplit(":", 1)[1].strip("/"))
    sensible = {
        "name": "illegal",
        "game": GAME,
        "table": "0",
        "deal": "0",
        "id": deal.rotations[0].match_id,
        "seat": "1",
    }
    tried = 0
    for route, names in PARAMETERS.items():
        for name in names:
            for value in FUZZ:
                params = {k: v for k, v in sensible.items() if k in names} | {name: value}
                for token in (None, SECRET):
                    status, body, _ = await get(url + route[1:] + "?" + _encode(params), token)
                    tried += 1
                    assert status < 500, (route, name, value[:20], status, body[:200])
    for path in [
        "static/%00.js",
        "static/%ff%fe.js",
        "static/..%2F..%2Fpyproject.toml",
        "static/app.js%00",
        "%ff",
        "api/match?id=%ff%fe&seat=%ff",
        "api/deal?game=%ff&table=%ff&deal=%ff",
        "api/match?seat=1&seat=2&id=x",
    ]:
        status, body, _ = await get(url + path)
        assert status < 500, (path, status, body[:200])

    def raw(request: bytes) -> int:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(request)
            answer = sock.recv(64)
            return int(answer.split()[1]) if answer else 400  # (closed: refused)

    for request in [
        b"GET /api/summary HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer\r\n\r\n",
        b"GET /api/summary HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: arena_token=\xff\r\n\r\n",
        b"GET /api/summary HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: \xff\xfe\r\n\r\n",
        b"GET /api/summary?token=%ff HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /api/summary HTTP/1.1\r\nHost: \xff\r\n\r\n",
        b"GET /api/summary HTTP/1.1\r\nHost: 127.0.0.1:x\r\n\r\n",
        b"GET /api/summary HTTP/1.1\r\nHost: [::1\r\n\r\n",
        b"BREW /api/summary HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET nonsense HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    ]:
        status = await trio.to_thread.run_sync(raw, request)
        assert status < 500, (request, status)
    assert tried == 2 * len(FUZZ) * sum(len(n) for n in PARAMETERS.values())


def _encode(params: dict[str, str]) -> str:
    return urllib.parse.urlencode(params, quote_via=urllib.parse.quote, safe="")


def test_the_spec_states_the_policy_and_how_a_bots_token_is_made() -> None:
    from arena.web.access import BOT_TOKEN_LABEL
    from tests.web.conftest import ROOT

    spec = " ".join((ROOT / "SPEC.md").read_text().split())
    assert f"`Content-Security-Policy: {server.CONTENT_SECURITY_POLICY}`" in spec
    label = BOT_TOKEN_LABEL.decode().replace("\x00", "\\0")
    assert f'HMAC-SHA256(secret, "{label}" + bot name))`, its first 24 bytes' in spec
    assert len(bot_token(SECRET, "x")) == 32
