"""Conformance tests, written once and run over every registered game and player count."""

from __future__ import annotations

import json

import pytest

from arena.games import GAMES, IllegalAction
from arena.games.cards import IN_SUIT, SUIT_CARDS, Deck, Rng, derive_seed
from arena.games.playthrough import random_playout
from arena.games.tricks import follow_suit
from tests.games import fifth_game

SEEDS = range(12)
# Every registered game, and the test-only fifth game (tests/test_fifth_game.py).
SPECS = [*GAMES.values(), fifth_game.SPEC]
CASES = [(spec, players) for spec in SPECS for players in spec.player_counts]
IDS = [f"{spec.id}-{players}p" for spec, players in CASES]


def cards_in(data, deck) -> set[str]:
    """Every card named anywhere in a JSON-like value."""
    found: set[str] = set()
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item in deck.order:
                found.add(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return found


def check_locations(state) -> None:
    """Cards are conserved: every card of the deck is in exactly one place."""
    locations = state.card_locations()
    every = [card for cards in locations.values() for card in cards]
    assert len(every) == len(set(every)), f"a card is in two places: {locations}"
    assert sorted(every) == sorted(state.DECK.cards), f"cards appeared or vanished: {locations}"


def watch_events(state, deck, leaks: list[str]) -> None:
    """Check every event as it is emitted against what each seat may not know at that moment
    (games emit an event once the state reflects it)."""
    emit = state.emit

    def checked_emit(data, audience=None):
        emit(data, audience)
        for seat in range(state.players):
            if audience is None or seat in audience:
                leaked = cards_in(data, deck) & state.hidden_from(seat)
                if leaked:
                    leaks.append(f"seat {seat} was told {sorted(leaked)} in {data}")

    state.emit = checked_emit


def illegal_candidates(state) -> list[str]:
    """Actions that are not legal now: garbage, and every card not among the legal actions."""
    legal = set(state.legal_actions())
    return ["bogus", "", "bid:-1"] + [card for card in state.DECK.cards if card not in legal]


@pytest.mark.parametrize(("spec", "players"), CASES, ids=IDS)
def test_random_play_keeps_every_invariant(spec, players):
    deck = spec.state_class.DECK
    for seed in SEEDS:
        state = spec.new_match(players, {}, seed)
        chooser = Rng(derive_seed(seed, "conformance"))
        leaks: list[str] = []
        for event in state.events:
            for seat in range(players):
                if event.visible_to(seat):
                    assert not cards_in(event.data, deck) & state.hidden_from(seat), event
        watch_events(state, deck, leaks)
        steps = 0
        while not state.is_over:
            legal = state.legal_actions()
            assert legal, f"{spec.id}: no legal action for seat {state.seat_to_move} before the end"
            assert len(set(legal)) == len(legal), f"duplicate legal actions {legal}"
            assert state.decision, "a pending decision needs a kind"
            check_locations(state)
            # No seat sees a card hidden from it: not in its view, not in any event it receives.
            assert not leaks, leaks
            for seat in range(players):
                leaked = cards_in(state.view(seat), deck) & state.hidden_from(seat)
                assert not leaked, f"seat {seat} view shows {leaked}"
            # Every ~7th step: an illegal action raises and changes nothing.
            if steps % 7 == 0:
                before = (
                    json.dumps(state.view(None), sort_keys=True),
                    len(state.events),
                    list(state.actions),
                    list(legal),
                )
                for bad in illegal_candidates(state)[:6]:
                    with pytest.raises(IllegalAction) as caught:
                        state.apply(bad)
                    assert caught.value.seat == state.seat_to_move
                    assert caught.value.reason
                after = (
                    json.dumps(state.view(None), sort_keys=True),
                    len(state.events),
                    list(state.actions),
                    list(state.legal_actions()),
                )
                assert before == after
            # Every ~5th step: a view is a snapshot; what the state keeps for later views (the trick
            # as shown, the last trick...) never changes one handed out before.
            if steps % 5 == 0:
                kept = state.view(state.seat_to_move)
                kept_json = json.dumps(kept, sort_keys=True)
            state.apply(legal[chooser.below(len(legal))])
            if steps % 5 == 0:
                state.view(None)
                assert json.dumps(kept, sort_keys=True) == kept_json, "a view changed afterwards"
            steps += 1
        result = state.result()
        assert len(result.scores) == players and len(result.placings) == players
        assert min(result.placings) == 1
        assert state.legal_actions() == []
        with pytest.raises(IllegalAction):
            state.apply(legal[0])

        replayed = spec.new_match(players, {}, seed)
        for action in state.actions:
            replayed.apply(action)
        assert replayed.result() == result
        assert [e.data for e in replayed.events] == [e.data for e in state.events]


@pytest.mark.parametrize(("spec", "players"), CASES, ids=IDS)
def test_same_seed_same_match_other_seed_other_deal(spec, players):
    a = random_playout(spec, players, 123)
    b = random_playout(spec, players, 123)
    c = random_playout(spec, players, 124)
    assert a.actions == b.actions and a.result() == b.result()
    assert [e.data for e in a.events] != [e.data for e in c.events]


@pytest.mark.parametrize("spec", SPECS, ids=[spec.id for spec in SPECS])
def test_registry_rejects_bad_player_counts_and_options(spec):
    from arena.games import OptionError, find_game

    if spec.id in GAMES:
        assert find_game(spec.id) is spec
        for alias in spec.aliases:
            assert find_game(alias.upper()) is spec
    with pytest.raises(OptionError, match=spec.id):
        spec.new_match(max(spec.player_counts) + 1)
    with pytest.raises(OptionError, match="no_such_option"):
        spec.new_match(spec.default_players, {"no_such_option": 1})
    for option in spec.options:
        with pytest.raises(OptionError, match=option.name):
            spec.resolve_options({option.name: [1, 2]})


def test_a_deck_made_later_is_in_the_suit_filters_like_the_games_decks():
    """The games' legal plays (follow_suit among them) filter by SUIT_CARDS (IN_SUIT), which every Deck fills as it is
    made: a new deck's cards are never left out of a legal list."""
    deck = Deck("test 8", ("H", "X"), ("2", "Z"))
    hand = ["2X", "ZH", "ZX", "2H"]
    assert [*filter(IN_SUIT["X"], hand)] == ["2X", "ZX"]
    assert [*filter(IN_SUIT["H"], hand)] == ["ZH", "2H"]
    assert follow_suit(hand, [(0, "2X")]) == ["2X", "ZX"]
    assert follow_suit(hand, [(1, "ZH")]) == ["ZH", "2H"]
    assert follow_suit(["2X"], [(1, "ZH")]) == ["2X"]  # void: the whole hand
    assert all(card in SUIT_CARDS[card[-1]] for card in deck.cards)
