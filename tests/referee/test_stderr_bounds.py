"""What a bot's standard error may cost the organiser (issue 35): a full disk under the logs costs
the logs only, said once; a bot's logs are bounded over all its processes; and what it writes
reaches the organiser's terminal escaped, wherever it is printed.

Real bot processes (tests/bots/probe_bot.py, stderr_flood_bot.py) and, for the full disk and
the terminal, the real ``arena`` command.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_bot_process import AON, CONTROL, close_all, random_spec, start_all

from arena.referee import stderr_log
from arena.referee.bot_spec import BotSpec
from arena.referee.match import run_match
from arena.referee.process import BotProcess, BotStartupError
from arena.referee.results import FaultKind

BOTS = Path(__file__).resolve().parents[1] / "bots"
ROOT = BOTS.parents[1]
# What a hostile bot writes to stderr: clear the screen, retitle the window, go back to the line's
# start, and reverse what follows.
ESCAPES = "\\x1b[2J\\x1b]0;owned\\x07\\rfake line\\u202egnirts"
# As the organiser sees it (a carriage return ends a line, as in a terminal: its lines are joined)
SHOWN = "\\x1b[2J\\x1b]0;owned\\x07 | fake line\\u202egnirts"


def probe(mode: str, text: str, name: str = "probe") -> BotSpec:
    return BotSpec(name, (sys.executable, str(BOTS / "probe_bot.py"), mode, text), cwd=str(BOTS))


def flood(name: str) -> BotSpec:
    return BotSpec(name, (sys.executable, str(BOTS / "stderr_flood_bot.py")), cwd=str(BOTS))


# -- a full disk ------------------------------------------------------------------------------------


async def test_a_log_that_cannot_be_written_costs_the_logs_not_the_match(
    tmp_path, monkeypatch, capsys
):
    """Every log "on a full disk" (/dev/full: each write fails with ENOSPC): the matches end as
    they would, the crash still quotes the bot's last stderr line, and the arena says once that
    the logs are not written."""
    monkeypatch.setattr(stderr_log, "open_log", lambda path: os.open("/dev/full", os.O_WRONLY))
    monkeypatch.setattr(stderr_log, "_said", set())
    specs = [probe("crash", "about to fall"), flood("flood"), random_spec("r")]
    bots = await start_all(specs, tmp_path)
    try:
        result = await run_match(AON, bots, seed=1, match_id="m1", time_control=CONTROL)
    finally:
        await close_all(bots)
    (crash,) = [f for f in result.faults if f.seat == 0]
    assert crash.kind == FaultKind.CRASH and "about to fall" in crash.message
    assert [f for f in result.faults if f.seat != 0] == []
    said = capsys.readouterr().err.splitlines()
    assert said == [
        f"arena: bot stderr logs in {tmp_path / 'logs'} are no longer written (No space left on "
        "device); the matches go on without them"
    ]


def mount_tiny_logs(logs: Path):
    """A preexec_fn: the child in a mount namespace of its own, ``logs`` a 64 KiB tmpfs."""
    libc = ctypes.CDLL(None, use_errno=True)

    def preexec() -> None:
        if libc.unshare(0x00020000) != 0 or libc.mount(None, b"/", None, 0x4000 | 0x40000, None):
            os._exit(97)
        logs.mkdir(parents=True, exist_ok=True)
        if libc.mount(b"tmpfs", bytes(logs), b"tmpfs", 0, b"size=64k") != 0:
            os._exit(98)

    return preexec


@pytest.mark.skipif(os.geteuid() != 0, reason="making a small file system for the logs needs root")
def test_a_full_disk_under_the_logs_is_said_once_and_the_tournament_finishes(tmp_path):
    """The real thing: ``arena tournament`` whose logs folder is a 64 KiB file system, filled
    by a bot that writes 256 KB to stderr with every answer (it was a TrioInternalError)."""
    output = tmp_path / "out"
    bots = "".join(
        f'[[bots]]\nname = "{name}"\nargv = ["{sys.executable}", "{BOTS / script}", "{seed}"]\n'
        f'cwd = "{BOTS}"\n'
        for name, script, seed in (
            ("flood", "stderr_flood_bot.py", 0),
            ("r1", "random_bot.py", 1),
            ("r2", "random_bot.py", 2),
        )
    )
    path = tmp_path / "full.toml"
    path.write_text(
        f'name = "full"\nconcurrency = 1\noutput = "{output}"\nresults = "{tmp_path / "r.sqlite"}"\n'
        '[[games]]\ngame = "aon"\nplayers = 3\ndeals = 2\n\n' + bots
    )
    done = subprocess.run(
        [sys.executable, "-m", "arena", "tournament", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=mount_tiny_logs(output / "logs"),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "TrioInternalError" not in done.stderr
    said = [line for line in done.stderr.splitlines() if "are no longer written" in line]
    assert said == [
        f"arena: bot stderr logs in {output / 'logs'} are no longer written (No space left on "
        "device); the matches go on without them"
    ], done.stderr
    assert "done: 6 played" in done.stdout


# -- a bound over all of a bot's processes ------------------------------------------------------------


async def test_a_bots_logs_are_bounded_over_all_its_processes(tmp_path, monkeypatch):
    """A bot that floods stderr and is started again and again (a crash in every match does
    that): its logs in the folder stop at the bound, the one that reached it says so, and the
    later processes get no log at all; another bot's logs are not counted with them."""
    monkeypatch.setattr(stderr_log, "PROCESS_CAP_BYTES", 300_000)
    monkeypatch.setattr(stderr_log, "BOT_CAP_BYTES", 700_000)
    logs = tmp_path / "logs"
    for _ in range(4):
        bots = await start_all([flood("flood"), random_spec("r1"), random_spec("r2")], tmp_path)
        try:
            await run_match(AON, bots, seed=1, match_id="m", time_control=CONTROL)
        finally:
            await close_all(bots)
    sizes = sorted(
        (path.stat().st_mtime_ns, path.stat().st_size, path)
        for path in logs.glob("flood-*.stderr.log")
    )
    assert len(sizes) == 3  # 300 kB, 300 kB, then the 100 kB left; the fourth gets none
    total = sum(size for _, size, _ in sizes)
    assert 700_000 - 3 * stderr_log.NOTE_ROOM <= total <= 700_000
    last = sizes[-1][2].read_text()
    assert "this bot's stderr logs in this folder reached 700000 bytes" in last[-300:]
    assert "stderr capped at 300000 bytes" in sizes[0][2].read_text()[-300:]
    assert (logs / f"flood{stderr_log.LEDGER_SUFFIX}").read_text().strip() == str(total)


