"""Scripted All Fours deals: the kick, begging, runs, the redeal, play legality and every award.

Deals are stacked with StackedDealer: the first 6 cards go to the dealer's right (the beggar), then
round anticlockwise to the dealer, then the kick; a run deals 3 each in the same order, then a kick.
Where a test needs a match near 14, it sets ``team_scores`` before the award it is about.
"""

from __future__ import annotations

import pytest

from arena.games import IllegalAction, OptionError, find_game
from arena.games.all_fours import AllFours
from arena.games.cards import STANDARD_52, Rng, derive_seed
from tests.games.scripted import events, play, stacked_match

SPEC = find_game("all-fours")


def stack(
    dealer: int, hands: dict[int, str], kick: str, runs: tuple[tuple[dict[int, str], str], ...] = ()
) -> list[str]:
    """A prepared top of deck: hands (seat -> "card card ...") in dealing order, then the kick."""
    order = [(dealer - 1 - i) % 4 for i in range(4)]
    cards = [card for seat in order for card in hands[seat].split()] + [kick]
    for run_hands, run_kick in runs:
        cards += [card for seat in order for card in run_hands[seat].split()] + [run_kick]
    return cards


# Stacked after every scripted deck: a next deal whose kick (2S) scores nothing.
QUIET_DEAL = [card for card in STANDARD_52.cards if card != "2S"][:24] + ["2S"]


def new_match(decks: list[list[str]], first_dealer: int = 0, **options) -> AllFours:
    return stacked_match(SPEC, 4, decks + [QUIET_DEAL], first_dealer, **options)


def awards(state) -> list[tuple[str, int, int]]:
    return [(a["reason"], a["team"], a["points"]) for a in events(state, "award")]


# Dealer 0, so seat 3 begs and leads; trump hearts. Seat 3 (team 1) holds the jack of trumps and
# leads it; seat 2 (team 0) must trump with the ace and wins it: hang jack.
HANG_JACK = stack(
    0,
    {
        3: "JH 2C 3C 4C 5C 7C",
        2: "AH 2D 3D 4D 5D 7D",
        1: "3H 8C 9C 10C QC KC",
        0: "KH 8D 9D 10D QD KD",
    },
    kick="2H",
)
HANG_JACK_PLAY = (
    "JH",
    "AH",
    "3H",
    "KH",
    "2D",
    "8C",
    "KD",
    "2C",  # seat 2 leads; seat 0 wins with KD
    "QD",
    "3C",
    "3D",
    "9C",
    "10D",
    "4C",
    "4D",
    "10C",
    "9D",
    "5C",
    "5D",
    "QC",
    "8D",
    "7C",
    "7D",
    "KC",
)

# Only one trump (5H) is dealt, to seat 2; the only point cards are 10C (won by team 1) and 10D
# (won by team 0): High and Low both to team 0, Game tied at 10.
ONE_TRUMP = stack(
    0,
    {
        3: "10C 2C 3C 4C 5C 7C",
        2: "5H 2D 3D 4D 5D 6D",
        1: "10D 2S 3S 4S 5S 7S",
        0: "6C 8C 9C 7D 8D 9D",
    },
    kick="2H",
)
ONE_TRUMP_PLAY = (
    "10C",
    "2D",
    "2S",
    "6C",
    "2C",
    "5H",
    "10D",
    "8C",
    "3D",
    "3S",
    "7D",
    "3C",
    "8D",
    "4C",
    "4D",
    "4S",
    "9D",
    "5C",
    "5D",
    "5S",
    "9C",
    "7C",
    "6D",
    "7S",
)

FIRST_DEAL = {
    3: "2C 3C 4C 5C 7C 8C",
    2: "2D 3D 4D 5D 7D 8D",
    1: "2H 3H 4H 5H 7H 8H",
    0: "9C 10C QC KC 9D 10D",
}
RUN_1 = {3: "9H 10H QH", 2: "3S 4S 5S", 1: "KH AC AD", 0: "QD KD AH"}
RUN_2 = {3: "JC JD JH", 2: "6C 6D 6H", 1: "8S 9S 10S", 0: "JS QS KS"}


