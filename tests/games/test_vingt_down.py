"""Scripted Vingt-down deals: the deal, trump, exchange, every legality rule, every score, the end
and each drop-out case."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from arena.games import IllegalAction, OptionError, find_game
from arena.games.cards import PIQUET_32, Rng, derive_seed
from arena.games.tricks import trick_winner
from arena.games.vingt_down import RANK
from tests.games import test_conformance as conformance
from tests.games.scripted import events, play, stacked_match

SPEC = find_game("vingt-down")


def stacked(
    dealer: int,
    first: dict[int, list[str]],
    second: dict[int, list[str]],
    stock: Sequence[str] = (),
) -> list[str]:
    """The top of a shuffled deck that deals ``first`` (2 each) then ``second`` (3 each) to the
    seats, forehand (the dealer's left) first; then the stock from its top."""
    order = [(dealer + 1 + i) % 4 for i in range(4)]
    return (
        [c for seat in order for c in first[seat]]
        + [c for seat in order for c in second[seat]]
        + list(stock)
    )


def new_match(decks: list[list[str]], first_dealer: int = 3, **options):
    return stacked_match(SPEC, 4, decks, first_dealer, **options)


# Dealer 3, so forehand is seat 0. Spades are nowhere in the hands: with spades trump seat 0's
# hearts win every trick and nobody can follow or trump.
SWEEP = stacked(
    3,
    {0: ["AH", "KH"], 1: ["7C", "8C"], 2: ["QC", "KC"], 3: ["9D", "10D"]},
    {0: ["QH", "JH", "10H"], 1: ["9C", "10C", "JC"], 2: ["AC", "7D", "8D"], 3: ["JD", "QD", "KD"]},
)
HEARTS = ["AH", "KH", "QH", "JH", "10H"]

# Dealer 3, forehand 0; for the legality rules with spades trump.
RULES_DEAL = stacked(
    3,
    {0: ["AC", "QC"], 1: ["KH", "7H"], 2: ["8C", "9H"], 3: ["JD", "QD"]},
    {0: ["7D", "8D", "9D"], 1: ["8H", "9S", "AS"], 2: ["10H", "JH", "QH"], 3: ["KD", "7S", "10S"]},
)


def test_the_deal_positions_stock_and_drawing_from_its_top():
    deck = list(PIQUET_32.cards)[::-1]  # AS KS QS ... 7C: every position is known
    state = new_match([deck], first_dealer=1)  # dealer 1: forehand 2, then 3, 0, dealer 1
    assert state.dealer_seat == 1 and state.forehand == 2
    order = [2, 3, 0, 1]
    for i, seat in enumerate(order):
        assert state.hands[seat] == PIQUET_32.sorted(deck[2 * i : 2 * i + 2])
    assert state.stock == deck[8:]
    state.apply("trump:S")
    for i, seat in enumerate(order):
        want = deck[2 * i : 2 * i + 2] + deck[8 + 3 * i : 8 + 3 * i + 3]
        assert state.hands[seat] == PIQUET_32.sorted(want)
    assert state.stock == deck[20:], "the stock is positions 20-31, position 20 on top"
    hand = state.hands[2]
    play(state, f"discard:{hand[0]},{hand[1]}")
    assert state.hands[2] == PIQUET_32.sorted(hand[2:] + deck[20:22])
    assert state.discards[2] == hand[:2] and state.stock == deck[22:]


def test_forehand_names_any_trump_having_seen_only_two_cards():
    state = new_match([SWEEP])
    assert state.decision == "trump" and state.seat_to_move == 0 and state.deal == 1
    view = state.view(0)
    assert view["hand"] == ["KH", "AH"] and view["hand_counts"] == [2, 2, 2, 2]
    assert view["trump"] is None and view["stock_count"] == 24
    assert state.legal_actions() == ["trump:C", "trump:D", "trump:H", "trump:S"]
    assert [e["cards"] for e in events(state, "deal")] == [
        ["KH", "AH"],
        ["7C", "8C"],
        ["QC", "KC"],
        ["9D", "10D"],
    ]
    with pytest.raises(IllegalAction, match="trump:C, trump:D"):
        state.apply("trump:X")
    state.apply("trump:C")
    assert events(state, "trump") == [{"type": "trump", "suit": "C", "chosen_by": 0}]
    assert state.trump == "C" and state.view(2)["trump_chosen_by"] == 0
    assert [len(h) for h in state.hands] == [5, 5, 5, 5]
    second = [(e.audience, e.data["cards"]) for e in state.events if e.data["type"] == "deal"][4:]
    assert second == [
        ((0,), ["10H", "JH", "QH"]),
        ((1,), ["9C", "10C", "JC"]),
        ((2,), ["AC", "7D", "8D"]),
        ((3,), ["JD", "QD", "KD"]),
    ]
    assert state.decision == "exchange" and state.seat_to_move == 0


def test_all_five_tricks_and_none_without_hearts():
    state = new_match([SWEEP])
    play(state, "trump:S", *["discard:none"] * 4)
    assert state.decision == "play" and state.seat_to_move == 0, "forehand leads"
    for card in ("AH", "KH", "QH", "JH", "10H"):
        state.apply(card)
        assert state.legal_actions() == state.hands[1], "void in hearts and spades: any card"
        play(state, state.hands[1][0], state.hands[2][0], state.hands[3][0])
    end = events(state, "deal_end")[0]
    assert end["tricks"] == [5, 0, 0, 0]
    assert end["points"] == [-10, 5, 5, 5], "-5, a further -5 for all five; +5 for none"
    assert end["totals"] == [10, 25, 25, 25]
    assert not state.is_over and state.deal == 2
    assert state.dealer_seat == 0 and state.forehand == 1, "the deal passes clockwise"
    assert state.decision == "trump" and state.seat_to_move == 1


def test_hearts_trump_doubles_and_reaching_zero_ends_the_match_lowest_wins():
    state = new_match([SWEEP])
    play(state, "trump:H", *["discard:none"] * 4)
    for card in HEARTS:
        play(state, card, state.hands[1][0], state.hands[2][0], state.hands[3][0])
    end = events(state, "deal_end")[0]
    assert end["points"] == [-20, 10, 10, 10]
    assert state.is_over, "a seat is at 0: the match ends after this deal"
    assert state.view(None)["phase"] == "over"
    result = state.result()
    assert result.scores == (0, 30, 30, 30)
    assert result.placings == (1, 2, 2, 2)


def test_follow_suit_else_must_trump_else_any_and_no_duty_to_overtrump():
    state = new_match([RULES_DEAL], max_deals=1)
    play(state, "trump:S", *["discard:none"] * 4)
    state.apply("AC")
    assert state.legal_actions() == ["9S", "AS"], "void in clubs: must trump"
    with pytest.raises(IllegalAction, match="must trump") as caught:
        state.apply("KH")
    assert caught.value.seat == 1
    state.apply("9S")
    assert state.legal_actions() == ["8C"], "must follow suit"
    with pytest.raises(IllegalAction, match="must follow the led suit C"):
        state.apply("10H")
    with pytest.raises(IllegalAction, match="do not hold AD"):
        state.apply("AD")
    state.apply("8C")
    assert state.legal_actions() == ["7S", "10S"], "any trump: no duty to overtrump 9S"
    state.apply("7S")
    assert events(state, "trick")[-1] == {
        "type": "trick",
        "leader": 0,
        "cards": ["AC", "9S", "8C", "7S"],
        "winner": 1,
    }
    assert state.seat_to_move == 1, "the trick's winner leads"
    state.apply("KH")
    assert state.legal_actions() == ["9H", "10H", "JH", "QH"]
    state.apply("9H")
    assert state.legal_actions() == ["10S"], "void in hearts, holds a trump: must trump"
    state.apply("10S")
    assert state.legal_actions() == ["QC", "7D", "8D", "9D"], "void in led and trump: any card"
    state.apply("QC")
    assert state.seat_to_move == 3
    play(state, "KD", "9D", "AS", "10H")  # seat 1 must trump diamonds with its last trump
    play(state, "8H", "JH", "QD", "8D")  # seat 2 wins with JH
    play(state, "QH", "JD", "7D", "7H")
    end = events(state, "deal_end")[0]
    assert end["tricks"] == [0, 2, 2, 1]
    assert end["points"] == [5, -2, -2, -1]
    assert state.is_over, "max_deals = 1"
    result = state.result()
    assert result.scores == (25, 18, 18, 19)
    assert result.placings == (4, 1, 1, 3), "lowest wins; equal lowest share the placing"


def test_trick_winner_table():
    assert trick_winner([(0, "AC"), (1, "7S"), (2, "KC"), (3, "AH")], "S", RANK) == 1
    assert trick_winner([(0, "9C"), (1, "AH"), (2, "KC"), (3, "10C")], "S", RANK) == 2
    assert trick_winner([(0, "8S"), (1, "AH"), (2, "JS")], "S", RANK) == 2, "3 in a trick"
    assert trick_winner([(0, "10D"), (1, "AC"), (2, "AH"), (3, "JD")], "S", RANK) == 3


def test_the_exchange_counts_are_public_discards_and_drawn_cards_private():
    stock = ["9S", "8S", "7S", "QS", "KS", "AS"]
    state = new_match(
        [
            stacked(
                1,
                {2: ["AH", "KH"], 3: ["7C", "8C"], 0: ["QC", "KC"], 1: ["9D", "10D"]},
                {
                    2: ["QH", "JH", "10H"],
                    3: ["9C", "10C", "JC"],
                    0: ["AC", "7D", "8D"],
                    1: ["JD", "QD", "KD"],
                },
                stock,
            )
        ],
        first_dealer=1,
    )
    state.apply("trump:C")
    assert state.seat_to_move == 2, "forehand exchanges first"
    legal = state.legal_actions()
    assert len(legal) == 1 + 5 + 10 + 10
    assert legal[:7] == [
        "discard:none",
        "discard:10H",
        "discard:JH",
        "discard:QH",
        "discard:KH",
        "discard:AH",
        "discard:10H,JH",
    ]
    assert legal[-1] == "discard:QH,KH,AH"
    with pytest.raises(IllegalAction, match="canonical order"):
        state.apply("discard:JH,10H")
    with pytest.raises(IllegalAction, match="at most 3"):
        state.apply("discard:10H,JH,QH,KH")
    with pytest.raises(IllegalAction, match="do not hold 7C"):
        state.apply("discard:7C")
    with pytest.raises(IllegalAction, match="discard:none"):
        state.apply("discard:")

    play(state, "discard:10H,JH")  # seat 2 draws 9S 8S
    play(state, "discard:none")  # seat 3
    play(state, "discard:QC,KC,7D")  # seat 0 draws 7S QS KS
    play(state, "discard:JD")  # seat 1, the dealer, last: draws AS
    assert state.hands[2] == ["QH", "KH", "AH", "8S", "9S"]
    assert state.hands[0] == ["AC", "8D", "7S", "QS", "KS"]
    assert state.hands[1] == ["9D", "10D", "QD", "KD", "AS"]
    assert state.decision == "play" and state.seat_to_move == 2

    view = state.view(3)
    assert view["exchanged"] == [3, 1, 2, 0] and view["stock_count"] == 6
    assert view["discarded"] == []
    assert state.view(0)["discarded"] == ["QC", "KC", "7D"]
    assert state.view(None)["discards"] == [["QC", "KC", "7D"], ["JD"], ["10H", "JH"], []]
    assert {"QC", "KC", "7D"} <= state.hidden_from(3)
    assert not {"QC", "KC", "7D"} & state.hidden_from(0), "a seat knows its own discards"
    assert "AS" in state.hidden_from(0) and "AS" not in state.hidden_from(1)

    exchanges = [e for e in state.events if e.data["type"] == "exchange"]
    mine = [e.data for e in exchanges if e.audience == (0,) and e.data["seat"] == 0]
    assert mine == [
        {
            "type": "exchange",
            "seat": 0,
            "count": 3,
            "discarded": ["QC", "KC", "7D"],
            "drawn": ["7S", "QS", "KS"],
        }
    ]
    public = [e.data for e in exchanges if e.audience == (1, 2, 3) and e.data["seat"] == 0]
    assert public == [{"type": "exchange", "seat": 0, "count": 3}]
    assert all(
        set(e.data) == {"type", "seat", "count"}
        for e in exchanges
        if e.audience != (e.data["seat"],)
    )


def test_hearts_are_trump_from_the_ninth_deal_and_nobody_chooses():
    state = SPEC.new_match(4, {}, seed=11)
    chosen = []
    while not state.is_over and state.deal < 9:
        if state.decision == "trump":
            chosen.append(state.deal)
            state.apply("trump:S")
        else:
            state.apply(state.legal_actions()[0])
    assert not state.is_over, "seed 11 must reach the ninth deal (pick another if rules change)"
    assert chosen == list(range(1, 9))
    assert state.deal == 9 and state.trump == "H" and state.trump_chosen_by is None
    assert state.decision == "exchange" and state.seat_to_move == state.forehand
    assert events(state, "trump")[-1] == {"type": "trump", "suit": "H", "chosen_by": None}
    assert [len(h) for h in state.hands] == [5, 5, 5, 5]


def test_max_deals_ends_the_match_and_options_are_checked():
    state = SPEC.new_match(4, {"max_deals": "3"}, seed=4)
    while not state.is_over:
        state.apply(state.legal_actions()[-1])
    assert state.deal == 3 and min(state.totals) > 0, "nobody at 0: the third deal was the last"
    assert events(state, "deal_start")[-1]["deal"] == 3
    assert state.result().scores == tuple(state.totals)
    with pytest.raises(OptionError, match="max_deals"):
        SPEC.new_match(4, {"max_deals": 0})
    with pytest.raises(OptionError, match="drop_out"):
        SPEC.new_match(4, {"drop_out": "maybe"})
    assert SPEC.new_match(4, {"drop_out": "yes"}).drop_out is True
    assert SPEC.new_match(4).max_deals == 100
    for alias in ("zwanzig-ab", "vingt", "Vingt-Down"):
        assert find_game(alias) is SPEC
    with pytest.raises(OptionError, match="vingt-down"):
        SPEC.new_match(3)


def test_max_deals_reached_without_anyone_at_zero():
    state = new_match([SWEEP], max_deals=1)
    play(state, "trump:S", *["discard:none"] * 4)
    for card in HEARTS:
        play(state, card, state.hands[1][0], state.hands[2][0], state.hands[3][0])
    assert state.is_over and state.deal == 1
    assert state.result().scores == (10, 25, 25, 25) and state.result().placings == (1, 2, 2, 2)


# -- drop_out ----------------------------------------------------------------------------------


def test_drop_out_is_asked_after_the_exchange_but_never_of_forehand():
    state = new_match([SWEEP], drop_out=True)
    play(state, "trump:S", *["discard:none"] * 4)
    asked = []
    while state.decision == "drop":
        asked.append(state.seat_to_move)
        assert state.legal_actions() == ["stay", "drop"]
        state.apply("stay")
    assert asked == [1, 2, 3], "forehand (seat 0) is never asked"
    assert state.decision == "play" and state.seat_to_move == 0
    assert state.view(0)["drops"] == [None, "stay", "stay", "stay"]
    assert events(state, "drop") == [
        {"type": "drop", "seat": s, "choice": "stay"} for s in (1, 2, 3)
    ]


def test_nobody_may_drop_out_with_diamonds_trump():
    state = new_match([SWEEP], drop_out=True)
    play(state, "trump:D", *["discard:none"] * 4)
    assert state.decision == "play" and state.seat_to_move == 0
    assert events(state, "drop") == []


def test_drop_out_is_off_by_default():
    state = new_match([SWEEP])
    play(state, "trump:S", *["discard:none"] * 4)
    assert state.decision == "play"


@pytest.mark.parametrize(("trump", "forehand_points"), [("S", -10), ("H", -20)])
def test_all_three_drop_out_forehand_takes_five_without_play(trump, forehand_points):
    state = new_match([RULES_DEAL], drop_out=True)
    play(state, f"trump:{trump}", *["discard:none"] * 4, "drop", "drop", "drop")
    assert events(state, "play") == [] and events(state, "trick") == []
    assert events(state, "uncontested") == [{"type": "uncontested", "seat": 0, "tricks": 5}]
    end = events(state, "deal_end")[0]
    assert end["tricks"] == [5, 0, 0, 0]
    assert end["dropped"] == [False, True, True, True]
    assert end["points"] == [forehand_points, 0, 0, 0]
    assert state.totals == [20 + forehand_points, 20, 20, 20]
    assert state.is_over == (trump == "H")


def test_a_dropped_player_scores_nothing_and_is_skipped_in_play():
    state = new_match([SWEEP], drop_out=True)
    play(state, "trump:S", *["discard:none"] * 4, "stay", "drop", "stay")
    assert state.view(1)["drops"] == [None, "stay", "drop", "stay"]
    for card in HEARTS:
        assert state.seat_to_move == 0
        state.apply(card)
        assert state.seat_to_move == 1
        state.apply(state.hands[1][0])
        assert state.seat_to_move == 3, "seat 2 dropped out and is skipped"
        state.apply(state.hands[3][0])
        assert len(events(state, "trick")[-1]["cards"]) == 3
    end = events(state, "deal_end")[0]
    assert end["tricks"] == [5, 0, 0, 0]
    assert end["points"] == [-10, 5, 0, 5], "the dropped seat 2 scores nothing (no +5)"
    assert end["dropped"] == [False, False, True, False]
    assert state.totals == [10, 25, 20, 25]
    assert state.deal == 2


def test_random_play_with_drop_out_keeps_every_invariant():
    """The shared conformance checks, with drop_out on and a short match."""
    options = tuple(
        dataclasses.replace(o, default=True)
        if o.name == "drop_out"
        else dataclasses.replace(o, default=12)
        for o in SPEC.options
    )
    variant = dataclasses.replace(SPEC, options=options)
    conformance.test_random_play_keeps_every_invariant(variant, 4)


@pytest.mark.parametrize("drop_out", [False, True])
def test_the_kept_dealer_forehand_and_seats_in_play_are_what_they_derive_from(drop_out):
    """dealer_seat, forehand and in_play are kept as the deal goes on, not derived on each use:
    after every step of random matches they equal what they derive from (deal, drops)."""
    for seed in range(12):
        state = SPEC.new_match(4, {"drop_out": drop_out, "max_deals": 30}, seed)
        chooser = Rng(derive_seed(seed, "kept state"))
        while True:
            dealer = (state.first_dealer + state.deal - 1) % 4
            assert state.dealer_seat == dealer
            assert state.forehand == (dealer + 1) % 4
            assert state.in_play == 4 - state.drops.count("drop")
            if state.is_over:
                break
            legal = state.legal_actions()
            state.apply(legal[chooser.below(len(legal))])
        if drop_out:
            assert any(event.data.get("choice") == "drop" for event in state.events)
