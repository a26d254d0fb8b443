"""BotProcess.cpu_seconds: the CPU time of a bot's processes (the idle check of `arena check`).

Real processes, read from their cgroup where the machine gives bots one and from /proc where it
does not (forced here by making no cgroup), sandboxed or not. Nothing is timed: CPU time is
burnt by process time (not by the clock), a busy child is waited for until it has used enough,
and an idle bot's reading may grow by at most a generous bound while it sleeps.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio
from sandbox_support import BWRAP

from arena.referee.bot_spec import BotSpec
from arena.referee.cgroups import BotCgroup, cgroup_problem
from arena.referee.clock import TimeControl
from arena.referee.process import BotProcess

BOTS = Path(__file__).resolve().parents[1] / "bots"
CONTROL = TimeControl(decision_ms=5000, margin_ms=100, startup_ms=60000)
BURNT_S = 0.4  # the CPU time each child of tests/bots/cpu_bot.py that ended burnt


@pytest.fixture(params=["cgroup", "proc"])
def reading(request, monkeypatch) -> str:
    """Where the CPU time is read from: the bot's cgroup, or /proc (no cgroup)."""
    if request.param == "cgroup" and cgroup_problem():
        pytest.skip(cgroup_problem())
    if request.param == "proc":
        monkeypatch.setattr(BotCgroup, "create", classmethod(lambda cls, *limits: None))
    return request.param


async def start_cpu_bot(tmp_path: Path, mode: str, sandbox: str | None) -> BotProcess:
    argv = (sys.executable, str(BOTS / "cpu_bot.py"), mode, str(BURNT_S))
    spec = BotSpec("cpu", argv, cwd=str(BOTS), sandbox=sandbox)
    return await BotProcess.start(spec, time_control=CONTROL, log_dir=tmp_path / "logs")


@pytest.mark.parametrize("sandbox", [None, BWRAP])
async def test_the_cpu_time_of_a_bot_counts_its_children(tmp_path, reading, sandbox):
    bot = await start_cpu_bot(tmp_path, "busy", sandbox)
    try:
        first = bot.cpu_seconds()
        assert first is not None, reading
        assert first >= 2 * BURNT_S * 0.9  # both ended children (tick rounding: 10 ms each)
        if reading == "cgroup":
            assert bot.transport.cgroup is not None
        # The busy child: the reading grows with it (however slowly, on a loaded machine).
        with trio.move_on_after(120):
            while (bot.cpu_seconds() or 0) < first + 0.5:
                await trio.sleep(0.1)
        last = bot.cpu_seconds()
        assert last is not None and last >= first + 0.5
    finally:
        await bot.close()
    assert bot.cpu_seconds() is None  # gone


@pytest.mark.parametrize("sandbox", [None, BWRAP])
async def test_an_idle_bot_uses_next_to_no_cpu_time(tmp_path, reading, sandbox):
    bot = await start_cpu_bot(tmp_path, "idle", sandbox)
    try:
        first = bot.cpu_seconds()
        await trio.sleep(1.0)
        last = bot.cpu_seconds()
    finally:
        await bot.close()
    assert first is not None and last is not None
    assert 0 <= last - first < 0.05  # blocked on its input: nothing, whatever the load


async def test_a_bot_without_a_process_has_no_cpu_time():
    assert BotProcess.absent(BotSpec("gone", ("true",)), "did not start").cpu_seconds() is None