# -- teams, seats and the anticlockwise order ---------------------------------------------------


def test_spec_teams_options_and_aliases():
    assert SPEC.teams(4) == (0, 1, 0, 1)
    assert find_game("allfours") is SPEC and find_game("Trinidad") is SPEC
    assert SPEC.resolve_options({}) == {"no_undertrump": False, "game_points": 1}
    assert SPEC.resolve_options({"no_undertrump": "yes", "game_points": "2"}) == {
        "no_undertrump": True,
        "game_points": 2,
    }
    with pytest.raises(OptionError, match="game_points"):
        SPEC.resolve_options({"game_points": 0})
    with pytest.raises(OptionError, match="all-fours"):
        SPEC.new_match(2)


def test_deal_positions_views_and_anticlockwise_play():
    state = new_match([ONE_TRUMP])
    assert state.dealer_seat == 0 and state.beggar == 3
    assert state.decision == "beg" and state.seat_to_move == 3
    assert state.hands[3] == ["2C", "3C", "4C", "5C", "7C", "10C"], "the beggar is dealt first"
    assert state.hands[0] == ["6C", "8C", "9C", "7D", "8D", "9D"]
    view = state.view(1)
    assert view["teams"] == [0, 1, 0, 1] and view["team"] == 1 and view["partner"] == 3
    assert view["hand"] == ["10D", "2S", "3S", "4S", "5S", "7S"], "canonical order"
    assert view["kick"] == "2H" and view["trump"] is None and "hands" not in view
    everything = state.view(None)
    assert everything["partner"] is None and len(everything["stock"]) == 27
    assert everything["hands"][2] == ["2D", "3D", "4D", "5D", "6D", "5H"]
    start = [e for e in state.events if e.data["type"] in ("hand_start", "deal", "kick")]
    assert [e.data["type"] for e in start] == ["hand_start"] + ["deal"] * 4 + ["kick"]
    assert [e.data["seat"] for e in start[1:5]] == [3, 2, 1, 0]
    assert all(e.audience == (e.data["seat"],) for e in start[1:5]), "a deal is private"
    assert start[5].audience is None and start[5].data["points"] == 0

    state.apply("stand")
    assert state.trump == "H" and state.decision == "play" and state.seat_to_move == 3
    order = []
    for card in ONE_TRUMP_PLAY[:4]:
        order.append(state.seat_to_move)
        state.apply(card)
    assert order == [3, 2, 1, 0], "play goes to the right: seat - 1"
    assert state.seat_to_move == 3, "the 10C wins and its player leads"


# -- the kick, begging, giving and running ------------------------------------------------------


@pytest.mark.parametrize(
    ("kick", "points"), [("AS", 1), ("6S", 2), ("JS", 3), ("KS", 0), ("10S", 0)]
)
def test_the_kick_scores_for_the_dealers_team_at_once(kick, points):
    hands = {
        3: "2C 3C 4C 5C 7C 8C",
        2: "2D 3D 4D 5D 7D 8D",
        1: "2H 3H 4H 5H 7H 8H",
        0: "9C 10C QC KC 9D 10D",
    }
    state = new_match([stack(1, hands, kick)], first_dealer=1)
    assert state.dealer_seat == 1 and state.beggar == 0
    assert state.team_scores == [0, points], "dealer 1 is on team 1"
    assert awards(state) == ([("kick", 1, points)] if points else [])
    assert events(state, "kick")[0] == {
        "type": "kick",
        "card": kick,
        "suit": "S",
        "points": points,
        "team": 1,
        "run": 0,
    }
    assert state.kicked == [kick]


