"""Properties of the tournament schedule: duplicate seating, partners, balance, stable ids."""

import hashlib
import itertools
from collections import Counter, defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.tournament.schedule import GamePlan, build_schedule, rotate, team_splits


def bots_named(count):
    return [f"bot{i}" for i in range(count)]


@st.composite
def tournaments(draw, team_game=None):
    team = draw(st.booleans()) if team_game is None else team_game
    players = 4 if team else draw(st.integers(3, 6))
    plan = GamePlan(
        label="g",
        game_id="g",
        players=players,
        deals=draw(st.integers(1, 3)),
        team_size=2 if team else 1,
        max_tables=draw(st.integers(1, 30)),
    )
    bots = bots_named(draw(st.integers(2, 11)))
    seed = draw(st.integers(0, 2**64 - 1))
    return seed, bots, plan


def deals_of(schedule):
    groups = defaultdict(list)
    for match in schedule:
        groups[(match.game, match.table, match.deal)].append(match)
    return groups


@settings(max_examples=60, deadline=None)
@given(tournaments())
def test_every_deal_is_played_in_every_rotation_with_the_same_seed(case):
    seed, bots, plan = case
    schedule = build_schedule(seed, bots, [plan])
    assert len({m.match_id for m in schedule}) == len(schedule)
    for group in deals_of(schedule).values():
        assert sorted(m.rotation for m in group) == list(range(plan.players))
        assert len({m.seed for m in group}) == 1
        table = group[0].seats
        for match in group:
            assert match.seats == rotate(rotate(table, -group[0].rotation), match.rotation)
        # every bot at the table holds every seat's cards equally often
        for seat in range(plan.players):
            assert Counter(m.seats[seat] for m in group) == Counter(table)


@settings(max_examples=60, deadline=None)
@given(tournaments(team_game=True))
def test_partners_stay_together_and_teams_swap_sides(case):
    seed, bots, plan = case
    schedule = build_schedule(seed, bots, [plan])
    for group in deals_of(schedule).values():
        sides = defaultdict(set)
        teams = set()
        for match in group:
            for side in (0, 1):
                team = frozenset(match.seats[s] for s in (side, side + 2))
                teams.add(team)
                sides[team].add(side)
        assert len(teams) == 2 or len(set(bots)) < 4
        if len(bots) >= 4:
            assert all(found == {0, 1} for found in sides.values())


@settings(max_examples=60, deadline=None)
@given(tournaments())
def test_every_bot_holds_the_same_number_of_seats(case):
    seed, bots, plan = case
    schedule = build_schedule(seed, bots, [plan])
    seats = Counter(bot for match in schedule for bot in match.seats)
    assert set(seats) == set(bots)
    assert len(set(seats.values())) == 1


@settings(max_examples=30, deadline=None)
@given(st.integers(7, 14), st.sampled_from([3, 4, 6]), st.booleans(), st.integers(0, 2**32))
def test_sampled_tables_are_balanced(bot_count, players, team, seed):
    """Every bot at the same number of tables; pair meetings close to even (a seeded search, not
    an exact design: within 2 of each other, and most within 1 of the mean)."""
    team = team and players == 4
    plan = GamePlan("g", "g", players, deals=1, team_size=2 if team else 1, max_tables=12)
    bots = bots_named(bot_count)
    schedule = build_schedule(seed, bots, [plan])
    tables = [m.seats for m in schedule if m.rotation == 0]
    assert all(len(set(t)) == players for t in tables)
    plays = Counter(b for t in tables for b in t)
    assert len(set(plays.values())) == 1 and set(plays) == set(bots)
    meets = Counter(frozenset(p) for t in tables for p in itertools.combinations(t, 2))
    counts = [meets[frozenset(p)] for p in itertools.combinations(bots, 2)]
    assert max(counts) - min(counts) <= 2
    mean = sum(counts) / len(counts)
    assert sum(abs(c - mean) <= 1 for c in counts) >= 0.75 * len(counts)


def test_few_bots_play_every_combination_and_every_team_split():
    plan = GamePlan("g", "g", 3, deals=1, max_tables=50)
    tables = {frozenset(m.seats) for m in build_schedule(1, bots_named(5), [plan])}
    assert tables == {frozenset(c) for c in itertools.combinations(bots_named(5), 3)}
    teams = GamePlan("t", "t", 4, deals=1, team_size=2, max_tables=50)
    splits = {
        frozenset([frozenset(m.seats[0::2]), frozenset(m.seats[1::2])])
        for m in build_schedule(1, bots_named(4), [teams])
    }
    assert len(splits) == 3
    assert len(team_splits(bots_named(4), 4, 2)) == 3


def test_two_bots_at_a_team_table_are_each_their_own_team():
    plan = GamePlan("t", "t", 4, deals=2, team_size=2)
    schedule = build_schedule(5, ["a", "b"], [plan])
    assert len(schedule) == 2 * 4
    for match in schedule:
        assert match.seats[0] == match.seats[2] and match.seats[1] == match.seats[3]


