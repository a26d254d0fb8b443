"""The web server over a real results file: its JSON, its event stream, its refusals."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
import zlib
from functools import partial
from pathlib import Path

import msgspec
import pytest
import trio

from arena.referee.record import RecordShelf, RecordWriter, read_span
from arena.tournament.standings import compute_standings, standings_as_data
from arena.tournament.store import ResultStore, StoredMatch
from arena.web.access import Access, bot_token
from arena.web.source import TournamentSource
from tests.web.conftest import ROOT, arena_env

server = pytest.importorskip("arena.web.server", reason="the web extra is not installed")


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


async def fetch(url: str) -> tuple[int, object]:
    status, body = await trio.to_thread.run_sync(get, url)
    return status, json.loads(body)


def source_of(results: Path, **kwargs) -> tuple[TournamentSource, ResultStore]:
    store = ResultStore.open_read(results)
    source = TournamentSource(results, name=store.name(), definition=store.definition(), **kwargs)
    source.poll_file(store)
    return source, store


def stored_matches(played: Path) -> list[StoredMatch]:
    with ResultStore.open_read(played) as store:
        return store.matches(include_aborted=True)


def source_without(played: Path, *games: str) -> tuple[TournamentSource, list[StoredMatch]]:
    """A source of every match of the file but a finished one of each of ``games``: not stored
    yet, as if they were being played."""
    stored = stored_matches(played)
    with ResultStore.open_read(played) as store:
        source = TournamentSource(played, name=store.name(), definition=store.definition())
    finished = [next(m for m in stored if m.game == game) for game in games]
    source.load([m for m in stored if m not in finished])
    source.is_running = lambda: True  # type: ignore[method-assign]  # the file is not locked here
    return source, finished


def member_of(match: StoredMatch) -> bytes:
    """A stored match's record as the tournament wrote it: one gzip member of a records file."""
    assert match.record_path is not None and match.record_span is not None
    return read_span(match.record_path, *match.record_span)


def compact_lines(match: StoredMatch) -> list[bytes]:
    """A stored match's record lines as written (compact, SPEC 8), without their newlines."""
    return zlib.decompress(member_of(match), 16 + zlib.MAX_WBITS).splitlines()


def go_on(writer: RecordWriter, lines: list[bytes]) -> RecordWriter:
    """A record written on by these lines, as the referee does: kept, then flushed to a gzip
    sync point (the member stays unfinished until the writer is closed)."""
    writer.entries.extend(msgspec.Raw(line) for line in lines)
    writer.flush()
    return writer


def own_record(records: Path, match: StoredMatch, lines: list[bytes]) -> Path:
    """A running match's record in a file of its own, as an older arena wrote it."""
    path = records / (match.match_id.replace("/", "_") + "-0123456789ab.jsonl.gz")
    gzip = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
    data = b"".join(line + b"\n" for line in lines)
    path.write_bytes(gzip.compress(data) + gzip.flush(zlib.Z_SYNC_FLUSH))
    return path


async def test_the_pages_data_matches_the_results_file(played: Path) -> None:
    source, store = source_of(played)
    with store:
        expected = standings_as_data(
            compute_standings(
                store.matches(include_aborted=True),
                [b["name"] for b in store.definition()["bots"]],
                [g["label"] for g in store.definition()["games"]],
            )
        )
        async with trio.open_nursery() as nursery:
            url = await nursery.start(server.serve_tournament, source, "127.0.0.1", 0)
            status, summary = await fetch(url + "api/summary")
            assert status == 200 and summary["exact"]
            assert summary["standings"] == json.loads(json.dumps(expected))
            assert summary["progress"]["completed"] == summary["progress"]["total"] == 16
            assert any(f["bot"] == "illegal" for f in summary["faults"])

            status, page = await trio.to_thread.run_sync(get, url)
            assert status == 200 and b"/static/app.js" in page
            status, script = await trio.to_thread.run_sync(get, url + "static/app.js")
            assert status == 200 and b"EventSource" in script

            status, bot = await fetch(url + "api/bot?name=illegal")
            assert status == 200 and bot["fault_count"] == 48

            status, answer = await fetch(url + "api/compare")  # not a comparison's file
            assert status == 404 and "is not a comparison" in answer["error"]
            assert summary["compare"] is False
            assert {f["kind"] for f in bot["faults"]} == {"illegal"}
            assert bot["worst"] and bot["times"]["count"] > 0

            match_id = summary["latest"][0]["match_id"]
            status, match = await fetch(
                url + "api/match?" + urllib.parse.urlencode({"id": match_id, "seat": 2})
            )
            assert status == 200 and match["seat"] == 2 and match["frames"]
            status, missing = await fetch(url + "api/match?id=nope")
            assert status == 404 and "no match 'nope'" in missing["error"]
            status, bad = await fetch(
                url + "api/match?" + urllib.parse.urlencode({"id": match_id, "seat": "x"})
            )
            assert status == 400 and "seat" in bad["error"]

            game, table, deal = match_id.split("/")[0], 0, 0
            status, dup = await fetch(url + f"api/deal?game={game}&table={table}&deal={deal}")
            assert status == 200 and len(dup["seats"][0]["rotations"]) == 4
            # The same cards sit in one seat in every rotation; every bot holds them once.
            assert len({r["bot"] for r in dup["seats"][0]["rotations"]}) == 4

            request = urllib.request.Request(url + "api/summary", method="POST")
            with pytest.raises(urllib.error.HTTPError, match="405"):
                await trio.to_thread.run_sync(lambda: urllib.request.urlopen(request, timeout=10))
            nursery.cancel_scope.cancel()


