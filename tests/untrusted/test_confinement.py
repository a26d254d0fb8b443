"""What a bot process cannot do: outrun its CPU and file limits, reach the network or write outside
its tmp from the sandbox, or outlive the referee (closed, interrupted with Ctrl-C, or crashed).

tests/referee/test_bot_process.py checks the limits and the environment a bot is given; these
tests check that the limits bite, and that each sandbox probe also detects the forbidden thing when
the sandbox is off (so a probe that can never succeed cannot pass for a sandbox that works).
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
import trio
from sandbox_support import BWRAP, bwrap_problem

from arena.games import find_game
from arena.referee import confine
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.process import BotProcess, BotStartupError
from arena.referee.results import FaultKind

BOTS = Path(__file__).resolve().parent.parent / "bots"
ROOT = BOTS.parent.parent
sys.path.insert(0, str(BOTS))
from zoo_catalogue import HONEST, assert_none_survive, leftover_processes  # noqa: E402

GAME = find_game("alles-oder-nichts")
PR_GET_DUMPABLE = 3
SLOW = TimeControl(decision_ms=20000, margin_ms=100, startup_ms=20000)


def probe(*args: str, **spec_fields) -> BotSpec:
    return BotSpec("probe", (sys.executable, str(BOTS / "probe_bot.py"), *args), **spec_fields)


async def play_one_match(spec: BotSpec, tmp_path: Path, control: TimeControl = SLOW):
    mark = uuid.uuid4().hex
    specs = [spec, *(bot.spec(mark) for bot in HONEST)]
    bots = [await BotProcess.start(s, time_control=control, log_dir=tmp_path) for s in specs]
    try:
        return await run_match(GAME, bots, seed=3, match_id="limits", time_control=control)
    finally:
        for bot in bots:
            await bot.close()


async def test_the_cpu_limit_ends_a_spinning_bot(tmp_path):
    result = await play_one_match(probe("cpu", cpu_seconds=1), tmp_path)
    assert [(f.seat, f.kind) for f in result.faults] == [(0, FaultKind.CRASH)]
    assert "SIGXCPU" in result.faults[0].message or "SIGKILL" in result.faults[0].message
    assert result.forfeited == (0,)


async def test_the_file_size_limit_stops_a_filling_bot(tmp_path):
    result = await play_one_match(probe("file", file_mb=2), tmp_path)
    assert [(f.seat, f.kind) for f in result.faults] == [(0, FaultKind.CRASH)]
    # Python ignores SIGXFSZ, so the write fails with EFBIG instead of the signal killing it.
    message = result.faults[0].message
    assert "SIGXFSZ" in message or "File too large" in message, message


async def test_the_referee_is_not_dumpable_once_it_started_a_bot(tmp_path):
    bot = await BotProcess.start(
        probe("report", cwd=str(BOTS)), time_control=SLOW, log_dir=tmp_path
    )
    await bot.close()
    assert ctypes.CDLL(None).prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0


@pytest.mark.skipif(
    os.geteuid() == 0,
    reason="run as root, which reads any process's memory "
    "(CAP_SYS_PTRACE) whatever the referee does",
)
async def test_an_unsandboxed_bot_cannot_read_the_referees_memory(tmp_path):
    """Every hand is in the referee's memory; without the sandbox a bot runs as the same user."""
    report = await report_of(probe("report", cwd=str(BOTS)), tmp_path)
    assert report["parent_memory_readable"] is False


# -- the sandbox ---------------------------------------------------------------------------------


@pytest.fixture
def bwrap():
    # Sync, and through the shared mark's check: a skip raised inside an async (pytest-trio)
    # fixture loses its reason.
    if bwrap_problem():
        pytest.skip(bwrap_problem())


async def report_of(spec: BotSpec, tmp_path: Path) -> dict:
    bot = await BotProcess.start(spec, time_control=SLOW, log_dir=tmp_path / "logs")
    await bot.close()
    return json.loads(bot.reported_version)