def test_single_seating_plays_each_deal_once_rotating_deal_by_deal():
    plan = GamePlan("g", "g", 3, deals=6)
    schedule = build_schedule(5, bots_named(3), [plan], seating="single")
    assert [m.rotation for m in schedule] == [0, 1, 2, 0, 1, 2]


def test_the_schedule_is_stable_and_ids_name_the_match():
    plans = [GamePlan("g", "g", 3, deals=2), GamePlan("h", "h", 4, deals=1, team_size=2)]
    first = build_schedule(9, bots_named(5), plans)
    assert first == build_schedule(9, bots_named(5), plans)
    other = build_schedule(10, bots_named(5), plans)
    assert [m.seed for m in first] != [m.seed for m in other]
    assert first[0].match_id == "g/t0/d0/r0"
    # deal by deal across the games: both games appear before the second deal starts
    firsts = [m.game for m in first if m.deal == 0]
    assert set(firsts) == {"g", "h"}
    assert all(m.deal == 0 for m in first[: len(firsts)])


# Digests of schedules built before the schedule was made lazy and its sampler fast: the same
# matches, seeds, seats and order, so stored results keep their place across versions.
GOLDEN = [
    (
        2026,
        4,
        [("aon", 4, 64, 1, 24), ("vd", 5, 64, 1, 24), ("af", 4, 24, 2, 24)],
        "duplicate",
        1824,
        "50fa6c8c4131622731a4f63e",
    ),
    (7, 9, [("a", 4, 3, 1, 24), ("f", 4, 2, 2, 24)], "duplicate", 360, "d74d06bbec06610b204667d5"),
    (11, 13, [("e", 5, 5, 1, 10)], "single", 65, "270d476a406c24554c46214b"),
    (3, 50, [("g", 6, 2, 1, 24)], "duplicate", 300, "57beed01045020159b9ac071"),
]


def test_schedules_are_those_of_earlier_versions():
    for seed, bot_count, games, seating, length, digest in GOLDEN:
        plans = [
            GamePlan(label=label, game_id="x", players=p, deals=d, team_size=ts, max_tables=mt)
            for label, p, d, ts, mt in games
        ]
        schedule = build_schedule(seed, bots_named(bot_count), plans, seating)
        h = hashlib.sha256()
        for m in schedule:
            h.update(repr((m.match_id, m.seed, m.seats)).encode())
        assert (len(schedule), h.hexdigest()[:24]) == (length, digest)


@settings(max_examples=40, deadline=None)
@given(tournaments(), st.data())
def test_positions_lengths_and_filters_agree_with_iteration(case, data):
    seed, bots, plan = case
    other = GamePlan(label="h", game_id="h", players=3, deals=plan.deals + 2, max_tables=4)
    schedule = build_schedule(seed, bots, [plan, other])
    listed = list(schedule)
    assert len(schedule) == len(listed)
    assert schedule[-1] == listed[-1]
    i = data.draw(st.integers(0, len(listed) - 1))
    assert schedule[i] == listed[i]
    assert schedule.contains_id(listed[i].match_id)
    assert not schedule.contains_id(f"g/t{len(schedule.tables[0])}/d0/r0")
    assert list(schedule.only({"h"})) == [m for m in listed if m.game == "h"]


def test_a_match_ids_position_is_where_it_is_listed():
    """position() inverts schedule[i] for every match, in both seatings and with games of
    different deal counts (several spans), and knows no id the schedule does not hold."""
    for seed, bot_count, games, seating, _length, _digest in GOLDEN:
        plans = [
            GamePlan(label=label, game_id="x", players=p, deals=d, team_size=ts, max_tables=mt)
            for label, p, d, ts, mt in games
        ]
        schedule = build_schedule(seed, bots_named(bot_count), plans, seating)
        assert [schedule.position(m.match_id) for m in schedule] == list(range(len(schedule)))
        assert [
            schedule.position_of(m.game, m.table, m.deal, m.rotation) for m in schedule
        ] == list(range(len(schedule)))
        label = plans[0].label
        for missing in (f"{label}/t0/d{plans[0].deals}/r0", f"{label}/t999/d0/r0", "nope/t0/d0/r0"):
            assert schedule.position(missing) is None
        assert schedule.position_of(label, 0, plans[0].deals, 0) is None
        assert schedule.position_of(label, 0, 0, plans[0].players) is None
    huge = build_schedule(1, bots_named(50), [GamePlan("g", "g", 6, deals=10**12)])
    assert huge.position(huge[len(huge) - 7].match_id) == len(huge) - 7


def test_a_huge_schedule_is_generated_lazily():
    plan = GamePlan(label="g", game_id="g", players=6, deals=10**12)
    schedule = build_schedule(1, bots_named(50), [plan])  # before: 1.6 GB for the tables alone
    assert len(schedule) == 10**12 * 25 * 6
    first = next(iter(schedule))
    assert first == schedule[0] and first.match_id == "g/t0/d0/r0"
    last = schedule[len(schedule) - 1]
    assert (last.deal, last.table, last.rotation) == (10**12 - 1, 24, 5)
    assert last.seed == build_schedule(1, bots_named(50), [plan])[-1].seed
