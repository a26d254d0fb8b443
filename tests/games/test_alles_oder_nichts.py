"""Scripted Alles oder Nichts deals: every scoring cell and every legality rule."""

from __future__ import annotations

import pytest

from arena.games import IllegalAction, find_game
from arena.games.alles_oder_nichts import HAND_SIZES, trick_winner
from arena.games.core import placings
from tests.games.scripted import play, stacked_match

SPEC = find_game("alles-oder-nichts")


def deal(hands_from_seat0: list[list[str]], trump_card: str) -> list[str]:
    return [card for hand in hands_from_seat0 for card in hand] + [trump_card]


def new_match(players: int, decks: list[list[str]], first_dealer: int = 0):
    return stacked_match(SPEC, players, decks, first_dealer)


ROUND_1 = deal(
    [
        ["4G", "5G", "6G", "4B", "5B", "6B"],  # seat 0 (dealer)
        ["7R", "8R", "9R", "10R", "11R", "12R"],  # seat 1 leads
        ["1R", "2R", "3R", "1Y", "2Y", "3Y"],  # seat 2
        ["4R", "5R", "6R", "1G", "2G", "3G"],  # seat 3
    ],
    "12Y",
)
ROUND_2 = deal(
    [
        ["3G", "4G", "7R", "8R", "9R"],  # seat 0
        ["5G", "6G", "10R", "11R", "12R"],  # seat 1 (dealer)
        ["11G", "12G", "1R", "2R", "3R"],  # seat 2 leads
        ["1G", "2G", "4R", "5R", "6R"],  # seat 3
    ],
    "12B",
)


def test_a_round_scores_secret_and_open_bids_exact_and_missed():
    state = new_match(4, [ROUND_1, ROUND_2])
    assert state.dealer_seat == 0 and state.seat_to_move == 1
    assert state.trump == "Y" and state.view(1)["trump_card"] == "12Y"
    # Bids from the dealer's left: 1, 2, 3, then the dealer 0.
    play(state, "bid:3", "bid:2", "bid:0", "bid:1")
    assert state.decision == "declare" and state.seat_to_move == 1
    play(state, "declare:secret", "declare:secret", "declare:open", "declare:open")
    assert state.decision == "play" and state.seat_to_move == 1
    # Three red tricks to seat 1; seat 2 then trumps and leads trumps; seat 3 throws off.
    play(state, "12R", "1R", "4R", "4G")
    play(state, "11R", "2R", "5R", "5G")
    play(state, "10R", "3R", "6R", "6G")
    play(state, "9R", "1Y", "1G", "4B")
    assert state.seat_to_move == 2, "the trump wins the trick"
    play(state, "2Y", "2G", "5B", "8R")
    play(state, "3Y", "3G", "6B", "7R")
    end = [e.data for e in state.events if e.data["type"] == "round_end"][-1]
    assert end["tricks"] == [0, 3, 3, 0]
    # seat 0 open 1, took 0 -> 0; seat 1 secret 3 exact -> 3 + 3; seat 2 secret 2, took 3 -> 3;
    # seat 3 open 0 exact -> 2 * 0 + 3.
    assert end["points"] == [0, 6, 3, 3]
    assert end["bids"] == [1, 3, 2, 0], "secret bids are revealed at round end"
    assert state.totals == [0, 6, 3, 3]

    # Round 2: the deal passed to seat 1; seat 2 leads; open exact with tricks scores 2T + 3.
    assert state.dealer_seat == 1 and state.seat_to_move == 2 and state.trump == "B"
    assert all(len(hand) == HAND_SIZES[1] for hand in state.hands)
    play(state, "bid:2", "bid:0", "bid:5", "bid:3")
    play(state, "declare:open", "declare:secret", "declare:secret", "declare:open")
    play(state, "12G", "1G", "3G", "5G", "11G", "2G", "4G", "6G")
    play(state, "1R", "4R", "7R", "12R", "11R", "2R", "5R", "8R", "10R", "3R", "6R", "9R")
    end = [e.data for e in state.events if e.data["type"] == "round_end"][-1]
    assert end["tricks"] == [0, 3, 2, 0]
    assert end["points"] == [0, 9, 7, 3]
    assert state.totals == [0, 15, 10, 6]


