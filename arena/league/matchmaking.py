"""Which versions sit at the next table of a game (pure; SPEC.md 12.4 states the rule).

Every table plays a duplicate deal-set: one deal in every seat rotation. The next table is built
around its **anchor**, the versions whose results would teach the ranking most:

1. **new versions first**: a version in fewer than ``NEW_DEALSETS`` deal-sets of the game (the
   fewest first) is the anchor;
2. **fair share**: else a version in fewer than ``FAIR_SHARE`` of the mean number of deal-sets
   of the game's versions (the fewest first) is the anchor, so no version is starved;
3. **unseparated neighbours**: else the two versions adjacent in the rating order whose order is
   least certain, ``P(mis-ordered) = Phi(-(mu_a - mu_b) / sqrt(sigma_a^2 + sigma_b^2))``, are
   the anchor (ties: the pair that met least, then by label).

The other seats go to the versions rated nearest the anchor's mean rating (a table of near
equals separates them best), the fewest deal-sets first among equals, then by label. Fewer active
versions than seats: no table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

NEW_DEALSETS = 4
FAIR_SHARE = 0.5


@dataclass(frozen=True)
class Entrant:
    """One active version as the matchmaker sees it, in one game."""

    label: str
    mu: float
    sigma: float
    dealsets: int  # deal-sets of this game it sat in (played or being played)


def misorder_chance(upper: Entrant, lower: Entrant) -> float:
    """The chance that ``lower`` (rated below ``upper``) is in truth the better one."""
    spread = math.sqrt(upper.sigma**2 + lower.sigma**2)
    if spread == 0:
        return 0.0
    return 0.5 * math.erfc((upper.mu - lower.mu) / spread / math.sqrt(2))


def choose_table(
    entrants: Sequence[Entrant],
    players: int,
    meetings: Mapping[frozenset[str], int] | None = None,
) -> tuple[str, ...] | None:
    """The labels of the next table (anchor first), or None with fewer entrants than seats."""
    if len(entrants) < players or players < 1:
        return None
    meetings = meetings or {}
    fewest = sorted(entrants, key=lambda e: (e.dealsets, e.label))
    mean = sum(e.dealsets for e in entrants) / len(entrants)
    anchor: list[Entrant]
    if fewest[0].dealsets < NEW_DEALSETS or fewest[0].dealsets < FAIR_SHARE * mean:
        anchor = [fewest[0]]
    else:
        ranked = sorted(entrants, key=lambda e: (-e.mu, e.label))
        pairs = list(zip(ranked, ranked[1:], strict=False))
        upper, lower = max(  # (the first of equals: the higher-rated pair)
            pairs,
            key=lambda pair: (
                misorder_chance(*pair),
                -meetings.get(frozenset((pair[0].label, pair[1].label)), 0),
            ),
        )
        anchor = [upper, lower][:players]
    centre = sum(e.mu for e in anchor) / len(anchor)
    chosen = {e.label for e in anchor}
    others = sorted(
        (e for e in entrants if e.label not in chosen),
        key=lambda e: (abs(e.mu - centre), e.dealsets, e.label),
    )
    return tuple(e.label for e in [*anchor, *others[: players - len(anchor)]])