def test_give_one_scores_for_the_beggars_team_and_keeps_the_kick_suit():
    state = new_match([stack(0, FIRST_DEAL, "AS")])
    assert state.team_scores == [1, 0]
    play(state, "beg")
    assert (
        state.decision == "give"
        and state.seat_to_move == 0
        and state.legal_actions() == ["give", "run"]
    )
    with pytest.raises(IllegalAction, match="give .* or run"):
        state.apply("stand")
    play(state, "give")
    assert state.team_scores == [1, 1], "the beggar (seat 3) is on team 1"
    assert awards(state)[-1] == ("give", 1, 1)
    assert state.trump == "S" and state.decision == "play" and state.seat_to_move == 3
    assert events(state, "trump")[-1] == {"type": "trump", "suit": "S", "card": "AS", "how": "give"}


def test_a_run_with_a_new_suit_makes_it_trump_and_the_kick_scores_again():
    state = new_match([stack(0, FIRST_DEAL, "AS", runs=((RUN_1, "6H"),))])
    play(state, "beg", "run")
    assert state.trump == "H" and state.runs == 1
    assert state.team_scores == [3, 0], "A 1, then the run's 6 scores 2 for the dealer's team"
    assert [len(hand) for hand in state.hands] == [9, 9, 9, 9]
    assert state.hands[1] == ["AC", "AD", "2H", "3H", "4H", "5H", "7H", "8H", "KH"]
    assert state.kicked == ["AS", "6H"]
    assert state.decision == "play" and state.seat_to_move == 3, "the beggar leads"
    kinds = [e.data["type"] for e in state.events]
    assert kinds == (
        ["hand_start"]
        + ["deal"] * 4
        + ["kick", "award", "beg", "run"]
        + ["deal"] * 4
        + ["kick", "award", "trump"]
    )
    assert events(state, "deal")[-4]["cards"] == ["9H", "10H", "QH"]
    assert state.view(2)["kicked"] == ["AS", "6H"]
    with pytest.raises(IllegalAction):
        state.apply("beg")


def test_a_same_suit_kick_is_set_aside_and_the_pack_run_again_to_twelve_cards():
    run_2 = {**RUN_2, 3: "JC 6S JH"}
    state = new_match([stack(0, FIRST_DEAL, "2S", runs=((RUN_1, "7S"), (run_2, "JD")))])
    play(state, "beg", "run")
    assert state.trump == "D" and state.runs == 2
    assert [len(hand) for hand in state.hands] == [12, 12, 12, 12]
    assert state.kicked == ["2S", "7S", "JD"]
    assert [k["run"] for k in events(state, "kick")] == [0, 1, 2]
    assert state.team_scores == [3, 0], "only the jack kick scores"
    assert len(state.stock) == 1


def test_the_redeal_when_the_pack_cannot_run_again_keeps_kick_points():
    redealt = stack(
        0,
        {
            3: "2C 3C 4C 5C 7C 8C",
            2: "2D 3D 4D 5D 7D 8D",
            1: "2H 3H 4H 5H 7H 8H",
            0: "9C 10C QC KC 9D 10D",
        },
        "6C",
    )
    state = new_match([stack(0, FIRST_DEAL, "2S", runs=((RUN_1, "7S"), (RUN_2, "AS"))), redealt])
    play(state, "beg", "run")
    kinds = [e.data["type"] for e in state.events]
    redeal_at = kinds.index("redeal")
    assert kinds[redeal_at - 2 :] == ["kick", "award", "redeal"] + ["deal"] * 4 + ["kick", "award"]
    assert events(state, "redeal")[0]["dealer"] == 0
    assert [k["card"] for k in events(state, "kick")] == ["2S", "7S", "AS", "6C"]
    assert state.team_scores == [3, 0], "AS (1) before the redeal stands; 6C adds 2"
    assert state.dealer_seat == 0, "the same dealer deals afresh"
    assert [len(hand) for hand in state.hands] == [6, 6, 6, 6] and len(state.stock) == 27
    assert state.kicked == ["6C"] and state.runs == 0 and state.trump is None
    assert state.decision == "beg" and state.seat_to_move == 3, "a fresh deal: the beggar may beg"
    assert sum(len(cards) for cards in state.card_locations().values()) == 52