@pytest.fixture
def listener():
    """A TCP server on the host's loopback: reachable from any unsandboxed process."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield server.getsockname()[1]
    server.close()


def bot_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "bot"
    shutil.copytree(BOTS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


async def test_the_sandbox_blocks_network_and_writes_outside_its_tmp(bwrap, tmp_path, listener):
    folder = bot_folder(tmp_path)
    outside = tmp_path / "outside"  # hidden under the sandbox's own /tmp
    outside.mkdir()
    # (/var/tmp is one of its own: tests/untrusted/test_attack.py writes there)
    targets = (str(folder), str(outside), "/etc", str(Path.home()))
    argv = (sys.executable, str(folder / "probe_bot.py"), "report", str(listener), *targets)
    # The control: unsealed the probe reaches all of it (we run as a user who may).
    free = await report_of(BotSpec("probe", argv, cwd=str(folder), sandbox="none"), tmp_path)
    assert free["network"] is True and free["reachable"][str(folder)] is True
    assert free["reachable"][str(outside)] is True

    boxed = await report_of(BotSpec("probe", argv, cwd=str(folder), sandbox="bwrap"), tmp_path)
    assert boxed["network"] is False, "the sandbox reached the host's loopback"
    assert not any(boxed["reachable"].values()), boxed["reachable"]
    assert boxed["tmpdir_writable"] is True
    assert boxed["env"]["HOME"].startswith("/tmp/") and boxed["env"]["TMPDIR"].startswith("/tmp/")
    assert boxed["cwd"] == str(folder)
    assert boxed["limits"]["RLIMIT_CORE"] == [0, 0]
    assert int(boxed["capabilities"], 16) == 0, "root's capabilities reached the sandbox"
    assert list(folder.glob("tmp*")) == [] and list(outside.iterdir()) == []


async def test_a_sandboxed_bot_without_a_folder_works_in_its_own_empty_tmp(bwrap, tmp_path):
    """No folder to bind: its working directory is its private /tmp, not the organiser's."""
    report = await report_of(probe("report", sandbox="bwrap"), tmp_path)
    # Only its own folders, and (when this checkout lives under /tmp) the way to its program.
    shown = {"home", "tmp"} | ({BOTS.parts[2]} if BOTS.parts[1] == "tmp" else set())
    assert report["cwd"] == "/tmp" and set(report["tmp_listing"]) == shown
    assert report["tmpdir_writable"] is True


@pytest.mark.parametrize("folder", ["/", "/tmp"])
async def test_a_sandboxed_bot_may_not_have_root_or_tmp_as_its_folder(bwrap, tmp_path, folder):
    with pytest.raises(BotStartupError, match=r"^bot probe: sandbox 'bwrap': the bot's folder"):
        await report_of(probe("report", cwd=folder, sandbox="bwrap"), tmp_path)


async def test_a_sandboxed_bot_outlives_the_worker_thread_that_started_it(
    bwrap, tmp_path, monkeypatch
):
    """trio starts processes from a worker thread, which retires when idle (after 10 s; 0.1 s
    here). A parent-death signal tied to that thread (bwrap --die-with-parent) would kill the bot."""
    import trio._core._thread_cache as thread_cache

    def trio_workers() -> list[str]:
        """This process's kernel tasks that are trio's idle worker threads (named by trio):
        a task's end, not the Python thread's, is what sends a parent-death signal."""
        names = []
        for task in Path("/proc/self/task").iterdir():
            try:
                names.append((task / "comm").read_text().strip())
            except OSError:  # (ended meanwhile)
                pass
        return [name for name in names if name.startswith("Trio thread")]

    monkeypatch.setattr(thread_cache, "IDLE_TIMEOUT", 0.1)
    bot = await BotProcess.start(
        probe("report", sandbox="bwrap"), time_control=SLOW, log_dir=tmp_path
    )
    try:
        # Every worker thread that could have started it retires; then it plays a whole match.
        with trio.fail_after(30):
            while trio_workers():
                await trio.sleep(0.05)
        mark = uuid.uuid4().hex
        others = [
            await BotProcess.start(bot_.spec(mark), time_control=SLOW, log_dir=tmp_path)
            for bot_ in HONEST
        ]
        try:
            result = await run_match(
                GAME, [bot, *others], seed=3, match_id="outlives", time_control=SLOW
            )
        finally:
            for other in others:
                await other.close()
        assert result.faults == (), result.faults
        assert bot.alive, f"the sandboxed bot died: {bot.exit_reason()}"
    finally:
        await bot.close()


async def test_the_sandbox_bounds_what_a_bot_can_store_in_memory_backed_folders(bwrap, tmp_path):
    """tmpfs is memory the address-space limit does not count: each writable one is bounded."""
    spec = BotSpec(
        "filler",
        (
            sys.executable,
            str(BOTS / "probe_bot.py"),
            "fill",
            "/tmp/tmp",
            "/dev/shm",
            "/dev",
            "/run",
        ),
        cwd=str(BOTS),
        sandbox="bwrap",
        file_mb=4,
    )
    stored = await report_of(spec, tmp_path)
    assert 8 <= stored["/tmp/tmp"] <= 16  # 4 x file_mb, less what the bot's files use
    assert 2 <= stored["/dev/shm"] <= 4
    assert stored["/dev"] == 0 and stored["/run"] == 0


