"""Scripted Eight Rounds deals: the card removal, every contract's scoring, every patience rule."""

from __future__ import annotations

import pytest

from arena.games import IllegalAction, find_game
from arena.games.cards import STANDARD_52
from arena.games.eight_rounds import CONTRACTS, removed_cards, trick_points, trick_winner
from arena.games.playthrough import random_playout
from tests.games.scripted import events, stacked_match

SPEC = find_game("eight-rounds")


def dead_cards(suits: str, removed: list[str]) -> list[str]:
    """Non-7 cards of suits whose 7 stays in hand: they never fit while the test looks."""
    return [c for c in STANDARD_52.cards if c[-1] in suits and c[:-1] != "7" and c not in removed]


def new_match(players: int, decks: list[list[str]], first_dealer: int):
    return stacked_match(SPEC, players, decks, first_dealer)


def patience_match(players: int, hands: list[list[str]], dealer: int):
    """A match whose round 8 deals exactly ``hands`` (seat 0 first) with ``dealer`` dealing it;
    rounds 1-7 are played out with the first legal action."""
    state = new_match(
        players,
        [[]] * 7 + [[c for hand in hands for c in hand]],
        first_dealer=(dealer - 7) % players,
    )
    while state.round < 7:
        state.apply(state.legal_actions()[0])
    assert state.decision == "patience" and state.dealer_seat == dealer
    assert state.hands == [STANDARD_52.sorted(hand) for hand in hands], (
        "the script deals full hands"
    )
    return state


def turn(state, seat: int, legal: list[str], action: str) -> None:
    """Check whose turn it is and exactly what they may do, then do it."""
    assert state.seat_to_move == seat
    assert state.legal_actions() == legal
    state.apply(action)


# -- the pack ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "removed", "hand_size"),
    [
        (3, ["2D"], 17),
        (4, [], 13),
        (5, ["2D", "2H"], 10),
        (6, ["2D", "2H", "2S", "2C"], 8),
        (7, ["2D", "2H", "2S"], 7),
        (8, ["2D", "2H", "2S", "2C"], 6),
    ],
)
def test_cards_removed_per_player_count_and_all_the_rest_dealt(players, removed, hand_size):
    assert removed_cards(players) == removed
    state = SPEC.new_match(players, {}, seed=3)
    assert state.hand_size == hand_size
    assert [len(hand) for hand in state.hands] == [hand_size] * players
    locations = state.card_locations()
    assert locations["removed"] == removed and locations["stock"] == []
    dealt = {c for seat in range(players) for c in locations[f"hand {seat}"]}
    assert dealt == set(STANDARD_52.cards) - set(removed)
    start = events(state, "round_start")[0]
    assert start["removed"] == removed and start["contract"] == "tricks"
    assert state.view(0)["removed"] == removed and state.view(None)["stock"] == []


def test_the_deal_goes_from_the_front_of_the_shuffled_pack_seat_0_first():
    top = ["AS", "KS", "QS", "JS", "10S", "9S"]
    state = new_match(8, [top], first_dealer=2)
    assert state.hands[0] == STANDARD_52.sorted(top)
    assert state.dealer_seat == 2 and state.seat_to_move == 3
    rest = [c for c in STANDARD_52.without(removed_cards(8)) if c not in top]
    assert state.hands[1] == rest[:6] and state.hands[7] == rest[-6:]


# -- rounds 1-7 --------------------------------------------------------------------------------


def test_each_contract_scores_the_seat_that_takes_everything():
    # The undisturbed pack deals seat 0 all clubs, seat 1 diamonds, seat 2 hearts, seat 3 spades:
    # the leader (dealer's left) leads its suit, nobody can follow, so it takes all 13 tricks.
    state = new_match(4, [[]] * 7, first_dealer=3)
    want = {1: -130, 2: -50, 3: -100, 4: -130, 5: -100, 6: -75, 7: 130}
    totals = [0, 0, 0, 0]
    for number in range(1, 8):
        leader = (3 + number) % 4
        assert state.round + 1 == number and state.seat_to_move == leader
        assert state.view(leader)["contract"] == CONTRACTS[number - 1]
        while state.round + 1 == number:
            state.apply(state.legal_actions()[0])
        end = events(state, "round_end")[-1]
        assert end["round"] == number and end["contract"] == CONTRACTS[number - 1]
        assert end["tricks"] == [13 if seat == leader else 0 for seat in range(4)]
        assert end["points"] == [want[number] if seat == leader else 0 for seat in range(4)]
        totals[leader] += want[number]
        assert end["totals"] == totals
    assert totals == [-230, -125, 30, -130]
    taken = events(state, "round_end")[3]["taken"]
    assert taken[3] == [c for c in STANDARD_52.cards if c[-1] == "H"], "hearts taken are listed"