def test_kicking_out_to_14_during_a_run_ends_the_match_mid_deal():
    state = new_match([stack(0, FIRST_DEAL, "2S", runs=((RUN_1, "JH"),))])
    state.team_scores = [11, 12]
    play(state, "beg", "run")
    assert state.is_over and state.team_scores == [14, 12]
    assert [len(hand) for hand in state.hands] == [9, 9, 9, 9]
    assert state.trump is None, "trump is never settled: the match ended on the kick"
    assert state.events[-1].data == {"type": "match_won", "team": 0, "scores": [14, 12]}
    result = state.result()
    assert result.scores == (14, 12, 14, 12) and result.placings == (1, 2, 1, 2)
    assert result.teams == (0, 1, 0, 1)
    assert state.view(1)["phase"] == "over" and state.view(1)["to_move"] is None


def test_giving_one_to_14_ends_the_match_at_once():
    state = new_match([stack(0, FIRST_DEAL, "2S")])
    state.team_scores = [0, 13]
    play(state, "beg", "give")
    assert state.is_over and state.result().scores == (0, 14, 0, 14)
    assert not events(state, "trump")


# -- play legality ------------------------------------------------------------------------------

FOLLOW = stack(
    0,
    {
        3: "2C 3C 4C 5C 6C 7C",
        2: "2H 6H 8C 2D 3D 2S",
        1: "3H 4D 5D 6D 7D 8D",
        0: "4H 5H 9C 10C 9D 9S",
    },
    kick="7H",
)


def test_follow_the_led_suit_or_trump_but_never_a_third_suit():
    state = new_match([FOLLOW])
    play(state, "stand", "2C")
    assert state.legal_actions() == ["8C", "2H", "6H"], "clubs led: clubs or any trump"
    with pytest.raises(IllegalAction, match="play C or a trump") as caught:
        state.apply("2D")
    assert caught.value.seat == 2
    with pytest.raises(IllegalAction, match="do not hold 9C"):
        state.apply("9C")
    play(state, "2H")
    assert state.legal_actions() == ["4D", "5D", "6D", "7D", "8D", "3H"], "void in clubs: any card"
    play(state, "4D")
    assert state.legal_actions() == ["9C", "10C", "4H", "5H"]
    play(state, "9C")
    assert state.seat_to_move == 2, "the trump wins"


def test_trump_led_must_be_answered_with_trump():
    state = new_match([FOLLOW])
    play(state, "stand", "2C", "2H", "4D", "9C", "6H")
    assert state.legal_actions() == ["3H"]
    with pytest.raises(IllegalAction, match="must play trump"):
        state.apply("5D")
    play(state, "3H")
    assert state.legal_actions() == ["4H", "5H"], "any trump, lower ones too"
    play(state, "4H")
    assert state.legal_actions() == ["3C", "4C", "5C", "6C", "7C"], "no trump: any card"


UNDERTRUMP = stack(
    0,
    {
        3: "2H 2C 3C 4C 5C 6C",
        2: "9H 2D 3D 4D 5D 6D",
        1: "8C 5H KH 2S 3S 4S",
        0: "3H 4H 6H 7H 8H 10H",
    },
    kick="QH",
)


@pytest.mark.parametrize("no_undertrump", [False, True])
def test_undertrumping_with_the_option_off_and_on(no_undertrump):
    state = new_match([UNDERTRUMP], no_undertrump=no_undertrump)
    play(state, "stand", "2C", "9H")
    if no_undertrump:
        assert state.legal_actions() == ["8C", "KH"], "5H would undertrump the 9H"
        with pytest.raises(IllegalAction, match="no undertrumping"):
            state.apply("5H")
    else:
        assert state.legal_actions() == ["8C", "5H", "KH"]
    play(state, "8C")
    assert state.legal_actions() == ["3H", "4H", "6H", "7H", "8H", "10H"], "only trumps: any"
    play(state, "3H", "2D", "KH", "4H")
    assert state.seat_to_move == 3
    if no_undertrump:
        assert state.legal_actions() == ["3C", "4C", "5C", "6C"], "void, but 2H is below the KH"
    else:
        assert state.legal_actions() == ["3C", "4C", "5C", "6C", "2H"]


