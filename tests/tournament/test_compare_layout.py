"""A comparison's matches looked up by id without listing them (the web pages of its results
file): the same matches as ``arena compare`` plays, and no other."""

from arena.tournament.compare import CompareLayout, compare_schedule
from arena.tournament.schedule import GamePlan, match_id

GAMES = [
    GamePlan("aon", "alles-oder-nichts", 4, deals=3),
    GamePlan("vd", "vingt-down", 4, deals=2),
    GamePlan("af", "all-fours", 4, deals=2, team_size=2, max_tables=6),
]


def test_the_layout_has_exactly_the_comparisons_matches() -> None:
    field = ["f1", "f2", "f3", "f4"]  # 5 tables of 4 a game, OLD at 4 of them
    plan = compare_schedule(7, "new", "old", field, GAMES)
    layout = CompareLayout(7, "new", "old", field, GAMES)
    assert len(layout) == len(plan.matches)
    for match in plan.matches:
        assert layout.by_id(match.match_id) == match
    played = {m.match_id for m in plan.matches}
    others = [
        match_id(game.label, table, deal, rotation)
        for game in GAMES
        for table in range(2 * plan.tables[game.label] + 1)
        for deal in range(game.deals + 1)
        for rotation in range(game.players + 1)
    ]
    unplayed = [i for i in others if i not in played]
    assert unplayed and not any(layout.contains_id(i) for i in unplayed)
    assert not layout.contains_id("aon/t01/d0/r0") and not layout.contains_id("nope")
