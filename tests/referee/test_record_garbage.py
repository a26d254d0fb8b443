"""A recorded match leaves no reference cycle: its objects are freed as it ends, as an unrecorded
match's are, and not left to the garbage collector (in a tournament, which plays match after match
without collecting, a whole match's garbage for each record made every collection dearer)."""

from __future__ import annotations

import gc
import weakref

import pytest

from arena.games import find_game
from arena.referee import match as match_module
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.process import BotProcess
from tests.sample_bot_specs import sample_bot


@pytest.mark.parametrize("name", ["off", "m.jsonl", "m.jsonl.gz"])
async def test_a_match_is_freed_as_it_ends_with_or_without_a_record(tmp_path, monkeypatch, name):
    dealers: list[weakref.ref] = []

    class WatchedDealer(match_module.RecordingDealer):
        def __init__(self, rng) -> None:
            super().__init__(rng)
            dealers.append(weakref.ref(self))

    monkeypatch.setattr(match_module, "RecordingDealer", WatchedDealer)
    control = TimeControl(decision_ms=10_000, startup_ms=30_000)
    specs = [sample_bot("python", tmp_path, f"p{i}", seed=i) for i in range(4)]
    bots = [await BotProcess.start(s, time_control=control, log_dir=tmp_path) for s in specs]
    path = None if name == "off" else tmp_path / name
    gc.collect()
    gc.disable()  # only reference counting frees anything from here on
    try:
        result = await run_match(
            find_game("vingt-down"),
            bots,
            seed=3,
            match_id="m",
            time_control=control,
            record_path=path,
        )
        assert result.termination == "completed" and len(dealers) == 1
        assert dealers[0]() is None  # the dealer, held by the match and its state: freed
    finally:
        gc.enable()
        for bot in bots:
            await bot.close()
