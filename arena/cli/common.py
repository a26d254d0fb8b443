"""What several commands share: the --width option and the one-line input error.

Light on purpose: every command imports it, and ``arena standings`` must not pay for trio."""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    import trio

    from arena.tournament.store import ResultStore

# Ctrl-C, kill and a closed terminal all stop a run the same way: cleanly, keeping what is stored.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

width_option: Callable[[Callable[..., Any]], Callable[..., Any]] = click.option(
    "--width",
    type=click.IntRange(40, 1000),
    default=None,
    help="Lay tables out for this many columns [the terminal's; piped: as wide as needed].",
)


def counted(count: int, noun: str) -> str:
    """``1 game``, ``2 games``, ``1 match``, ``3 matches``."""
    if count == 1:
        return f"1 {noun}"
    return f"{count} {noun}{'es' if noun.endswith(('ch', 'sh', 's', 'x')) else 's'}"


def kept_note(store: ResultStore) -> str:
    """What a failed run leaves: the count of completed matches stored (a failure in a later
    round of a run comes after earlier rounds were stored)."""
    from arena.tournament.store import StoreError

    try:
        stored = f"{len(store.completed_ids())} completed matches are"
    except StoreError:  # (the failure may be the file's own)
        stored = "what was"
    return f"{stored} stored in {store.path} and kept: run the same command again to resume"


class InputError(click.ClickException):
    """A bad file or argument: one line, exit status 2 like click's usage errors."""

    exit_code = 2


class StopOnSignal:
    """Cancels a scope at the first stop signal and remembers that it did."""

    def __init__(self) -> None:
        self.stopped = False

    async def watch(self, signals: Any, scope: trio.CancelScope) -> None:
        async for _ in signals:
            self.stopped = True
            scope.cancel()
            return
