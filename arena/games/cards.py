"""Cards, decks, the one text notation, and the documented seeded shuffle.

Notation: a card is its rank followed by one suit letter, e.g. ``10H``, ``QS``, ``AD``, ``12R``.
The suit is always the last character; the rank is everything before it. Cards are plain ``str``
values everywhere (engines, protocol, records, tests), so no conversion happens on the hot path.

Randomness: every shuffle comes from :class:`Rng`, a SplitMix64 generator with rejection sampling
and a Fisher-Yates shuffle. It is specified exactly in SPEC.md so that anyone can re-derive a deal
from a seed, in any language, and it does not depend on Python's ``random`` module or hash order.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import filterfalse
from typing import NamedTuple

TWO64 = 1 << 64
MASK64 = TWO64 - 1
# below(n)'s rejection limit, the largest multiple of n not above 2**64, for n up to 64 (every
# deck): shuffle looks it up instead of two operations on 64-bit integers per card.
LIMITS = (0,) + tuple(TWO64 - TWO64 % n for n in range(1, 65))
GAMMA = 0x9E3779B97F4A7C15  # SplitMix64's increment
# Every rejection limit up to n = 64 is at least 2**64 - 64: an output that can be rejected has
# its seven high bytes all 0xFF.
_NEAR_TWO64 = b"\xff" * 7


class _Lanes(NamedTuple):
    """Rng.shuffle's constants for ``draws`` draws at once, a 128-bit lane per draw."""

    ones: int  # 1 in each lane
    gammas: int  # GAMMA * (k + 1) in lane k
    mask: int  # the low 64 bits of each lane
    size: int  # bytes of all the lanes
    unpack: Callable[[bytes], tuple[int, ...]]  # the lanes' low halves, from those bytes


_LANES: dict[int, _Lanes] = {}


def _lanes(draws: int) -> _Lanes:
    ones = sum(1 << (128 * k) for k in range(draws))
    gammas = sum((GAMMA * (k + 1)) << (128 * k) for k in range(draws))
    unpack = struct.Struct("<" + "Q8x" * draws).unpack
    lanes = _LANES[draws] = _Lanes(ones, gammas, MASK64 * ones, 16 * draws, unpack)
    return lanes


class Rng:
    """SplitMix64. ``next()`` returns 64-bit unsigned integers; ``below(n)`` is unbiased."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & MASK64

    def next(self) -> int:
        self.state = (self.state + GAMMA) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A uniform integer in [0, n): draw until the value falls under the largest multiple of n."""
        if n <= 0:
            raise ValueError("below() needs a positive bound")
        limit = TWO64 - TWO64 % n
        while True:
            x = self.next()
            if x < limit:
                return x % n

    def shuffle(self, items: list, count: int | None = None) -> None:
        """Fisher-Yates in place, from the front: for i from 0 up to count - 1, swap item i with
        item i + below(len - i). ``count`` defaults to len - 1 (a full shuffle); a game that deals
        only part of the deck shuffles only the positions it deals (the rest stays hidden).

        Dealing is the engines' hottest loop, so the draws are made all at once: SplitMix64's
        n-th output depends only on seed + n * GAMMA, so the states of every draw go into one
        big integer, a lane of 128 bits each, and each step of the mix is one operation on all
        the lanes (about 2k instructions per card instead of 6k). That gives exactly the values
        ``below`` would draw unless one was rejected; a rejection needs an output within 64 of
        2**64 (seven 0xFF bytes in the lanes' bytes), and then the draws are made one by one
        (shuffle_steps), which is the plain definition. tests/games/test_shuffle.py compares both.
        """
        size = len(items)
        draws = min(size - 1, size - 1 if count is None else count)
        if draws <= 0:
            return
        if size > 64:
            self.shuffle_steps(items, draws)
            return
        ones, gammas, mask, size_bytes, unpack = _LANES.get(draws) or _lanes(draws)
        state = self.state
        z = (state * ones + gammas) & mask  # lane k: the state of draw k
        z = (((z ^ (z >> 30)) & mask) * 0xBF58476D1CE4E5B9) & mask
        z = (((z ^ (z >> 27)) & mask) * 0x94D049BB133111EB) & mask
        data = (z ^ (z >> 31)).to_bytes(size_bytes, "little")  # (each lane's high half: junk)
        if _NEAR_TWO64 in data:
            self.shuffle_steps(items, draws)  # maybe a rejection: the plain way
            return
        for i, x in enumerate(unpack(data)):
            j = i + x % (size - i)
            items[i], items[j] = items[j], items[i]
        self.state = (state + draws * GAMMA) & MASK64

    def shuffle_steps(self, items: list, draws: int) -> None:
        """shuffle() one draw after the other (SPEC.md section 3 as written): ``draws`` swaps."""
        size = len(items)
        state = self.state
        for i in range(draws):
            n = size - i
            limit = LIMITS[n] if n < 65 else TWO64 - TWO64 % n
            while True:
                state = (state + GAMMA) & MASK64
                z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
                z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
                z ^= z >> 31
                if z < limit:
                    break
            j = i + z % n
            items[i], items[j] = items[j], items[i]
        self.state = state

    def choice(self, items: Sequence):
        return items[self.below(len(items))]


