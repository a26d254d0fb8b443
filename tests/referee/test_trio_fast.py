"""arena/referee/trio_fast.py, the one module that reads trio's internals: its self-check finds
what it reads, says once when something differs, and the public path it then takes plays the
same matches as the fast one (C bots, real processes)."""

from __future__ import annotations

import os

import trio

from arena.games import find_game
from arena.referee import trio_fast
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.process import BotProcess
from arena.referee.record import read_record
from tests.sample_bot_specs import sample_bot


def _timeless(entry: dict) -> dict:
    """A record line less what the clock decides (times, load, and which decision's line keeps
    a bot's stderr: the random bot logs each match's end after it, SPEC 8): the rest is the
    match."""
    timed = ("ms", "started", "duration_s", "referee_ms", "load_per_core", "_line", "stderr")
    return {key: value for key, value in entry.items() if key not in timed}


def test_the_installed_trio_passes_the_self_check():
    assert trio_fast.problem() is None, trio_fast.problem()
    assert trio_fast.usable()


def test_the_self_check_names_a_field_trio_no_longer_has(monkeypatch):
    monkeypatch.setitem(trio_fast._FIELDS_READ, "Task", ("_runner", "_no_such_field"))
    assert trio_fast._self_check() == "trio's Task has no _no_such_field"
    monkeypatch.setitem(trio_fast._FIELDS_READ, "NoSuchClass", ("x",))
    monkeypatch.delitem(trio_fast._FIELDS_READ, "Task")
    assert "AttributeError" in (trio_fast._self_check() or "")


def test_a_run_unlike_the_expected_one_is_said_once_and_read_by_trios_path(monkeypatch, capsys):
    monkeypatch.setattr(trio_fast, "_said", False)
    read_end, write_end = os.pipe()
    try:
        for _ in range(3):
            quick = trio_fast.QuickRead(read_end)
            quick.attach(object())  # a run without trio's fields
            assert quick.runq  # never empty: every read takes trio's path
    finally:
        os.close(read_end)
        os.close(write_end)
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 1
    assert "trio's public path" in said[0] and trio.__version__ in said[0]


def test_a_mock_clock_needs_no_message(monkeypatch, capsys):
    monkeypatch.setattr(trio_fast, "_said", False)

    async def look() -> float | None:
        return trio_fast.perf_counter_offset(trio.lowlevel.current_clock())

    assert trio.run(look) is not None  # trio's system clock
    assert trio.run(look, clock=trio.testing.MockClock()) is None
    assert capsys.readouterr().err == ""


async def _play(tmp_path, label: str) -> tuple[list[dict], int]:
    """Two matches of each of two games by four C random bots started afresh; the records'
    lines (times aside) and the quick reads taken."""
    control = TimeControl(decision_ms=5000)
    bots = [
        await BotProcess.start(
            sample_bot("c", tmp_path, name=f"c{i}", seed=10 + i),
            time_control=control,
            log_dir=tmp_path / "logs",
        )
        for i in range(4)
    ]
    taken = trio_fast.quick_reads_taken()
    lines = []
    try:
        for game in ("aon", "all-fours"):
            for seed in (3, 4):
                path = tmp_path / f"{label}-{game}-{seed}.jsonl"
                await run_match(
                    find_game(game),
                    bots,
                    seed=seed,
                    match_id=f"{game}-{seed}",
                    time_control=control,
                    record_path=path,
                )
                lines += [_timeless(entry) for entry in read_record(path)]
    finally:
        for bot in bots:
            await bot.close()
    return lines, trio_fast.quick_reads_taken() - taken


async def test_the_public_path_plays_the_same_matches_as_the_fast_one(tmp_path, monkeypatch):
    fast, fast_reads = await _play(tmp_path, "fast")
    monkeypatch.setattr(trio_fast, "_problem", "forced off by a test")
    monkeypatch.setattr(trio_fast, "_said", True)  # (said already: no message in the test's log)
    assert trio_fast.perf_counter_offset(trio.lowlevel.current_clock()) is None
    public, public_reads = await _play(tmp_path, "public")
    assert fast_reads > 0  # the fast path was taken...
    assert public_reads == 0  # ...and the forced one never took it
    assert len(fast) > 200
    assert fast == public
