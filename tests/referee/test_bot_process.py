"""Real bot processes: limits, environment, cleanup of whole process trees, flooding, the sandbox.

Timeouts here are generous (seconds) and no assertion depends on speed.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest
import trio
from sandbox_support import needs_bwrap

from arena.games import find_game
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.process import (
    STDERR_CAP_BYTES,
    BotProcess,
    BotStartupError,
    process_running,
    related_pids,
)
from arena.referee.record import replay_record
from arena.referee.results import FaultKind

RANDOM_BOT = Path(__file__).resolve().parents[1] / "bots" / "random_bot.py"
AON = find_game("alles-oder-nichts")
CONTROL = TimeControl(decision_ms=5000, margin_ms=100, startup_ms=20000)

# The head of every scripted bot: say ready, then answer requests with `answer(request)`.
BOT_HEAD = """
import json, os, sys
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()
def messages():
    for line in sys.stdin:
        yield json.loads(line)
"""


def script(tmp_path: Path, name: str, body: str) -> tuple[str, ...]:
    path = tmp_path / f"{name}.py"
    path.write_text(BOT_HEAD + textwrap.dedent(body))
    return (sys.executable, str(path))


def random_spec(name: str, seed: int = 0) -> BotSpec:
    return BotSpec(name, (sys.executable, str(RANDOM_BOT), str(seed)))


async def start_all(specs, tmp_path, control=CONTROL):
    return [
        await BotProcess.start(spec, time_control=control, log_dir=tmp_path / "logs")
        for spec in specs
    ]


async def close_all(bots):
    for bot in bots:
        await bot.close()


async def match_against_random_bots(tmp_path, spec, control=CONTROL):
    """Seat 0 is ``spec``, seats 1 and 2 honest random bots; returns (result, the BotProcesses)."""
    bots = await start_all([spec, random_spec("r1"), random_spec("r2")], tmp_path, control)
    try:
        result = await run_match(AON, bots, seed=1, match_id=spec.name, time_control=control)
    finally:
        await close_all(bots)
    return result, bots


async def test_a_real_match_between_random_bots(tmp_path):
    bots = await start_all([random_spec(f"r{i}", i) for i in range(3)], tmp_path)
    pids = [bot.transport.pid for bot in bots]
    try:
        assert [bot.version for bot in bots] == ["1", "1", "1"]
        result = await run_match(
            AON,
            bots,
            seed=42,
            match_id="real",
            time_control=CONTROL,
            record_path=tmp_path / "m.jsonl",
        )
        again = await run_match(AON, bots, seed=43, match_id="real2", time_control=CONTROL)
    finally:
        await close_all(bots)
    assert result.faults == () and again.faults == ()
    assert replay_record(tmp_path / "m.jsonl").state.result().scores == result.scores
    assert all(len(times) > 10 for times in result.decision_ms)
    assert not any(process_running(pid) for pid in pids)


async def test_environment_limits_and_session(tmp_path):
    body = """
    import resource
    for message in messages():
        if message["type"] == "hello":
            home, tmp = os.environ["HOME"], os.environ["TMPDIR"]
            open(os.path.join(tmp, "scratch"), "w").write("ok")
            report = {"env": sorted(os.environ), "cwd": os.getcwd(), "sid": os.getsid(0),
                      "pgid": os.getpgid(0), "pid": os.getpid(), "home": home,
                      "limits": {n: resource.getrlimit(getattr(resource, n))[0]
                                 for n in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_CORE")},
                      "extra": os.environ.get("EXTRA"), "hello": message}
            send({"type": "ready", "name": "env", "version": json.dumps(report)})
    """
    workdir = tmp_path / "botdir"
    workdir.mkdir()
    os.environ["ARENA_TEST_SECRET"] = "must not leak"
    try:
        spec = BotSpec(
            "env",
            script(tmp_path, "env", body),
            cwd=str(workdir),
            env=(("EXTRA", "yes"),),
            memory_mb=1024,
            cpu_seconds=30,
            file_mb=2,
        )
        [bot] = await start_all([spec], tmp_path)
    finally:
        del os.environ["ARENA_TEST_SECRET"]
    try:
        report = json.loads(bot.reported_version)
    finally:
        await bot.close()
    assert set(report["env"]) - {"LC_CTYPE"} == {
        "PATH",
        "LANG",
        "HOME",
        "TMPDIR",
        "EXTRA",
        "ARENA_BOT_TOKEN",
    }
    assert report["extra"] == "yes" and report["cwd"] == str(workdir)
    assert report["sid"] == report["pgid"] == report["pid"]
    assert report["limits"] == {
        "RLIMIT_AS": 1024 << 20,
        "RLIMIT_CPU": 30,
        "RLIMIT_FSIZE": 2 << 20,
        "RLIMIT_CORE": 0,
    }
    assert report["hello"]["name"] == "env" and report["hello"]["protocol"] == 1
    assert report["hello"]["limits"]["decision_ms"] == CONTROL.decision_ms
    assert not Path(report["home"]).exists()  # the private directory is removed on close


async def test_close_kills_children_that_linger_and_ignore_signals(tmp_path):
    body = """
    import signal, subprocess, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen([sys.executable, "-c", "import time, signal; "
                              "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
    escaped = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                               start_new_session=True)
    for message in messages():
        if message["type"] == "hello":
            send({"type": "ready", "name": "linger", "version": f"{child.pid} {escaped.pid}"})
    time.sleep(600)            # ignores bye and the end of its input
    """
    [bot] = await start_all([BotSpec("linger", script(tmp_path, "linger", body))], tmp_path)
    pids = [bot.transport.pid, *map(int, bot.reported_version.split())]
    assert all(process_running(pid) for pid in pids)
    with trio.fail_after(30):
        await bot.close()
    assert not any(process_running(pid) for pid in pids)
    assert not related_pids(pids[0])


async def test_close_runs_even_when_the_task_is_cancelled(tmp_path):
    [bot] = await start_all([random_spec("r")], tmp_path)
    pid = bot.transport.pid
    with trio.CancelScope() as scope:
        scope.cancel()
        try:
            await trio.sleep(1)
        finally:
            await bot.close()  # shielded inside: still ends the process
    assert not process_running(pid)


async def test_stderr_flood_is_capped_and_never_blocks(tmp_path):
    body = """
    for message in messages():
        if message["type"] == "hello":
            send({"type": "ready", "name": "noisy"})
        elif message["type"] == "request":
            sys.stderr.write("e" * 300_000 + "\\n"); sys.stderr.flush()
            send({"type": "action", "id": message["id"], "action": message["legal"][0]})
    """
    noisy = BotSpec("noisy", script(tmp_path, "noisy", body))
    result, bots = await match_against_random_bots(tmp_path, noisy)
    assert result.faults == ()
    log = bots[0].log_path
    assert log is not None and log.exists()
    assert STDERR_CAP_BYTES < log.stat().st_size < STDERR_CAP_BYTES + 200
    assert "stderr capped" in log.read_text()[-200:]
    assert bots[0].transport.stderr_bytes > 10 * STDERR_CAP_BYTES


async def test_endless_stdout_line_is_malformed_and_the_match_finishes(tmp_path):
    body = """
    for message in messages():
        if message["type"] == "hello":
            send({"type": "ready", "name": "flood"})
        elif message["type"] == "request":
            chunk = "x" * 65536
            while True:
                sys.stdout.write(chunk)
    """
    control = TimeControl(decision_ms=500, margin_ms=50, startup_ms=20000)
    flood = BotSpec("flood", script(tmp_path, "flood", body))
    result, _ = await match_against_random_bots(tmp_path, flood, control)
    assert result.faults[0].kind is FaultKind.MALFORMED
    assert "longer than 1048576 bytes" in result.faults[0].message
    assert result.forfeited == (0,) and len(result.faults) == 3
    assert {f.seat for f in result.faults} == {0}


async def test_memory_hog_hits_its_limit_and_crashes(tmp_path):
    body = """
    hoard = []
    for message in messages():
        if message["type"] == "hello":
            send({"type": "ready", "name": "hog"})
        elif message["type"] == "request":
            while True:
                hoard.append(bytearray(50 << 20))
    """
    hog = BotSpec("hog", script(tmp_path, "hog", body), memory_mb=300)
    result, _ = await match_against_random_bots(tmp_path, hog)
    assert [(f.seat, f.kind) for f in result.faults] == [(0, FaultKind.CRASH)]
    assert "MemoryError" in result.faults[0].message or "status 1" in result.faults[0].message
    assert result.forfeited == (0,)


async def test_closing_stdout_while_running_is_a_crash(tmp_path):
    body = """
    import time
    for message in messages():
        if message["type"] == "hello":
            send({"type": "ready", "name": "shut"})
        elif message["type"] == "request":
            os.close(1)
            time.sleep(600)
    """
    shut = BotSpec("shut", script(tmp_path, "shut", body))
    result, bots = await match_against_random_bots(tmp_path, shut)
    assert [f.kind for f in result.faults] == [FaultKind.CRASH]
    assert "closed its output" in result.faults[0].message
    assert not process_running(bots[0].transport.pid)


async def test_startup_errors_name_the_bot(tmp_path):
    with pytest.raises(BotStartupError, match=r"^bot ghost: cannot run 'no-such-program-xyz': "):
        await start_all([BotSpec("ghost", ("no-such-program-xyz",))], tmp_path)
    quitter = BotSpec(
        "quitter", (sys.executable, "-c", "import sys; print('bye', file=sys.stderr)")
    )
    with pytest.raises(
        BotStartupError,
        match=r"^bot quitter: ended before saying ready: exited "
        r"with status 0 \(stderr: bye\)",
    ):
        await start_all([quitter], tmp_path)
    lost = BotSpec("lost", ("true",), cwd=str(tmp_path / "nowhere"))
    with pytest.raises(BotStartupError, match=r"^bot lost: working directory .*nowhere does not"):
        await start_all([lost], tmp_path)


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
async def test_node_starts_under_the_default_limits(tmp_path):
    js = (
        "require('readline').createInterface({input: process.stdin}).on('line', l => {"
        "const m = JSON.parse(l); if (m.type === 'hello') console.log(JSON.stringify("
        "{type: 'ready', name: 'js', version: process.version}));"
        "if (m.type === 'bye') process.exit(0); });"
    )
    [bot] = await start_all([BotSpec("js", ("node", "-e", js))], tmp_path)
    await bot.close()
    assert bot.reported_version.startswith("v")


@needs_bwrap
async def test_bwrap_sandbox(tmp_path):
    body = """
    import socket
    def attempt(action):
        try:
            action()
            return "allowed"
        except OSError as error:
            return type(error).__name__
    def connect():
        socket.create_connection(("1.1.1.1", 53), timeout=2).close()
    def write_own_folder():
        open("written-by-bot", "w").write("x")
    def write_system():
        open("/usr/arena-bot-test", "w").write("x")
    def write_tmp():
        open(os.path.join(os.environ["TMPDIR"], "scratch"), "w").write("x")
    for message in messages():
        if message["type"] == "hello":
            report = {"net": attempt(connect), "own": attempt(write_own_folder),
                      "system": attempt(write_system), "tmp": attempt(write_tmp), "pid": os.getpid()}
            send({"type": "ready", "name": "boxed", "version": json.dumps(report)})
    """
    folder = tmp_path / "bot"
    folder.mkdir()
    argv = script(folder, "boxed", body)
    [bot] = await start_all([BotSpec("boxed", argv, cwd=str(folder), sandbox="bwrap")], tmp_path)
    try:
        report = json.loads(bot.reported_version)
    finally:
        await bot.close()
    assert report["net"] != "allowed" and report["own"] != "allowed"
    assert report["system"] != "allowed" and report["tmp"] == "allowed"
    assert report["pid"] < 10  # its own PID namespace
    assert not (folder / "written-by-bot").exists()


async def test_bwrap_missing_is_one_clear_line(tmp_path, monkeypatch):
    from arena.referee import confine

    monkeypatch.setattr(confine, "BWRAP", "bwrap-not-installed-xyz")
    confine.forget_machine()
    try:
        with pytest.raises(
            BotStartupError,
            match=r"^bot b: sandbox 'bwrap': bubblewrap \(the `bwrap` program\) is not installed$",
        ):
            await start_all([BotSpec("b", ("true",), sandbox="bwrap")], tmp_path)
    finally:
        confine.forget_machine()  # looked at again with the real one later
