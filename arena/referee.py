"""run_match: the only place that joins the rules and the bot processes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from arena.bot_process import BotProcess
from arena.clock import TimeControl
from arena.games import GameSpec
from arena.results import MatchResult


async def run_match(game: GameSpec, seats: Sequence[BotProcess], *, seed: int,
                    options: Mapping | None = None, match_id: str,
                    time_control: TimeControl = TimeControl(), max_faults: int = 3,
                    record_path: Path | None = None) -> MatchResult:
    raise NotImplementedError("skeleton: being implemented on branch referee")
