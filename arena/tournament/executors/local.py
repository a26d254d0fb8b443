"""The executor of ``workers`` > 1: worker processes on this machine (``arena.tournament.workers``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arena.tournament.config import TournamentConfig
from arena.tournament.errors import TournamentError, unwrapped
from arena.tournament.executors import Keep
from arena.tournament.schedule import ScheduledMatch
from arena.tournament.summary import RunSummary
from arena.tournament.workers import play_in_workers


class WorkerProcesses:
    """``workers`` processes, each playing its share of ``config.concurrency`` matches at once."""

    def __init__(self, workers: int) -> None:
        self.workers = workers

    async def play(
        self,
        config: TournamentConfig,
        todo: Iterable[ScheduledMatch],
        bots: Sequence[str],
        keep: Keep,
        summary: RunSummary,
    ) -> None:
        with unwrapped(TournamentError):
            await play_in_workers(config, todo, bots, self.workers, keep, summary)