def derive_seed(seed: int, stream: str) -> int:
    """A seed for an independent stream (e.g. the autopilot) derived from a match seed.

    FNV-1a over the stream name mixed into the seed, then one SplitMix64 step: stable everywhere.
    """
    h = 0xCBF29CE484222325
    for byte in stream.encode():
        h = ((h ^ byte) * 0x100000001B3) & MASK64
    return Rng(seed ^ h).next()


class Dealer:
    """Where a game's shuffled decks come from: the match seed's Rng.

    Games call :meth:`shuffled` once per (re)shuffle. Tests may subclass this to rearrange a deal
    (the information-leak fuzzer swaps hidden cards); the rules never need to know.
    """

    def __init__(self, rng: Rng) -> None:
        self.rng = rng
        self.shuffles = 0

    def shuffled(self, cards: Iterable[str], count: int | None = None) -> list[str]:
        """The cards shuffled; with ``count``, only the first ``count`` positions are drawn."""
        deck = list(cards)
        self.rng.shuffle(deck, count)
        self.shuffles += 1
        return deck


# Every card of every Deck made (each adds its own) by its suit letter, and each suit's
# ``SUIT_CARDS[suit].__contains__`` bound once: ``filter(IN_SUIT[suit], hand)`` keeps a hand's
# cards of one suit without a Python step per card nor a binding per call (the trick games' rules).
SUIT_CARDS: dict[str, set[str]] = {}
IN_SUIT: dict[str, Callable[[object], bool]] = {}


@dataclass(frozen=True)
class Deck:
    """A deck shape: suit letters and ranks from low to high. ``cards`` is the canonical order
    (suit by suit in the order of ``suits``, ranks ascending), used to sort hands and lists."""

    name: str
    suits: tuple[str, ...]
    ranks: tuple[str, ...]
    cards: tuple[str, ...] = field(init=False)
    rank: dict[str, int] = field(init=False, repr=False)
    suit: dict[str, str] = field(init=False, repr=False)
    order: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        cards = tuple(r + s for s in self.suits for r in self.ranks)
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "rank", {c: self.ranks.index(c[:-1]) for c in cards})
        object.__setattr__(self, "suit", {c: c[-1] for c in cards})
        object.__setattr__(self, "order", {c: i for i, c in enumerate(cards)})
        for card in cards:  # every deck's cards, by suit, for the rules' suit filters
            SUIT_CARDS.setdefault(card[-1], set()).add(card)
        for suit in self.suits:
            IN_SUIT[suit] = SUIT_CARDS[suit].__contains__

    def sorted(self, cards: Iterable[str]) -> list[str]:
        return sorted(cards, key=self.order.__getitem__)

    def is_card(self, text: object) -> bool:
        return isinstance(text, str) and text in self.order

    def without(self, removed: Iterable[str]) -> tuple[str, ...]:
        gone = set(removed)
        return tuple(filterfalse(gone.__contains__, self.cards))  # (no Python step per card)


SUIT_NAMES = {
    "C": "clubs",
    "D": "diamonds",
    "H": "hearts",
    "S": "spades",
    "R": "red",
    "G": "green",
    "B": "blue",
    "Y": "yellow",
}

STANDARD_52 = Deck(
    "standard 52",
    ("C", "D", "H", "S"),
    ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"),
)
PIQUET_32 = Deck("piquet 32", ("C", "D", "H", "S"), ("7", "8", "9", "10", "J", "Q", "K", "A"))
# Alles oder Nichts: no publisher's deck description survives; four colours of 1..12 (12 high).
COLOURS_48 = Deck("four colours 1-12", ("R", "G", "B", "Y"), tuple(str(v) for v in range(1, 13)))


def parse_card_list(text: str) -> list[str]:
    """``"7H,8C"`` -> ``["7H", "8C"]``; ``""`` -> ``[]``."""
    return [part for part in text.split(",") if part]


class StackedDealer(Dealer):
    """A dealer that hands out prepared decks, for scripted scenarios and tests.

    Each shuffle returns the next prepared top of deck followed by the remaining cards in canonical
    order (so a scenario only lists the cards it cares about). Once the prepared decks are used up,
    shuffles come from the seed as usual. The Rng drives every other draw, e.g. the first dealer.
    """

    def __init__(self, tops: list[list[str]], seed: int = 0) -> None:
        super().__init__(Rng(seed))
        self.tops = [list(top) for top in tops]

    def shuffled(self, cards: Iterable[str], count: int | None = None) -> list[str]:
        if self.shuffles >= len(self.tops):
            return super().shuffled(cards, count)
        deck = list(cards)
        top = self.tops[self.shuffles]
        self.shuffles += 1
        missing = set(top) - set(deck)
        if missing or len(set(top)) != len(top):
            raise ValueError(
                f"prepared deck has unknown or repeated cards: {sorted(missing) or top}"
            )
        chosen = set(top)
        return top + [c for c in deck if c not in chosen]


def seed_for_first_draw(players: int, wanted: int) -> int:
    """The smallest seed whose first ``below(players)`` is ``wanted`` (to fix a first dealer)."""
    seed = 0
    while Rng(seed).below(players) != wanted:
        seed += 1
    return seed
