"""The starter kits' rules (docs/writing-a-bot.md, "The starter kits' rules") in Python: what the
Rust, Java, C++ and Go kits must choose for a request, written from the guide's table."""

from __future__ import annotations

from typing import Any

FACES = {"J": 11, "Q": 12, "K": 13, "A": 14}


def suit(card: str) -> str:
    return card[-1]


def rank(card: str) -> int:
    return FACES.get(card[:-1]) or int(card[:-1])


def strength(card: str, trump: str | None) -> int:
    return rank(card) + (100 if suit(card) == trump else 0)


def beats(card: str, top: str, trump: str | None) -> bool:
    if suit(card) == suit(top):
        return rank(card) > rank(top)
    return suit(card) == trump


def pick(cards: list[str], trump: str | None, highest: bool) -> str:
    """The strongest or weakest card; the first one on a tie."""
    best = cards[0]
    for card in cards:
        a, b = strength(card, trump), strength(best, trump)
        if (highest and a > b) or (not highest and a < b):
            best = card
    return best


def choose(decision: str, view: dict[str, Any], legal: list[str]) -> str:
    if len(legal) == 1:
        return legal[0]
    hand = view["hand"]
    trump = view.get("trump")
    if decision == "bid":
        return f"bid:{sum(1 for c in hand if (suit(c) == trump and rank(c) >= 9) or rank(c) == 12)}"
    if decision == "declare":
        return "declare:secret"
    if decision == "trump":
        return "trump:" + suit(pick(hand, None, True))
    if decision == "exchange":
        weak = sorted((c for c in hand if suit(c) != trump and rank(c) < 13), key=rank)[:3]
        chosen = [c for c in hand if c in weak]
        return "discard:" + (",".join(chosen) if chosen else "none")
    if decision == "drop":
        return "stay"
    if decision in ("beg", "give"):
        strong = sum(1 for c in hand if suit(c) == suit(view["kick"])) >= 3
        return {"beg": ("beg", "stand"), "give": ("run", "give")}[decision][strong]
    if decision == "patience":
        cards = [a for a in legal if a != "pass"]
        return next((c for c in cards if rank(c) != 7), cards[0] if cards else legal[0])
    if decision == "play":
        return play(view, legal, trump)
    return legal[0]


def play(view: dict[str, Any], legal: list[str], trump: str | None) -> str:
    trick = view["trick"]
    if not trick:
        return pick(legal, trump, wants_trick(view, None))
    winner = trick[0]
    for entry in trick[1:]:
        if beats(entry["card"], winner["card"], trump):
            winner = entry
    winners = [c for c in legal if beats(c, winner["card"], trump)]
    losers = [c for c in legal if c not in winners]
    if wants_trick(view, winner["seat"]):
        return pick(winners or legal, trump, False)
    return pick(losers, trump, True) if losers else pick(legal, trump, False)


def wants_trick(view: dict[str, Any], winning: int | None) -> bool:
    game, seat = view["game"], view["seat"]
    if game == "alles-oder-nichts":
        bid = view["bids"][seat]
        return bid is not None and view["tricks"][seat] < bid
    if game == "eight-rounds":
        return view["contract"] == "most-tricks"
    if game == "all-fours":
        return winning is None or winning != view["partner"]
    return True
