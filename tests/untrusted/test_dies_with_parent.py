"""Bots die with the process that started them, and the arena process is not dumpable.

A referee process (a worker stand-in) starts a bot that ignores the end of its input, and is then
killed with SIGKILL: no close(), no atexit hook runs, and the bot's input never ends for it. The
parent-death signal set before exec kills the bot all the same.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import trio

from arena.referee.process import check_bwrap

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bots"))
from zoo_catalogue import assert_none_survive, leftover_processes

ROOT = Path(__file__).resolve().parents[2]
PR_GET_DUMPABLE = 3

REFEREE = """
import sys, trio
sys.path.insert(0, {bots!r})
from zoo_catalogue import BY_NAME, ZOO_TIME_CONTROL
from arena.referee.process import BotProcess

async def main():
    bot = await BotProcess.start(
        BY_NAME["deaf"].spec({mark!r}, sandbox={sandbox!r}), time_control=ZOO_TIME_CONTROL, log_dir={logs!r}
    )
    print(bot.transport.pid, flush=True)
    await trio.sleep_forever()

trio.run(main)
"""


@pytest.mark.parametrize("sandbox", [None, "bwrap"])
async def test_a_bot_dies_when_its_referee_is_killed(tmp_path, sandbox):
    if sandbox and await check_bwrap():
        pytest.skip(await check_bwrap())
    mark = uuid.uuid4().hex
    bots = str(ROOT / "tests" / "bots")
    code = REFEREE.format(bots=bots, mark=mark, logs=str(tmp_path), sandbox=sandbox)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    referee = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env)
    try:
        with trio.fail_after(30):
            line = await trio.to_thread.run_sync(referee.stdout.readline)
        assert line.strip().isdigit(), f"the referee did not start its bot: {line!r}"
        assert leftover_processes(mark), "the bot is not running"
    finally:
        referee.send_signal(signal.SIGKILL)
        referee.wait()
    await assert_none_survive(lambda: leftover_processes(mark), "bots outlived their referee")


def test_the_arena_command_is_not_dumpable():
    """Also `arena` itself (not only the processes that start bots): bots of the same user must
    not read its environment or memory through /proc."""
    code = (
        "import ctypes, sys\n"
        "from arena.cli import main\n"
        "sys.argv = ['arena', 'games']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print('dumpable', ctypes.CDLL(None).prctl({PR_GET_DUMPABLE}, 0, 0, 0, 0))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.stdout.splitlines()[-1] == "dumpable 0", done.stdout + done.stderr
