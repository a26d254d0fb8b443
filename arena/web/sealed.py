"""Which stored cards are sealed, and what a viewer sees of them: the one place the pages ask.

A deal's cards are sealed while one of its rotations (the same cards in other seats) is not
stored completed: being played, not played yet, or aborted and to be played again; a match
being played is sealed. Who may see sealed cards is :meth:`arena.web.access.Viewer.may_see`
(SPEC 10.7). Every page that shows cards or a fault's message asks :class:`Seals`: the match page
(:meth:`Seals.match_seats`, :meth:`Seals.require`), the duplicate view (:meth:`Seals.deal_hands_shown`), and the fault
lists of the tournament page and a bot's page (:meth:`Seals.faults_for`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from arena.tournament.store import StoredMatch
from arena.web.access import Viewer
from arena.web.index import StoredIndex

SEALED_WHY = (
    "its cards are still in play (this match or another rotation of its deal, the same cards): "
    "they are shown to everyone once every rotation of the deal is over; until then to the "
    "organiser, and a seat of a match being played to its bot's owner (with their tokens)"
)


class Sealed(PermissionError):
    """A match's cards this viewer may not see yet (one line, shown as a 403 with the seats
    that it may see)."""

    def __init__(self, message: str, allowed: list[int]) -> None:
        super().__init__(message)
        self.allowed = allowed


class Seals:
    """What is sealed of one tournament's stored matches (from its index), and what of it a
    viewer may see."""

    def __init__(self, index: StoredIndex) -> None:
        self.index = index

    def deal_sealed(self, game: str, table: int, deal: int) -> bool:
        """Whether a deal's cards are still hidden: one of its rotations is not stored
        completed (being played, not played yet, or aborted and to be played again), or the
        deal is unknown to the schedule."""
        ids = self.index.rotation_ids(game, table, deal)
        return ids is None or not all(self.index.is_done(i) for i in ids)

    def match_sealed(self, match_id: str) -> bool:
        """:meth:`deal_sealed` of the deal a match id names (sealed when the id is unknown)."""
        schedule = self.index.schedule
        scheduled = None if schedule is None else schedule.by_id(match_id)
        if scheduled is None:
            return True
        return self.deal_sealed(scheduled.game, scheduled.table, scheduled.deal)

    def of_match(self, match_id: str, stored: StoredMatch | None, running: bool) -> bool:
        """Whether a match's cards are sealed: being played, not stored completed, or a
        rotation of its deal not over (the same cards)."""
        return running or stored is None or not stored.completed or self.match_sealed(match_id)

    def deal_hands_shown(self, viewer: Viewer, sealed: bool) -> bool:
        """Whether the duplicate view shows a deal's cards to ``viewer``."""
        return viewer.may_see(None, sealed=sealed)

    def match_seats(
        self, viewer: Viewer, bots: list[str], *, sealed: bool, running: bool
    ) -> tuple[list[int], bool]:
        """(the seats ``viewer`` may see, whether it may see all hands) of a match whose seats
        hold ``bots``."""
        allowed = [
            s for s, bot in enumerate(bots) if viewer.may_see(bot, sealed=sealed, playing=running)
        ]
        return allowed, viewer.may_see(None, sealed=sealed)

    def require(
        self, seat: int | None, allowed: list[int], all_hands: bool, *, running: bool
    ) -> None:
        """Asking a match's record for more than :meth:`match_seats` gave (``seat``: one seat,
        None: all hands) is :class:`Sealed`, whose message says what may be seen."""
        if seat is None and not all_hands:
            if not running:
                why = (
                    "all hands of this match are shown once every rotation of its deal is over "
                    "(they are the same cards): until then to the organiser only"
                )
            elif allowed:
                why = (
                    "this match is being played: all hands are shown to the organiser only; your "
                    f"token shows seat {', '.join(map(str, allowed))}"
                )
            else:
                why = f"this match is being played: {SEALED_WHY}"
            raise Sealed(why, allowed)
        if seat is not None and not (all_hands or seat in allowed):
            raise Sealed(f"seat {seat}: {SEALED_WHY}", allowed)

    def faults_for(
        self, faults: Iterable[dict[str, Any]], viewer: Viewer, bot: str | None = None
    ) -> list[dict[str, Any]]:
        """Faults (of ``bot``, unless each names its own) as ``viewer`` may read them: a fault
        message can name the cards of the faulting seat, so it is withheld while its match is
        sealed, but from the organiser (an aborted match's reason names none)."""
        shown = []
        for fault in faults:
            fault = dict(fault)
            faulting = fault.get("bot", bot)
            sealed = faulting is not None and self.match_sealed(fault["match_id"])
            if sealed and not viewer.may_see(faulting, sealed=True):
                fault["message"] = None
                fault["withheld"] = True
            shown.append(fault)
        return shown