@pytest.mark.parametrize("sandbox", [None, BWRAP])  # sealed by default, and in bubblewrap
async def test_the_seal_hides_service_sockets_under_run(tmp_path, sandbox):
    """Sockets under /run (D-Bus, Docker, systemd) would let a bot act outside its seal."""
    machine = confine.machine_seal()
    if sandbox is None and machine.method is None:
        pytest.skip(f"bots cannot be sealed here: {machine.why_not}")
    try:
        folder = Path("/run") / f"arena-test-{uuid.uuid4().hex[:8]}"
        folder.mkdir()
    except OSError as error:
        pytest.skip(f"cannot create a test socket under /run: {error.strerror}")
    path = str(folder / "service.sock")
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(path)
        server.listen(8)
        argv = (sys.executable, str(BOTS / "probe_bot.py"), "report", "0", path)
        free = await report_of(BotSpec("probe", argv, cwd=str(BOTS), sandbox="none"), tmp_path)
        boxed = await report_of(BotSpec("probe", argv, cwd=str(BOTS), sandbox=sandbox), tmp_path)
    finally:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)
    assert free["reachable"][path] is True
    assert boxed["reachable"][path] is False


def processes_running(argument: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and argument.encode() in (entry / "cmdline").read_bytes().split(
                b"\0"
            ):
                stat = (entry / "stat").read_text()
                if stat[stat.rindex(")") + 2] != "Z":
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


async def test_the_sandbox_ends_a_daemon_that_cleared_its_environment(bwrap, tmp_path):
    """No parent link, no session, no mark: only the sandbox's PID namespace still holds it."""
    tag = f"6000.{uuid.uuid4().int % 10**9}"  # `sleep 6000.xxx`: findable by its command line
    spec = BotSpec(
        "vanish",
        (sys.executable, str(BOTS / "forking_bot.py"), "vanish", tag),
        cwd=str(BOTS),
        sandbox="bwrap",
    )
    bot = await BotProcess.start(spec, time_control=SLOW, log_dir=tmp_path)
    try:
        assert processes_running(tag), "the daemon did not start"
    finally:
        await bot.close()
    await assert_none_survive(lambda: processes_running(tag), "the daemon outlived its sandbox")


# -- the referee goes away ----------------------------------------------------------------------

REFEREE = textwrap.dedent("""
    import signal, sys, trio
    # A shell without job control starts background jobs with SIGINT ignored, and children
    # inherit that: Ctrl-C must reach this referee however the test suite was started.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.path[:0] = [{root!r}, {bots!r}]
    from arena.referee.process import BotProcess
    from arena.referee.clock import TimeControl
    from arena.games import find_game
    from arena.referee.match import run_match
    from zoo_catalogue import ZOO

    CONTROL = TimeControl(decision_ms=60000, startup_ms=20000)
    NAMES = ("mute", "forking", "escaping-fork", "sigterm-ignoring")

    async def main(mark, how, sandbox):
        sandbox = sandbox or None
        bots = [await BotProcess.start(bot.spec(mark, sandbox=sandbox), time_control=CONTROL,
                                       log_dir={logs!r})
                for name in NAMES for bot in ZOO if bot.name == name]
        game = find_game("alles-oder-nichts")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: run_match(game, bots, seed=1, match_id="m",
                                                 time_control=CONTROL))
            await trio.sleep(0.3)
            print("playing", flush=True)
            if how == "crash":
                raise RuntimeError("the referee crashes mid-match")

    trio.run(main, *sys.argv[1:])
""")


@pytest.mark.parametrize("sandbox", ["", BWRAP])
@pytest.mark.parametrize("how", ["ctrl-c", "crash"])
async def test_no_bot_outlives_an_interrupted_or_crashed_referee(tmp_path, how, sandbox):
    mark = uuid.uuid4().hex
    code = REFEREE.format(root=str(ROOT), bots=str(BOTS), logs=str(tmp_path))
    referee = await trio.lowlevel.open_process(
        [sys.executable, "-c", code, mark, how, sandbox],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        with trio.fail_after(300):  # a hang guard: four bots start and stop on a loaded machine
            line = b""
            while not line.endswith(b"\n"):
                chunk = await referee.stdout.receive_some(100)
                assert chunk, "the referee script ended early: " + (
                    await referee.stderr.receive_some(10000)
                ).decode(errors="replace")
                line += chunk
            assert leftover_processes(mark), "no bot was running"
            if how == "ctrl-c":
                referee.send_signal(signal.SIGINT)
            await referee.wait()
    finally:
        referee.kill()
    expected = "KeyboardInterrupt" if how == "ctrl-c" else "the referee crashes mid-match"
    assert expected.encode() in await referee.stderr.receive_some(1 << 16)
    await assert_none_survive(lambda: leftover_processes(mark), "bots outlived the referee")