def test_no_undertrump_does_not_apply_when_trump_is_led():
    state = new_match([FOLLOW], no_undertrump=True)
    play(state, "stand", "2C", "2H", "4D", "9C", "6H", "3H")
    assert state.legal_actions() == ["4H", "5H"]


# -- scoring at the end of a hand ---------------------------------------------------------------


def test_hang_jack_scores_3_to_the_team_that_takes_the_opponents_jack():
    state = new_match([HANG_JACK])
    play(state, "stand", "JH")
    assert state.legal_actions() == ["AH"], "trump led: seat 2 must trump"
    play(state, *HANG_JACK_PLAY[1:])
    assert awards(state) == [("high", 0, 1), ("low", 1, 1), ("hang_jack", 0, 3), ("game", 0, 1)]
    jack = events(state, "award")[2]
    assert jack["seat"] == 3 and jack["winner"] == 2 and jack["card"] == "JH"
    assert events(state, "award")[0]["card"] == "AH" and events(state, "award")[1]["card"] == "3H"
    end = events(state, "hand_end")[0]
    assert end["card_points"] == [38, 0] and end["scores"] == [5, 1] and end["tricks"] == [6, 0]
    assert state.team_scores == [5, 1]


def test_jack_scores_1_when_the_holders_team_wins_it():
    deck = stack(
        0,
        {
            3: "JH 2C 3C 4C 5C 7C",
            2: "3H 2D 3D 4D 5D 7D",
            1: "AH 8C 9C 10C QC KC",
            0: "KH 8D 9D 10D QD KD",
        },
        kick="2H",
    )
    state = new_match([deck])
    play(state, "stand", "JH", "3H", "AH", "KH")
    assert state.seat_to_move == 1
    while not events(state, "hand_end"):
        state.apply(state.legal_actions()[0])
    given = awards(state)
    assert given[:3] == [("high", 1, 1), ("low", 0, 1), ("jack", 1, 1)]
    points = events(state, "hand_end")[0]["card_points"]
    assert points[0] != points[1] and given[3] == ("game", int(points[1] > points[0]), 1)
    assert len(given) == 4


def test_one_trump_in_play_is_both_high_and_low():
    state = new_match([ONE_TRUMP])
    play(state, "stand", *ONE_TRUMP_PLAY)
    given = events(state, "award")
    assert [(a["reason"], a["team"], a["seat"], a["card"]) for a in given] == [
        ("high", 0, 2, "5H"),
        ("low", 0, 2, "5H"),
    ]


def test_a_game_tie_scores_nothing_and_the_deal_passes_to_the_right():
    state = new_match([ONE_TRUMP])
    play(state, "stand", *ONE_TRUMP_PLAY)
    end = events(state, "hand_end")[0]
    assert end["card_points"] == [10, 10] and end["scores"] == [2, 0]
    assert "game" not in [reason for reason, _, _ in awards(state)], "no jack was dealt either"
    assert events(state, "hand_start")[1] == {
        "type": "hand_start",
        "hand": 2,
        "dealer": 3,
        "beggar": 2,
    }
    assert state.dealer_seat == 3 and state.seat_to_move == 2 and state.decision == "beg"


def test_game_points_option_sets_what_game_is_worth():
    state = new_match([HANG_JACK], game_points=3)
    play(state, "stand", *HANG_JACK_PLAY)
    assert awards(state)[-1] == ("game", 0, 3) and state.team_scores == [7, 1]


@pytest.mark.parametrize(
    ("before", "winner", "final", "given"),
    [
        ([13, 13], 0, [14, 13], ["high"]),  # High comes first and decides 13-13
        ([12, 13], 1, [13, 14], ["high", "low"]),  # Low (team 1) before team 0's hang jack
    ],
)
def test_awards_in_order_decide_the_winner(before, winner, final, given):
    state = new_match([HANG_JACK])
    play(state, "stand", *HANG_JACK_PLAY[:-1])
    state.team_scores = list(before)
    play(state, HANG_JACK_PLAY[-1])
    assert state.is_over and state.team_scores == final
    assert [reason for reason, _, _ in awards(state)] == given
    assert state.events[-1].data["type"] == "match_won" and state.events[-1].data["team"] == winner
    assert not events(state, "hand_end"), "the match ended during the scoring"
    assert list(state.result().placings) == [1 if seat % 2 == winner else 2 for seat in range(4)]