def test_follow_suit_ace_high_and_a_discard_never_wins():
    # 8 players, 6 cards each; seat 1 leads (dealer 0).
    hands = [
        ["3C", "4C", "5C", "6C", "8C", "9C"],
        ["KD", "AH", "3D", "4D", "5D", "6D"],
        ["AD", "10C", "3H", "4H", "5H", "6H"],
        ["QD", "AS", "3S", "4S", "5S", "6S"],
    ]
    state = new_match(8, [[c for hand in hands for c in hand]], first_dealer=0)
    assert state.seat_to_move == 1
    state.apply("KD")
    assert state.legal_actions() == ["AD"], "seat 2 must follow diamonds"
    with pytest.raises(IllegalAction, match="follow the led suit D") as caught:
        state.apply("10C")
    assert caught.value.seat == 2
    with pytest.raises(IllegalAction, match="pass"):
        state.apply("pass")
    with pytest.raises(IllegalAction, match="do not hold 7C"):
        state.apply("7C")
    state.apply("AD")
    state.apply("QD")
    while not events(state, "trick"):
        state.apply(state.legal_actions()[0])
    trick = events(state, "trick")[0]
    assert trick["winner"] == 2 and trick["number"] == 1 and trick["leader"] == 1
    assert trick["points"] == -10 and state.round_points[2] == -10
    assert state.seat_to_move == 2
    assert state.view(5)["trick_winners"] == [2] and state.view(5)["tricks"][2] == 1


def test_trick_winner_and_points_tables():
    assert trick_winner([(0, "2H"), (1, "AH"), (2, "AS")]) == 1
    assert trick_winner([(0, "10C"), (1, "9C"), (2, "AD")]) == 0
    assert trick_winner([(3, "JS"), (0, "QS"), (1, "KH")]) == 0
    cards = ["KD", "QH", "JH", "2S"]
    assert [trick_points(k, cards, 2, 13) for k in range(7)] == [-10, -50, -25, -20, -25, 0, 10]
    assert [trick_points(5, ["2S"], n, 6) for n in range(1, 7)] == [-25, 0, 0, 0, -25, -25]


def independent_trick_points(contract: int, cards: list[str], number: int, total: int) -> int:
    """The scoring table again, written out card by card, to cross-check whole random matches."""
    per_card = {
        2: lambda c: -50 * (c == "KD"),
        3: lambda c: -25 * (c[0] == "Q"),
        4: lambda c: -10 * (c[-1] == "H"),
        5: lambda c: -25 * (c[0] == "J"),
    }
    if contract == 1:
        return -10
    if contract == 6:
        return -25 * (number in (1, 5, total))
    if contract == 7:
        return 10
    return sum(per_card[contract](c) for c in cards)


@pytest.mark.parametrize("players", [3, 4, 5, 6, 7, 8])
def test_random_matches_score_by_the_tables(players):
    for seed in range(3):
        state = random_playout(SPEC, players, seed)
        ends = events(state, "round_end")
        assert [e["round"] for e in ends] == list(range(1, 9))
        assert [e["dealer"] for e in events(state, "round_start")] == [
            (state.first_dealer + k) % players for k in range(8)
        ]
        trick_events = events(state, "trick")
        per_round = len(trick_events) // 7
        assert per_round == state.hand_size and per_round >= 6
        totals = [0] * players
        for k in range(7):
            points = [0] * players
            for trick in trick_events[k * per_round : (k + 1) * per_round]:
                points[trick["winner"]] += independent_trick_points(
                    k + 1, trick["cards"], trick["number"], per_round
                )
            assert ends[k]["points"] == points
            totals = [t + p for t, p in zip(totals, points)]
            assert ends[k]["totals"] == totals
        last = ends[7]
        out = last["out"]
        assert last["cards_left"][out] == 0 and state.hands[out] == []
        assert last["cards_left"] == [len(h) for h in state.hands]
        assert last["points"] == [
            -10 * p - 5 * c for p, c in zip(last["passes"], last["cards_left"])
        ]
        assert (
            list(state.result().scores)
            == last["totals"]
            == [t + p for t, p in zip(totals, last["points"])]
        )