async def test_the_event_stream_sends_a_summary_as_matches_arrive(played: Path) -> None:
    store = ResultStore.open_read(played)
    all_matches = store.matches(include_aborted=True)
    store.close()
    source = TournamentSource(played, name="webtest", definition={"bots": [], "games": []})
    source.load(all_matches[:5])
    async with trio.open_nursery() as nursery:
        url = await nursery.start(server.serve_tournament, source, "127.0.0.1", 0)
        received: list[dict] = []
        first_summary = trio.Event()

        def listen() -> None:
            with urllib.request.urlopen(url + "api/stream", timeout=20) as response:
                event = None
                for raw in response:
                    line = raw.decode().rstrip("\n")
                    if line.startswith("event: "):
                        event = line[7:]
                    elif line.startswith("data: ") and event == "summary":
                        received.append(json.loads(line[6:]))
                        if len(received) == 1:
                            trio.from_thread.run_sync(first_summary.set)
                        if len(received) == 2:
                            return

        async def feed() -> None:
            await first_summary.wait()  # the stream is open and has sent what it had
            source.add(all_matches[5])

        nursery.start_soon(feed)
        await trio.to_thread.run_sync(listen)
        assert received[0]["progress"]["completed"] == 5
        assert received[1]["progress"]["completed"] == 6
        nursery.cancel_scope.cancel()


def test_serve_prints_its_url_and_bad_files_are_one_line(played: Path, tmp_path: Path) -> None:
    bad = tmp_path / "nothing.sqlite"
    run = subprocess.run(
        [sys.executable, "-m", "arena", "serve", str(bad)],
        cwd=ROOT,
        env=arena_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert run.stderr.strip().splitlines()[-1].endswith(f"{bad}: no such results file")
    assert "Traceback" not in run.stderr
    # A results file damaged where its matches are (their table's first page overwritten): it
    # opens, and the first read of its matches is one line (it was a traceback).
    damaged = bytearray(played.read_bytes())
    page = 4096
    damaged[3 * page : 4 * page] = b"A" * page  # (page 4: the matches table's root)
    (tmp_path / "damaged.sqlite").write_bytes(damaged)
    run = subprocess.run(
        [sys.executable, "-m", "arena", "serve", str(tmp_path / "damaged.sqlite"), "--port", "0"],
        cwd=ROOT,
        env=arena_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert run.stderr.strip().splitlines() == [
        f"Error: {tmp_path / 'damaged.sqlite'}: cannot read its matches (database disk image is "
        "malformed): the file is damaged; it was not changed"
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", str(played), "--port", "0"],
        cwd=ROOT,
        env=arena_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("watch it at http://127.0.0.1:")
        url = line.split()[3]
        status, body = get(url + "api/summary")
        assert status == 200 and json.loads(body)["name"] == "webtest"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_web_server_stays_off_the_referee_import_path() -> None:
    code = (
        "import sys, arena.cli, arena.referee.match, arena.tournament.runner; "
        "loaded = [m for m in ('starlette', 'hypercorn', 'arena.web.server') if m in sys.modules]; "
        "print(loaded); sys.exit(1 if loaded else 0)"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=arena_env(), capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout


async def test_a_running_match_is_followed_as_its_record_grows(
    played: Path, tmp_path: Path
) -> None:
    source, (finished,) = source_without(played, "all-fours")
    lines = compact_lines(finished)
    records = tmp_path / "records"
    records.mkdir()
    file = RecordShelf(records).take()
    file.append(member_of(stored_matches(played)[0]))  # a finished match's record first
    writer = go_on(RecordWriter(file), lines[:20])
    source.records_dir = records
    secret = "the-organisers-secret-0123456789"
    async with trio.open_nursery() as nursery:
        url = await nursery.start(
            partial(server.serve_tournament, access=Access(secret, source.bots)),
            source,
            "127.0.0.1",
            0,
        )
        # seat 3's bot's owner watches it play (with its token)
        query = urllib.parse.urlencode(
            {"id": finished.match_id, "seat": 3, "token": bot_token(secret, finished.bots[3])}
        )
        frames: list[int] = []

        def listen() -> None:
            with urllib.request.urlopen(url + "api/match/stream?" + query, timeout=20) as stream:
                event = None
                for raw in stream:
                    line = raw.decode().rstrip("\n")
                    if line.startswith("event: "):
                        event = line[7:]
                    elif line.startswith("data: ") and event == "match":
                        data = json.loads(line[6:])
                        assert data["seat"] == 3 and data["running"]
                        frames.append(len(data["frames"]))
                        if len(frames) == 1:
                            go_on(writer, lines[20:-1])  # the match goes on
                        else:
                            return

        await trio.to_thread.run_sync(listen)
        assert frames[1] > frames[0] > 1
        nursery.cancel_scope.cancel()
    file.close()