def test_kicking_out_to_14_on_the_next_deal_before_anyone_begs():
    next_deal = stack(3, FIRST_DEAL_AFTER_DEALER_3, "AD")
    state = new_match([ONE_TRUMP, next_deal])
    play(state, "stand", *ONE_TRUMP_PLAY[:-1])
    state.team_scores = [0, 13]
    play(state, ONE_TRUMP_PLAY[-1])
    assert events(state, "hand_end")[0]["scores"] == [2, 13]
    assert state.is_over and state.team_scores == [2, 14], "dealer 3's kicked ace wins it"
    assert state.events[-1].data == {"type": "match_won", "team": 1, "scores": [2, 14]}
    assert [len(hand) for hand in state.hands] == [6, 6, 6, 6]


FIRST_DEAL_AFTER_DEALER_3 = {
    2: "2C 3C 4C 5C 7C 8C",
    1: "2D 3D 4D 5D 7D 8D",
    0: "2H 3H 4H 5H 7H 8H",
    3: "9C 10C QC KC 9D 10D",
}


def test_a_whole_match_ends_at_14_with_partners_sharing_the_result():
    state = SPEC.new_match(4, {}, seed=11)
    dealers = []
    while not state.is_over:
        if (
            state.decision == "beg"
            and not state.begged
            and state.runs == 0
            and (not dealers or dealers[-1][0] != state.hand_number)
        ):
            dealers.append((state.hand_number, state.dealer_seat))
        state.apply(state.legal_actions()[-1])
    assert max(state.team_scores) >= 14 and min(state.team_scores) < 14
    assert [d for _, d in dealers] == [(dealers[0][1] - i) % 4 for i in range(len(dealers))]
    result = state.result()
    assert result.scores[0] == result.scores[2] and result.scores[1] == result.scores[3]
    assert result.placings[0] == result.placings[2] != result.placings[1] == result.placings[3]


def test_random_matches_with_both_options_keep_the_rules():
    """Seeded random play with no_undertrump and game_points 2: cards conserved, every play legal
    by an independent reading of the rules, scores only ever added by award events."""
    for seed in range(6):
        state = SPEC.new_match(4, {"no_undertrump": True, "game_points": 2}, seed=seed)
        chooser = Rng(derive_seed(seed, "all-fours-test"))
        while not state.is_over:
            locations = state.card_locations()
            assert sorted(c for cards in locations.values() for c in cards) == sorted(
                STANDARD_52.cards
            )
            legal = state.legal_actions()
            if state.decision == "play" and state.trick:
                hand, trump = state.hands[state.seat_to_move], state.trump
                led = state.trick[0][1][-1]
                trumped = [STANDARD_52.rank[c] for _, c in state.trick if c[-1] == trump]
                for card in hand:
                    must_trump = led == trump and any(c[-1] == trump for c in hand)
                    third_suit = (
                        led != trump
                        and any(c[-1] == led for c in hand)
                        and card[-1] not in (led, trump)
                    )
                    undertrump = (
                        led != trump
                        and trumped
                        and card[-1] == trump
                        and STANDARD_52.rank[card] < max(trumped)
                        and any(c[-1] != trump for c in hand)
                    )
                    allowed = (
                        not (must_trump and card[-1] != trump) and not third_suit and not undertrump
                    )
                    assert (card in legal) == allowed, (card, hand, state.trick, trump)
            state.apply(legal[chooser.below(len(legal))])
        total = [0, 0]
        for award in events(state, "award"):
            total[award["team"]] += award["points"]
            assert award["reason"] != "game" or award["points"] == 2
        assert total == state.team_scores and max(total) >= 14