def test_must_follow_the_led_colour_else_anything():
    state = new_match(4, [ROUND_1])
    play(state, "bid:0", "bid:0", "bid:0", "bid:0")
    play(state, *["declare:secret"] * 4)
    state.apply("12R")
    assert state.legal_actions() == ["1R", "2R", "3R"]
    with pytest.raises(IllegalAction, match="follow the led colour R") as caught:
        state.apply("1Y")
    assert caught.value.seat == 2 and caught.value.action == "1Y"
    with pytest.raises(IllegalAction, match="do not hold 4G"):
        state.apply("4G")
    play(state, "1R", "4R")
    assert state.legal_actions() == ["4G", "5G", "6G", "4B", "5B", "6B"], "void: any card"


def test_trump_led_must_be_followed_and_throw_offs_never_win():
    deck = deal(
        [
            ["1Y", "9G", "12G"],  # seat 0 (dealer)
            ["5Y", "1R", "2R"],  # seat 1 leads
            ["11B", "12B", "4R"],  # seat 2
        ],
        "6Y",
    )
    state = new_match(3, [[], [], [], deck], first_dealer=0)
    # Skip to round 4 (3 cards) by playing rounds 1-3 at random with the generic rules.
    while state.round < 3:
        state.apply(state.legal_actions()[0])
    assert HAND_SIZES[state.round] == 3 and state.dealer_seat == 0
    play(state, "bid:1", "bid:0", "bid:1", "declare:open", "declare:open", "declare:open")
    state.apply("5Y")
    assert state.legal_actions() == ["4R", "11B", "12B"], "seat 2 has no trump: anything"
    state.apply("12B")
    assert state.legal_actions() == ["1Y"], "trump led: seat 0 must follow with its trump"
    state.apply("1Y")
    assert state.seat_to_move == 1, "highest trump wins"
    state.apply("1R")
    assert state.legal_actions() == ["4R"]
    state.apply("4R")
    assert state.legal_actions() == ["9G", "12G"]
    state.apply("12G")
    assert state.seat_to_move == 2, "a high throw-off does not beat the led colour"


def test_trick_winner_table():
    assert trick_winner([(0, "3R"), (1, "12R"), (2, "12G")], "Y") == 1
    assert trick_winner([(0, "3R"), (1, "12R"), (2, "1Y")], "Y") == 2
    assert trick_winner([(0, "3Y"), (1, "12R"), (2, "2Y")], "Y") == 0
    assert trick_winner([(0, "3R"), (1, "5Y"), (2, "7Y")], "Y") == 2


def test_bids_stay_secret_until_declared_or_round_end():
    state = new_match(4, [ROUND_1])
    play(state, "bid:3", "bid:2")
    for seat in (0, 3):
        view = state.view(seat)
        assert view["bids"] == [None, None, None, None]
        assert view["has_bid"] == [False, True, True, False]
    assert state.view(1)["bids"] == [None, 3, None, None]
    bid_events = [e for e in state.events if e.data["type"] == "bid"]
    assert all(("bid" in e.data) == (e.audience == (e.data["seat"],)) for e in bid_events)
    play(state, "bid:0", "bid:1", "declare:open")
    assert state.view(3)["bids"] == [None, 3, None, 0], "an open bid is public at once"
    assert state.view(3)["declarations"] == [None, "open", None, None]


def test_seven_rounds_with_the_deal_passing_clockwise_and_co_winners():
    state = SPEC.new_match(3, {}, seed=5)
    dealers, sizes = [], []
    while not state.is_over:
        if state.decision == "bid" and state.bids == [None] * 3:
            dealers.append(state.dealer_seat)
            sizes.append(len(state.hands[0]))
        state.apply(state.legal_actions()[0])
    assert sizes == list(HAND_SIZES)
    assert dealers == [(dealers[0] + i) % 3 for i in range(7)]
    result = state.result()
    assert result.scores == tuple(state.totals)
    assert placings([10, 7, 7, 3]) == (1, 2, 2, 4)
    assert placings([5, 5, 1]) == (1, 1, 3)
