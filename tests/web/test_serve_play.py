"""``arena serve T.toml --allow-play`` on loopback (SPEC.md 11): a person's match started from the
tournament's server against its bots, answered over the page's endpoints and recorded into
``played/`` beside the results (never into them); refused without --allow-play, without the
action header and past --play-limit; its bots' processes gone once the page is closed and once
the server stops."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import urllib.request
import uuid
from pathlib import Path

import pytest

from arena.referee.record import read_record
from tests.waiting import wait_for
from tests.web.conftest import ROOT, arena_env
from tests.web.test_play_server import call

pytest.importorskip("arena.web.server", reason="the web extra is not installed")

PLAY = {"X-Arena-Play": "1", "Content-Type": "application/json"}


def play_toml(played: Path, mark: str) -> Path:
    """The web tests' tournament (its results file) with two bots whose processes carry
    ``mark`` in their environment, one that exits at once, and one game of three seats."""
    out = played.parent
    path = out.parent / f"play-{mark}.toml"
    path.write_text(
        f"""
name = "webtest"
output = "{out}"

[time]
decision_ms = 2000

[[bots]]
name = "random-py"
argv = ["{sys.executable}", "sample_bots/python/random_bot.py", "2"]
cwd = "{ROOT}"
env = {{ ARENA_TEST_MARK = "{mark}" }}

[[bots]]
name = "first-legal"
argv = ["{sys.executable}", "tests/bots/first_legal_bot.py"]
cwd = "{ROOT}"
env = {{ ARENA_TEST_MARK = "{mark}" }}

[[bots]]
name = "exits"
argv = ["{sys.executable}", "tests/bots/exit_at_once_bot.py"]
cwd = "{ROOT}"

[[games]]
game = "eight-rounds"
players = 3
"""
    )
    return path


def serve(toml: Path, *extra: str, secret: str | None = None) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", str(toml), "--port", "0", *extra],
        cwd=ROOT,
        env={**arena_env(), **({"ARENA_WEB_SECRET": secret} if secret else {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        found = re.search(r"watch it at (http://\S+)", line)
        if found:
            threading.Thread(target=process.stdout.read, daemon=True).start()
            return process, found[1]
    process.wait()
    raise AssertionError(f"arena serve printed no address (exit {process.returncode})")


def marked(mark: str) -> list[int]:
    """The processes whose environment holds ``mark``: the bot's, wherever its seal put them."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if mark.encode() in environ.read_bytes():
                found.append(int(environ.parent.name))
        except OSError:
            pass  # (gone meanwhile, or not ours to read)
    return found


def first_request(url: str) -> dict:
    """Follow the seat's stream until its first request; the stream is closed after it."""
    with urllib.request.urlopen(url + "api/play/stream", timeout=60) as stream:
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("data: "):
                message = json.loads(line[6:])
                if message["type"] == "request":
                    return message
    raise AssertionError("the stream ended without a request")


def test_without_allow_play_no_match_can_be_started(played: Path) -> None:
    process, url = serve(play_toml(played, uuid.uuid4().hex))
    try:
        status, offer = call(url + "api/play")
        assert status == 200 and offer["games"] == [] and "--allow-play" in offer["refused"]
        status, body = call(url + "api/play/start", {"game": "eight-rounds"}, PLAY)
        assert status == 403 and "--allow-play" in body["error"]
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0