# -- round 8, the patience -------------------------------------------------------------------


def test_patience_4p_first_seven_must_play_fits_two_before_ace_and_the_anti_deadlock_rule():
    dead = dead_cards("CDS", [])
    hands = [
        ["7H", "6H", "5H", "AH", "7S"] + dead[:8],
        ["8H", "JH", "4H", "7C"] + dead[8:17],
        ["9H", "QH", "3H", "7D"] + dead[17:26],
        ["10H", "KH", "2H"] + dead[26:],
    ]
    state = patience_match(4, hands, dealer=3)
    view = state.view(0)
    assert view["patience"] == {"C": None, "D": None, "H": None, "S": None}
    assert view["phase"] == "patience" and view["round"] == 8 and view["contract"] == "patience"
    # No 7 on the table yet: a seat holding 7s must play one of them; no pass.
    turn(state, 0, ["7H", "7S"], "7H")
    with pytest.raises(IllegalAction, match="must play"):
        state.apply("pass")
    turn(state, 1, ["7C", "8H"], "8H")  # a fitting non-7: no pass offered
    turn(state, 2, ["7D", "9H"], "9H")
    turn(state, 3, ["10H"], "10H")
    turn(state, 0, ["6H", "7S"], "6H")
    turn(state, 1, ["7C", "JH"], "JH")
    turn(state, 2, ["7D", "QH"], "QH")
    turn(state, 3, ["KH"], "KH")
    assert state.view(2)["patience"]["H"] == {"low": "6H", "high": "KH"}
    turn(state, 0, ["5H", "7S"], "5H")
    turn(state, 1, ["7C", "4H"], "4H")
    turn(state, 2, ["7D", "3H"], "3H")
    assert "AH" not in state.fits, "with the 2 still in play the Ace waits for it"
    turn(state, 3, ["2H"], "2H")
    turn(state, 0, ["AH", "7S"], "AH")
    assert state.view(1)["patience"]["H"] == {"low": "AH", "high": "KH"}
    # Hearts are complete; only 7s fit now. Holding only 7s a seat may pass, by choice.
    turn(state, 1, ["7C", "pass"], "pass")
    turn(state, 2, ["7D", "pass"], "pass")
    turn(state, 3, ["pass"], "pass")  # nothing fits: forced
    assert state.view(0)["consecutive_passes"] == 3
    # The previous n-1 = 3 turns were all passes: seat 0 must play its 7.
    with pytest.raises(IllegalAction, match="previous 3 turns were all passes"):
        state.apply("pass")
    turn(state, 0, ["7S"], "7S")
    assert state.view(1)["consecutive_passes"] == 0
    assert state.passes == [0, 1, 1, 1] and state.round_points == [0, -10, -10, -10]
    assert [e["seat"] for e in events(state, "pass")] == [1, 2, 3]
    assert state.view(3)["patience"]["S"] == {"low": "7S", "high": "7S"}
    assert sorted(state.fits) == ["6S", "8S"]


def test_patience_3p_forced_pass_before_the_first_seven_and_the_missing_2d():
    dead = dead_cards("CHS", ["2D"])
    hands = [
        ["6D", "5D", "4D", "AD"] + dead[:13],
        ["7D", "9D", "JD", "KD", "7C", "7S"] + dead[13:24],
        ["8D", "10D", "QD", "3D", "7H"] + dead[24:],
    ]
    state = patience_match(3, hands, dealer=2)
    assert state.sequences["D"][:3] == ["AD", "3D", "4D"]
    turn(state, 0, ["pass"], "pass")  # no 7 and none on the table: forced pass
    turn(state, 1, ["7C", "7D", "7S"], "7D")  # holding 7s before the first 7: no pass
    for seat, card in [
        (2, "8D"),
        (0, "6D"),
        (1, "9D"),
        (2, "10D"),
        (0, "5D"),
        (1, "JD"),
        (2, "QD"),
        (0, "4D"),
        (1, "KD"),
        (2, "3D"),
    ]:
        assert state.seat_to_move == seat and card in state.legal_actions()
        assert "pass" not in state.legal_actions()
        state.apply(card)
    assert state.fits == {"AD"}, "the 2D is out of the pack: the Ace goes onto the 3"
    turn(state, 0, ["AD"], "AD")
    assert state.view(0)["patience"]["D"] == {"low": "AD", "high": "KD"}
    turn(state, 1, ["7C", "7S", "pass"], "pass")
    turn(state, 2, ["7H", "pass"], "pass")
    turn(state, 0, ["pass"], "pass")
    turn(state, 1, ["7C", "7S"], "7S")  # 3 passes in a row >= n - 1 = 2: must play
    assert state.passes == [2, 1, 1]
    assert state.round_points == [-20, -10, -10]