def test_the_ledger_is_shared_by_every_arena_process(tmp_path):
    """Two arena processes (a tournament's workers) writing logs of one bot in one folder share
    its bound: what one reserved, the other cannot."""
    ledger = stderr_log.Ledger(tmp_path / "b.stderr-total", cap=1000)
    assert ledger.reserve(600) == 600
    other = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from arena.referee.stderr_log import Ledger; "
            "print(Ledger(Path(sys.argv[1]), cap=1000).reserve(600))",
            str(tmp_path / "b.stderr-total"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert other.stdout.strip() == "400"
    ledger.give_back(500)
    assert ledger.reserve(1000) == 500


# -- the organiser's terminal ---------------------------------------------------------------------------


async def test_a_crash_quotes_the_bots_stderr_escaped(tmp_path):
    bots = await start_all(
        [probe("crash", ESCAPES), random_spec("r1"), random_spec("r2")], tmp_path
    )
    try:
        result = await run_match(AON, bots, seed=1, match_id="m", time_control=CONTROL)
    finally:
        await close_all(bots)
    (crash,) = result.faults
    assert SHOWN in crash.message
    assert not any(ch in crash.message for ch in "\x1b\x07\r\u202e")


async def test_a_preflight_line_quotes_the_bots_stderr_escaped(tmp_path):
    with pytest.raises(BotStartupError) as error:
        await BotProcess.start(probe("quit", ESCAPES), time_control=CONTROL, log_dir=tmp_path)
    said = f"{error.value} {getattr(error.value, 'stderr_tail', '')}"
    assert SHOWN in said and "\x1b" not in said


def run_arena(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


@pytest.mark.parametrize("command", ["tournament preflight", "match", "check"])
def test_the_arena_prints_a_bots_stderr_escaped(tmp_path, command):
    """Nothing a bot writes to stderr reaches the organiser's terminal as a control sequence:
    not in a crash fault, a preflight line or arena check's scorecard."""
    crasher = f"{sys.executable} {BOTS / 'probe_bot.py'} crash '{ESCAPES}'"
    quitter = f"{sys.executable} {BOTS / 'probe_bot.py'} quit '{ESCAPES}'"
    honest = f"{sys.executable} {BOTS / 'random_bot.py'}"
    if command == "match":
        done = run_arena(
            "match", "aon", "--bot", crasher, "--bot", honest, "--bot", honest, cwd=tmp_path
        )
    elif command == "check":
        done = run_arena(
            "check",
            "--only",
            "decisions",
            "--",
            sys.executable,
            str(BOTS / "probe_bot.py"),
            "crash",
            ESCAPES,
            cwd=tmp_path,
        )
    else:
        done = run_arena(
            "tournament",
            "--bot",
            f"q={quitter}",
            "--bot",
            f"h={honest}",
            "--deals",
            "1",
            cwd=tmp_path,
        )
    shown = done.stdout + done.stderr
    assert "\\x1b[2J" in shown, shown[-3000:]
    assert not any(ch in shown for ch in "\x1b\x07\r\u202e"), repr(shown[-3000:])