def test_a_person_plays_from_serve_and_the_bots_end_with_the_page(played: Path) -> None:
    mark = uuid.uuid4().hex
    folder = played.parent / "played"
    before = set(folder.glob("*.jsonl")) if folder.exists() else set()
    results_before = played.stat().st_size
    process, url = serve(play_toml(played, mark), "--allow-play", "--play-limit", "1")
    try:
        status, offer = call(url + "api/play")
        assert status == 200 and offer["games"] == ["eight-rounds"]
        assert offer["bots"] == ["random-py", "first-legal", "exits"]
        start = url + "api/play/start"
        against = {"game": "eight-rounds", "against": "random-py"}
        assert call(start, against, {"Content-Type": "application/json"})[0] == 403  # no header
        assert call(start, {"game": "nine-rounds"}, PLAY)[0] == 404
        status, started = call(start, against, PLAY)
        assert status == 200, started
        table = url + started["url"].lstrip("/")
        status, body = call(start, against, PLAY)  # past --play-limit 1
        assert status == 429 and "--play-limit" in body["error"]

        request = first_request(table)
        wait_for("the bot's two processes", lambda: len(marked(mark)) >= 2)
        status, body = call(
            table + "api/play/action", {"id": request["id"], "action": request["legal"][0]}, PLAY
        )
        assert status == 200, body
        # The page is closed (no stream follows the seat): the match stops, its bots end.
        wait_for("the bots to end after the page closed", lambda: not marked(mark))
        wait_for("the record", lambda: set(folder.glob("*.jsonl")) - before)
        (record,) = set(folder.glob("*.jsonl")) - before
        entries = read_record(record)
        assert entries[-1]["type"] == "stopped"
        assert entries[-1]["reason"] == "the person left the page"
        mine = [e for e in entries if e["type"] == "action" and e["seat"] == 0]
        assert mine[0]["action"] == request["legal"][0]

        # The limit is free again; a match still being played ends with the server.
        status, started = call(start, {"game": "eight-rounds", "against": "first-legal"}, PLAY)
        assert status == 200, started
        first_request(url + started["url"].lstrip("/"))
        assert marked(mark)
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
    assert not marked(mark)
    assert played.stat().st_size == results_before  # nothing went into the results file


def test_a_bot_that_cannot_start_is_told_to_the_page_and_frees_its_place(played: Path) -> None:
    process, url = serve(play_toml(played, uuid.uuid4().hex), "--allow-play", "--play-limit", "1")
    try:
        start = url + "api/play/start"
        for _ in range(2):  # (the first one's place is free again)
            status, started = call(start, {"game": "eight-rounds", "against": "exits"}, PLAY)
            assert status == 200, started
            stream = url + started["url"].lstrip("/") + "api/play/stream"
            with urllib.request.urlopen(stream, timeout=60) as answer:
                line = next(raw for raw in answer if raw.startswith(b"data: "))
            error = json.loads(line[6:])
            assert error["type"] == "error" and "bot exits" in error["message"], error
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0


def test_with_organiser_only_the_organisers_token_may_play(played: Path) -> None:
    secret = uuid.uuid4().hex
    process, url = serve(play_toml(played, secret), "--allow-play", "--organiser", secret=secret)
    try:
        status, offer = call(url + "api/play")
        assert status == 200 and offer["games"] == [] and "organiser" in offer["refused"]
        start = url + "api/play/start"
        status, body = call(start, {"game": "nine-rounds"}, PLAY)
        assert status == 403 and "organiser's token" in body["error"]
        organiser = {**PLAY, "Authorization": f"Bearer {secret}"}
        assert call(url + "api/play", headers=organiser)[1]["games"] == ["eight-rounds"]
        assert call(start, {"game": "nine-rounds"}, organiser)[0] == 404  # (let in, no game)
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["RESULTS", "--allow-play"], "--allow-play: expected the tournament file"),
        (["TOML", "--allow-play", "--host", "0.0.0.0"], "add --organiser"),
        (["TOML", "--allow-play", "--play-limit", "0"], "--play-limit"),
    ],
)
def test_allow_play_refuses_what_it_cannot_serve_safely(played: Path, args, expected) -> None:  # type: ignore[no-untyped-def]
    toml = play_toml(played, uuid.uuid4().hex)
    given = [{"RESULTS": str(played), "TOML": str(toml)}.get(a, a) for a in args]
    done = subprocess.run(
        [sys.executable, "-m", "arena", "serve", *given, "--port", "0"],
        cwd=ROOT,
        env=arena_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]  # (a usage error has click's usage above it)
    assert last.startswith("Error: ") and expected in last and "Traceback" not in done.stderr
