"""The executor of ``workers = 1``: this process plays every match, bot processes pooled."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import trio

from arena.referee.cores import pinned, spread_cores
from arena.referee.match import run_match
from arena.referee.process import BotProcess
from arena.referee.record import RecordShelf
from arena.tournament.config import TournamentConfig
from arena.tournament.errors import TournamentError, unwrapped
from arena.tournament.executors import Keep
from arena.tournament.pool import (
    BotPool,
    PlayMatch,
    StartBot,
    hide_from_each_other,
    play_pooled_match,
)
from arena.tournament.schedule import ScheduledMatch
from arena.tournament.summary import RunSummary


class InProcess:
    """Up to ``config.concurrency`` matches at once in this trio loop, in schedule order.

    ``start_bot`` and ``play`` default to the referee's ``BotProcess.start`` and ``run_match``;
    tests swap in fakes to check the pool, the limits and cancellation without processes."""

    def __init__(self, start_bot: StartBot | None = None, play: PlayMatch | None = None) -> None:
        self.start_bot = start_bot or BotProcess.start
        self.play_match = play or run_match

    async def play(
        self,
        config: TournamentConfig,
        todo: Iterable[ScheduledMatch],
        bots: Sequence[str],
        keep: Keep,
        summary: RunSummary,
    ) -> None:
        pool = BotPool(
            [
                b
                for b in hide_from_each_other(config.bots, config.arena_files())
                if b.name in set(bots)
            ],
            start_bot=self.start_bot,
            time_control=config.time_control,
            log_dir=config.logs_dir,
            fresh=config.fresh_processes,
        )
        limiter = trio.CapacityLimiter(config.concurrency)
        shelf = RecordShelf(config.records_dir) if config.records else None

        async def play_one(match: ScheduledMatch) -> None:
            try:
                keep(await play_pooled_match(config, match, pool, self.play_match, shelf))
            finally:
                limiter.release_on_behalf_of(match.match_id)

        # The bots start on every core at once; then this process and they play on a core per
        # match at once (SPEC 10.4), and bots started later start there.
        cores = spread_cores([config.concurrency])[0] if config.affinity else None
        try:
            with unwrapped(TournamentError):
                await pool.warm_up()
                with pinned(cores) as on:
                    if on:
                        pool.pin(on)
                    async with trio.open_nursery() as nursery:
                        for match in todo:
                            await limiter.acquire_on_behalf_of(match.match_id)
                            nursery.start_soon(play_one, match)
        finally:
            if shelf is not None:
                shelf.close()
            summary.started_processes = pool.started
            summary.given_up.update(pool.given_up)
            await pool.close_all()
