"""Why a tournament run stops: its errors (one line each, naming the bot), and how a nursery's
exception group gives one of them back as itself."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class TournamentError(Exception):
    """The tournament cannot go on (one line, names the bot); finished matches are kept."""


class PreflightError(TournamentError):
    """Some bot cannot start before the first match: one line per broken bot, nothing played."""


@contextmanager
def unwrapped(kind: type[Exception]) -> Iterator[None]:
    """Raise the first ``kind`` error out of a nursery's exception group as itself."""
    try:
        yield
    except BaseExceptionGroup as group:
        matched, _rest = group.split(kind)
        if matched is None:
            raise
        first: BaseException = matched
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise first from None
