"""arena.games.knowledge.DealKnowledge: what a seat knows of a deal, and the dealing problem it
hands the kit's dealer (the games' resample hooks are tested through the kit, tests/kit)."""

from __future__ import annotations

import pytest

from arena.games.cards import PIQUET_32
from arena.games.core import InconsistentView
from arena.games.knowledge import DealKnowledge, follow_rule

# Seat 0's events of a 3-player deal: an earlier deal, then this one; seat 0 led 7C, seat 1 showed
# a void in clubs, seat 2 followed.
EVENTS = [
    {"type": "deal_start", "deal": 1},
    {"type": "deal", "seat": 0, "cards": ["8H"]},
    {"type": "deal_start", "deal": 2},
    {"type": "deal", "seat": 0, "cards": ["7C"]},
    {"type": "deal", "seat": 0, "cards": ["AH"]},
    {"type": "play", "seat": 0, "card": "7C"},
    {"type": "play", "seat": 1, "card": "9D"},
    {"type": "play", "seat": 2, "card": "8C"},
    {"type": "trick", "winner": 2},
]
VIEW = {"players": 3, "seat": 0, "hand_counts": [1, 1, 1]}


class Recording:
    """A Deal that keeps the problem it is given and deals the pool out in order."""

    def __call__(self, cards, sizes, forbidden):
        self.cards, self.sizes, self.forbidden = list(cards), dict(sizes), dict(forbidden)
        out, start = {}, 0
        for holder, size in sizes.items():
            out[holder] = self.cards[start : start + size]
            start += size
        return out


def test_read_takes_the_current_deal_its_own_cards_and_the_plays():
    known = DealKnowledge.read(VIEW, EVENTS, ("deal_start",))
    assert known.events == EVENTS[2:]
    assert known.own == ["7C", "AH"]
    assert known.plays == [(0, "7C", None), (1, "9D", "C"), (2, "8C", "C")]
    assert known.played() == ["7C", "9D", "8C"]
    assert known.voids(None, follow_rule) == {1: {"C"}, 2: set()}  # seat 2 followed
    with pytest.raises(InconsistentView, match="no round_start event"):
        DealKnowledge.read(VIEW, EVENTS, ("round_start",))


def test_deal_hidden_deals_the_unseen_cards_under_every_constraint():
    known = DealKnowledge.read(VIEW, EVENTS, ("deal_start",))
    deal = Recording()
    hidden = known.deal_hidden(
        deal,
        PIQUET_32.cards,
        shown=["KS"],
        voids=known.voids(None, follow_rule),
        ruled_out={0: {"QS"}, 2: {"JS"}},  # seat 0's own is no constraint on anyone
        holders={"discards 2": 2},
    )
    seen = {"7C", "AH", "9D", "8C", "KS"}
    assert deal.cards == [card for card in PIQUET_32.cards if card not in seen]
    assert list(deal.sizes.items()) == [
        ("hand 1", 1),
        ("hand 2", 1),
        ("discards 2", 2),
        ("stock", 32 - 5 - 4),
    ]
    clubs_unseen = {"9C", "10C", "JC", "QC", "KC", "AC"}
    assert deal.forbidden == {"hand 1": clubs_unseen, "hand 2": {"JS"}}
    hands = known.hands_at_start(hidden)
    assert hands == [["7C", "AH"], [*hidden["hand 1"], "9D"], [*hidden["hand 2"], "8C"]]


def test_deal_hidden_without_a_stock_deals_every_unseen_card_to_the_hands():
    view = {"players": 3, "seat": 0, "hand_counts": [1, 14, 14]}
    known = DealKnowledge.read(view, EVENTS, ("deal_start",))
    deal = Recording()
    known.deal_hidden(deal, PIQUET_32.cards, stock=False)
    assert deal.sizes == {"hand 1": 14, "hand 2": 14}
    assert len(deal.cards) == 28 and deal.forbidden == {}