def test_patience_8p_removed_twos_the_end_and_its_penalties():
    removed = removed_cards(8)
    dead = dead_cards("CHS", removed)
    assert len(dead) == 33
    hands = [
        ["7D", "6D", "5D", "4D", "3D", "AD"],
        ["7C", "7H", "7S"] + dead[:3],
        ["8D", "9D", "10D", "JD", "QD", "KD"],
    ] + [dead[3 + 6 * i : 9 + 6 * i] for i in range(5)]
    state = patience_match(8, hands, dealer=7)
    before = list(state.totals)
    for cycle, (mine, theirs) in enumerate(
        zip(["7D", "6D", "5D", "4D", "3D"], ["8D", "9D", "10D", "JD", "QD"])
    ):
        turn(state, 0, [mine] if cycle else ["7D"], mine)
        turn(state, 1, ["7C", "7H", "7S", "pass"], "pass")
        turn(state, 2, [theirs], theirs)
        for seat in range(3, 8):
            turn(state, seat, ["pass"], "pass")
    assert state.view(4)["patience"]["D"] == {"low": "3D", "high": "QD"}
    assert state.view(4)["hand_counts"] == [1, 6, 1, 6, 6, 6, 6, 6]
    turn(state, 0, ["AD"], "AD")  # the last card: the round and match end
    assert state.is_over and state.legal_actions() == []
    end = events(state, "round_end")[-1]
    assert end["out"] == 0
    assert end["passes"] == [0, 5, 0, 5, 5, 5, 5, 5]
    assert end["cards_left"] == [0, 6, 1, 6, 6, 6, 6, 6]
    assert end["points"] == [0, -80, -5, -80, -80, -80, -80, -80]
    assert end["totals"] == [b + p for b, p in zip(before, end["points"])]
    assert list(state.result().scores) == end["totals"]
    assert state.view(3)["phase"] == "over" and state.view(3)["to_move"] is None
    assert not any("AH" in str(e.data) for e in state.events[-3:]), "hands stay hidden at the end"
    with pytest.raises(IllegalAction, match="over"):
        state.apply("pass")


def test_patience_5p_both_missing_twos_and_a_seven_may_be_played_instead_of_a_fit():
    removed = removed_cards(5)
    assert removed == ["2D", "2H"]
    hands = [
        ["7H", "6H", "5H", "4H", "3H", "7D", "6D", "5D", "4D", "3D"],
        ["AH", "AD"] + dead_cards("CS", removed)[:8],
    ]
    rest = [c for c in STANDARD_52.without(removed) if c not in hands[0] + hands[1]]
    hands += [rest[:10], rest[10:20], rest[20:]]
    state = patience_match(5, hands, dealer=4)
    turn(state, 0, ["7D", "7H"], "7H")
    # Seat 0 alone holds the hearts below the 7; the others play their first legal action.
    while state.seat_to_move != 0:
        state.apply(state.legal_actions()[0])
    assert "6H" in state.legal_actions() and "7D" in state.legal_actions()
    state.apply("7D")  # a 7 instead of the fitting 6H is allowed
    while state.hands[0] and state.view(0)["patience"]["H"]["low"] != "3H":
        if state.seat_to_move == 0:
            fitting = [c for c in state.legal_actions() if c[-1] == "H"]
            state.apply(fitting[0])
        else:
            state.apply(state.legal_actions()[0])
    assert "AH" in state.fits and "2H" not in state.fits
