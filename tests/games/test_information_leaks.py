"""Information-leak fuzzing, run over every registered game and player count.

A seat may learn nothing about where the cards hidden from it are. So: play a seeded random prefix
of a match, pick a seat, permute the cards hidden from that seat (``state.hidden_from(seat)``)
among the other hands and the stock by rearranging the current deal's shuffled deck, replay the same
actions, and check that every byte the seat would have been sent is unchanged: its view after every
step (as a protocol request, with its legal actions when it is to move) and every event it may see,
all encoded with the protocol codec. A difference is a leak: the view or an event depends on where
a hidden card is (even without naming it), or ``hidden_from`` lists a card the seat has seen.

Unlike the conformance test, which looks for hidden card names in what a seat receives, this catches
any dependence: a count of the next seat's trumps, the order of another hand, a stray deal event.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from arena.games import GAMES, GameSpec
from arena.games.cards import Dealer, Rng, derive_seed
from arena.games.playthrough import random_playout
from arena.referee.record import RecordingDealer
from protocol.codec import encode_line
from protocol.messages import Event, MatchEnd, Request

CASES = [(spec, players) for spec in GAMES.values() for players in spec.player_counts]
IDS = [f"{spec.id}-{players}p" for spec, players in CASES]
MATCH_ID = "leak-fuzz"


class RearrangingDealer(Dealer):
    """Shuffles from the seed, then renames cards in one shuffle by a permutation of hidden cards.

    The Rng draws exactly as before, so everything else (first dealer, earlier and later deals) is
    unchanged; in shuffle ``index`` each card ``c`` in ``mapping`` is replaced by ``mapping[c]``,
    which moves the hidden cards among their positions and so among the hands and the stock.
    """

    def __init__(self, rng: Rng, index: int, mapping: dict[str, str]) -> None:
        super().__init__(rng)
        self.index = index
        self.mapping = mapping

    def shuffled(self, cards, count=None):
        index = self.shuffles
        deck = super().shuffled(cards, count)
        if index == self.index:
            deck = [self.mapping.get(card, card) for card in deck]
        return deck


def seat_transcript(
    spec: GameSpec,
    players: int,
    options: dict,
    seed: int,
    actions: list[str],
    seat: int,
    dealer: Dealer,
):
    """Replay ``actions`` and collect what ``seat`` would be sent, one bytes chunk per step.

    Chunk j holds the events visible to the seat that were emitted up to state j, then the seat's
    view of state j as a request (legal actions included when it is the seat to move). Returns
    (state, chunks, deal_start), deal_start being the number of actions played before the latest
    shuffle; or None when an action is illegal in this replay.
    """
    state = spec.new_match(players, options, seed, dealer=dealer)
    chunks: list[bytes] = []
    sent = 0
    deal_start = 0

    def snapshot(step: int) -> None:
        nonlocal sent
        out = bytearray()
        for event in state.events[sent:]:
            if event.visible_to(seat):
                out += encode_line(Event(match_id=MATCH_ID, event=event.data))
        sent = len(state.events)
        mine = state.seat_to_move == seat
        out += encode_line(
            Request(
                match_id=MATCH_ID,
                id=step,
                decision=state.decision if mine else "",
                view=state.view(seat),
                legal=list(state.legal_actions()) if mine else [],
                time_left_ms=0,
            )
        )
        if state.is_over:
            result = state.result()
            out += encode_line(
                MatchEnd(
                    match_id=MATCH_ID, scores=list(result.scores), placings=list(result.placings)
                )
            )
        chunks.append(bytes(out))

    snapshot(0)
    for step, action in enumerate(actions, 1):
        if action not in state.legal_actions():
            return None
        shuffles = dealer.shuffles
        state.apply(action)
        if dealer.shuffles != shuffles:
            deal_start = step
        snapshot(step)
    return state, chunks, deal_start


def random_options(spec: GameSpec, rng: Rng) -> dict:
    """Random values for the boolean and multiple-choice options; numbers keep their defaults."""
    chosen: dict = {}
    for option in spec.options:
        if option.choices is not None:
            chosen[option.name] = rng.choice(option.choices)
        elif isinstance(option.default, bool):
            chosen[option.name] = bool(rng.below(2))
    return chosen


def permutation(cards: list[str], rng: Rng, *, by_suit: bool) -> dict[str, str]:
    """A random permutation of ``cards``; ``by_suit`` only exchanges cards of the same suit (so
    every hand keeps its suit lengths and earlier plays stay legal under follow-suit rules)."""
    groups: dict[str, list[str]] = {}
    for card in sorted(cards):
        groups.setdefault(card[-1] if by_suit else "", []).append(card)
    mapping: dict[str, str] = {}
    for group in groups.values():
        shuffled = list(group)
        rng.shuffle(shuffled)
        mapping.update(zip(group, shuffled))
    return mapping


def place_of(state) -> dict[str, str]:
    return {card: place for place, cards in state.card_locations().items() for card in cards}


@dataclass
class FuzzReport:
    samples: int = 0  # (prefix, seat) pairs drawn
    compared: int = 0  # replays that moved at least one hidden card to another place
    skipped: int = 0  # nothing hidden to move, or every rearrangement broke the prefix
    leaks: list[str] = field(default_factory=list)


def fuzz(
    spec: GameSpec, players: int, seeds: range, samples_per_seed: int, attempts: int = 6
) -> FuzzReport:
    """Fuzz one game and player count; every leak found is described in ``report.leaks``."""
    report = FuzzReport()
    for seed in seeds:
        rng = Rng(derive_seed(seed, f"leak-fuzz {spec.id} {players}"))
        options = random_options(spec, rng)
        actions = random_playout(spec, players, seed, options).actions
        for _ in range(samples_per_seed):
            report.samples += 1
            prefix = actions[: rng.below(len(actions) + 1)]
            seat = rng.below(players)
            recorder = RecordingDealer(Rng(seed))
            original = seat_transcript(spec, players, options, seed, prefix, seat, recorder)
            assert original is not None, f"{spec.id}: the recorded match does not replay"
            state, expected, deal_start = original
            deal = len(recorder.decks) - 1
            # Hidden cards named in this deal's actions (face-down discards) stay where they are:
            # moving one would make that action illegal. Their secrecy is the conformance test's.
            named = {
                card
                for action in prefix[deal_start:]
                for card in action.replace(":", ",").split(",")
            }
            movable = sorted(
                state.hidden_from(seat) & set(recorder.decks[deal]) - named if deal >= 0 else ()
            )
            before = place_of(state)
            found = False
            for attempt in range(attempts if len(movable) >= 2 else 0):
                # Alternate: any rearrangement, then one that only exchanges cards of a suit (every
                # hand keeps its suit lengths, so more of the other seats' plays stay legal).
                mapping = permutation(movable, rng, by_suit=attempt % 2 == 1)
                if all(before[card] == before[target] for card, target in mapping.items()):
                    continue  # nothing would change place
                dealer = RearrangingDealer(Rng(seed), deal, mapping)
                swapped = seat_transcript(spec, players, options, seed, prefix, seat, dealer)
                if swapped is None:
                    continue  # another seat's move became illegal: try another rearrangement
                other, got, _ = swapped
                if place_of(other) == before:
                    continue
                found = True
                report.compared += 1
                if got != expected:
                    report.leaks.append(
                        describe_leak(
                            spec, players, options, seed, prefix, seat, state, other, expected, got
                        )
                    )
                break
            if not found:
                report.skipped += 1
    return report


def describe_leak(spec, players, options, seed, prefix, seat, state, other, expected, got) -> str:
    step = next(i for i, (a, b) in enumerate(zip(expected, got)) if a != b)
    before, after = place_of(state), place_of(other)
    moved = ", ".join(
        f"{card} {before[card]} -> {after[card]}"
        for card in sorted(before)
        if before[card] != after.get(card)
    )
    a, b = expected[step], got[step]
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    window = slice(max(0, at - 160), at + 160)
    return (
        f"{spec.id} {players}p options={options} seed={seed} after {len(prefix)} actions, "
        f"seat {seat}: what it was sent by action {step} changed when hidden cards moved "
        f"({moved})\n  before: ...{a[window]!r}...\n  after:  ...{b[window]!r}..."
    )


SAMPLES_PER_GAME = 400  # split over the player counts: a few seconds per game
SAMPLES_PER_SEED = 5


@pytest.mark.parametrize(("spec", "players"), CASES, ids=IDS)
def test_no_seat_learns_where_hidden_cards_are(spec, players):
    seeds = max(4, SAMPLES_PER_GAME // SAMPLES_PER_SEED // len(spec.player_counts))
    report = fuzz(spec, players, range(seeds), SAMPLES_PER_SEED)
    assert not report.leaks, f"{len(report.leaks)} leak(s); first:\n{report.leaks[0]}"
    # The fuzzer must actually test something: most samples move hidden cards and replay.
    assert report.compared >= report.samples // 2, (
        f"{spec.id} {players}p: only {report.compared} of {report.samples} samples could move a "
        f"hidden card and replay the actions; the fuzzer is too weak for this game"
    )


# -- the fuzzer finds leaks that were put in on purpose -------------------------------------------


def leaky(monkeypatch, spec: GameSpec, view: Callable | None = None, emit: Callable | None = None):
    cls = spec.state_class
    if view is not None:
        original_view = cls.view
        monkeypatch.setattr(
            cls, "view", lambda self, seat: view(self, seat, original_view(self, seat))
        )
    if emit is not None:
        original_emit = cls.emit
        monkeypatch.setattr(
            cls,
            "emit",
            lambda self, data, audience=None: original_emit(self, data, emit(self, data, audience)),
        )


def first_card_of_next_hand(state, seat, view):
    """Leaks one hidden card: the lowest card of the next seat's hand."""
    hand = state.card_locations()[f"hand {(seat + 1) % state.players}"] if seat is not None else []
    if hand:
        view = dict(view, peek=sorted(hand)[0])
    return view


def checksum_of_next_hand(state, seat, view):
    """Leaks no card name, only a number computed from the next seat's hand."""
    if seat is not None:
        hand = state.card_locations()[f"hand {(seat + 1) % state.players}"]
        view = dict(view, hint=sum(state.DECK.order[card] for card in hand))
    return view


def private_events_to_everyone(state, data, audience):
    """Leaks through events: every event meant for some seats only (the deals) goes to all."""
    return None


@pytest.mark.parametrize(
    "injected",
    [first_card_of_next_hand, checksum_of_next_hand, private_events_to_everyone],
    ids=lambda f: f.__name__,
)
@pytest.mark.parametrize("spec", GAMES.values(), ids=list(GAMES))
def test_fuzzer_reports_an_injected_leak(monkeypatch, spec, injected):
    if injected is private_events_to_everyone:
        leaky(monkeypatch, spec, emit=injected)
    else:
        leaky(monkeypatch, spec, view=injected)
    report = fuzz(spec, spec.default_players, range(3), 4)
    assert report.leaks, f"the fuzzer missed {injected.__name__} in {spec.id}"
    assert f"{spec.id} {spec.default_players}p" in report.leaks[0]
