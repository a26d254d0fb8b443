"""What several commands share: the --width, time and match options and the one-line input error.

Light on purpose: every command imports it, and ``arena standings`` must not pay for trio."""

from __future__ import annotations

import functools
import signal
from collections.abc import Callable
from pathlib import Path
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


# The time control and fault limit of every command that plays matches (SPEC.md 5 and 6).
_TIME_OPTIONS = (
    click.option(
        "--decision-ms",
        type=click.IntRange(1),
        default=1000,
        show_default=True,
        help="Time per decision, in ms (SPEC.md 5).",
    ),
    click.option(
        "--bank-ms",
        type=click.IntRange(1),
        default=None,
        help="Per-match time bank (>= 1; default: no bank).",
    ),
    click.option(
        "--increment-ms",
        type=click.IntRange(0),
        default=0,
        show_default=True,
        help="Added to the bank after each decision, in ms.",
    ),
    click.option(
        "--margin-ms",
        type=click.IntRange(0),
        default=50,
        show_default=True,
        help="Lateness forgiven for the referee's own latency, in ms (not carried over).",
    ),
    click.option(
        "--startup-ms",
        type=click.IntRange(1),
        default=10000,
        show_default=True,
        help="Time to answer hello with ready, in ms.",
    ),
    click.option(
        "--max-faults",
        type=click.IntRange(1),
        default=3,
        show_default=True,
        help="Faults in the match after which a bot forfeits it (SPEC.md 6).",
    ),
)


def time_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--decision-ms``, ``--bank-ms``, ``--increment-ms``, ``--margin-ms``, ``--startup-ms``
    and ``--max-faults``, given to ``command`` as ``time_control`` (a TimeControl) and
    ``max_faults``: one definition for ``arena match`` and ``arena compare``."""

    @functools.wraps(command)
    def with_time(
        *args: Any,
        decision_ms: int,
        bank_ms: int | None,
        increment_ms: int,
        margin_ms: int,
        startup_ms: int,
        max_faults: int,
        **kwargs: Any,
    ) -> Any:
        from arena.referee.clock import TimeControl

        control = TimeControl(
            decision_ms=decision_ms,
            bank_ms=bank_ms,
            increment_ms=increment_ms,
            margin_ms=margin_ms,
            startup_ms=startup_ms,
        )
        return command(*args, time_control=control, max_faults=max_faults, **kwargs)

    decorated: Callable[..., Any] = with_time
    for option in reversed(_TIME_OPTIONS):
        decorated = option(decorated)
    return decorated


def match_options(*, with_you: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--bot`` (as ``bot_commands``), ``--seed``, ``--players``, ``--option`` (as
    ``option_items``) and ``--record``: one definition for ``arena match`` and ``arena play``
    (``with_you``: a person takes one seat and the bots fill the others)."""
    seats = "other seat" if with_you else "seat"
    count = "one more than the --bot given" if with_you else "the number of --bot given"
    options = (
        click.option(
            "--bot",
            "bot_commands",
            multiple=True,
            required=True,
            metavar="CMD",
            help=f"A bot's command line (split like a shell): one per {seats} in seat order, or "
            f"one for every {seats}.",
        ),
        click.option(
            "--seed",
            type=click.IntRange(0, (1 << 64) - 1),
            default=None,
            help="Match seed, public to anyone who knows it (default: a secret one, shown after "
            "the match).",
        ),
        click.option(
            "--players",
            type=int,
            default=None,
            help=f"Number of seats (default: {count}; with a single --bot, the game's default "
            "player count, shown by `arena games`).",
        ),
        click.option(
            "--option", "option_items", multiple=True, metavar="KEY=VALUE", help="A game option."
        ),
        click.option(
            "--record",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            help="Write the match record (JSONL; compact when it ends in .gz) here.",
        ),
    )

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


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
