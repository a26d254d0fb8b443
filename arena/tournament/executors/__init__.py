"""Where a tournament's matches are played: the one seam between the runner and the players.

The runner (``arena.tournament.runner``) hands an :class:`Executor` the pending matches and a
``keep`` callback, and gets every finished match back through it (completed or aborted, in the
order they end), in this process; neither the referee nor the store knows which executor played
them. Three exist:

- :class:`~arena.tournament.executors.in_process.InProcess`: this process plays every match
  itself (``workers = 1``; tests swap its bot starter and referee for fakes);
- :class:`~arena.tournament.executors.local.WorkerProcesses`: worker processes on this machine
  (``arena.tournament.workers``, the default with more than one core);
- :class:`~arena.tournament.executors.dask_cluster.DaskCluster`: the workers of a Dask
  scheduler (``--cluster``), imported only when asked for, since Dask is an optional extra.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from arena.tournament.config import TournamentConfig
from arena.tournament.schedule import ScheduledMatch
from arena.tournament.store import StoredMatch
from arena.tournament.summary import RunSummary

Keep = Callable[[StoredMatch], None]


class Executor(Protocol):
    """Plays matches somewhere and hands each finished one to ``keep``."""

    async def play(
        self,
        config: TournamentConfig,
        todo: Iterable[ScheduledMatch],
        bots: Sequence[str],
        keep: Keep,
        summary: RunSummary,
    ) -> None:
        """Play ``todo`` (which needs the bots named ``bots``); call ``keep`` once per finished
        match; fill in ``summary``'s process counts. Raises TournamentError (one line) when the
        tournament cannot go on; cancellation cuts running matches, which are not kept. Every
        process it started has ended on return."""
        ...
