"""The standings fold over stored matches, and its rendering as rich tables."""

import io
import random
from fractions import Fraction

import pytest
import trio
from rich.console import Console

from arena.referee.results import FaultRecord
from arena.render.terminal import live_view, show_progress, standings_table
from arena.stats.deals import Rotation, deal_values
from arena.stats.moments import estimate_values
from arena.tournament import openskill_fast
from arena.tournament import standings as standings_module
from arena.tournament.runner import Progress
from arena.tournament.standings import OVERALL, StandingsFold, compute_standings, standings_as_data
from arena.tournament.store import StoredMatch


def played(
    rotation,
    bots,
    scores,
    placings,
    *,
    game="g",
    game_id="alles-oder-nichts",
    deal=0,
    teams=None,
    forfeited=(),
    faults=(),
    times=None,
    status="completed",
):
    return StoredMatch(
        match_id=f"{game}/t0/d{deal}/r{rotation}",
        game=game,
        game_id=game_id,
        table=0,
        deal=deal,
        rotation=rotation,
        seed=1,
        players=len(bots),
        options={},
        bots=tuple(bots),
        scores=tuple(scores),
        placings=tuple(placings),
        teams=teams,
        forfeited=tuple(forfeited),
        faults=tuple(faults),
        decision_ms=times or tuple((10.0,) for _ in bots),
        status=status,
    )


DEAL = [  # one deal in its three rotations: seat k's cards are the same in each
    played(0, "abc", (10, 4, 1), (1, 2, 3), times=((5.0, 7.0), (1.0,), (2.0,))),
    played(1, "cab", (6, 8, 1), (2, 1, 3), times=((2.0,), (9.0,), (1.0,))),
    played(2, "bca", (9, 2, 4), (1, 3, 2), times=((1.0,), (2.0,), (6.0,))),
]


def rows_by_bot(standings, scope):
    return {row.bot: row for row in standings.tables[scope]}


def test_the_fold_counts_places_scores_and_the_duplicate_comparison():
    standings = compute_standings(DEAL)
    rows = rows_by_bot(standings, "g")
    a, b, c = rows["a"], rows["b"], rows["c"]
    assert (a.played, a.wins, b.wins, c.wins) == (3, 2, 1, 0)
    assert a.mean_placing == pytest.approx(4 / 3) and c.mean_placing == pytest.approx(8 / 3)
    assert a.mean_score == pytest.approx(22 / 3) and c.mean_score == pytest.approx(3)
    # seat means 25/3, 14/3, 2: a's seats differ by +5/3, +10/3, +2 from them
    assert a.duplicate == pytest.approx(7 / 3)
    assert b.duplicate == pytest.approx(-1 / 3)
    assert c.duplicate == pytest.approx(-2)
    assert a.median_ms == 6.5 and b.median_ms == 1.0  # a: 5, 7, 9, 6
    assert [r.bot for r in standings.tables["g"]] == ["a", "b", "c"]
    assert a.mu > b.mu > c.mu and a.sigma < 25 / 3
    overall = rows_by_bot(standings, OVERALL)
    assert overall["a"].mean_score is None and overall["a"].duplicate is None
    assert overall["a"].wins == 2 and standings.matches == {"g": 3, OVERALL: 3}


def test_aborted_matches_do_not_count_and_one_rotation_has_no_duplicate():
    aborted = played(1, "cab", (), (), status="aborted")
    standings = compute_standings([DEAL[0], aborted], bots=["a", "b", "c", "idle"])
    rows = rows_by_bot(standings, "g")
    assert rows["a"].played == 1 and rows["a"].duplicate is None
    assert rows["idle"].played == 0 and rows["idle"].mean_placing is None
    assert standings.matches["g"] == 1


def test_lower_is_better_games_flip_the_duplicate_sign(monkeypatch):
    monkeypatch.setattr(standings_module, "higher_is_better", lambda game_id: False)
    rows = rows_by_bot(compute_standings(DEAL), "g")
    assert rows["a"].duplicate == pytest.approx(-7 / 3)


def test_partners_are_rated_as_one_team():
    teams = (0, 1, 0, 1)
    matches = [
        played(r, "abcd", (14, 6, 14, 6), (1, 3, 1, 3), game="af", game_id="all-fours", teams=teams)
        for r in range(2)
    ]
    rows = rows_by_bot(compute_standings(matches), "af")
    assert rows["a"].mu == pytest.approx(rows["c"].mu) and rows["a"].mu > 25
    assert rows["b"].mu == pytest.approx(rows["d"].mu) and rows["b"].mu < 25


def test_a_forfeited_seat_ranks_last_for_the_rating_and_faults_are_counted():
    faults = (
        FaultRecord.read(0, "a", "timeout", 3, "late"),
        FaultRecord.read(0, "a", "timeout", 5, "late"),
        FaultRecord.read(0, "a", "crash", None, "died"),
    )
    # a's placing says first (as if the referee had not placed it last): it forfeited
    match = played(0, "abc", (10, 4, 1), (1, 2, 3), forfeited=(0,), faults=faults)
    rows = rows_by_bot(compute_standings([match]), "g")
    assert rows["a"].mu < rows["c"].mu < rows["b"].mu
    assert rows["a"].faults == {"crash": 1, "timeout": 2} and rows["a"].forfeits == 1


def test_a_bot_on_both_teams_leaves_the_match_unrated():
    match = played(0, "abca", (14, 6, 14, 6), (1, 2, 1, 2), game="af", teams=(0, 1, 0, 1))
    rows = rows_by_bot(compute_standings([match]), "af")
    assert all(row.mu == 25 for row in rows.values())
    assert rows["a"].played == 2


def test_unrated_matches_are_counted_and_shown():
    """Three bots at All Fours: every table puts one bot on both teams, so nothing is rated,
    and the table says so rather than showing unexplained 25.0 ± 8.3 ratings."""
    tables = [
        played(0, "abca", (14, 6, 14, 6), (1, 2, 1, 2), game="af", teams=(0, 1, 0, 1)),
        played(1, "bcab", (6, 14, 6, 14), (2, 1, 2, 1), game="af", teams=(0, 1, 0, 1)),
    ]
    rated = played(0, "ab", (3, 1), (1, 2), game="g", deal=1)
    standings = compute_standings([*tables, rated])
    assert standings.unrated == {"af": 2, "g": 0, OVERALL: 2}
    assert "all unrated: a bot sat on both teams" in render(standings_table(standings, "af"))
    assert "2 unrated" in render(standings_table(standings, OVERALL), width=160)
    assert "unrated" not in render(standings_table(standings, "g"))
    assert standings_as_data(standings)["af"]["unrated"] == 2


@pytest.mark.parametrize("seed", range(4))
def test_ratings_are_bit_for_bit_those_of_openskill_rate(seed):
    """The fold's update (model objects reused, openskill's steps taken in place) gives what
    PlackettLuce.rate gives, to the last bit: ties, mean placings, teams, new and rated bots."""
    model, rate = openskill_fast.MODEL, openskill_fast.rate
    rng = random.Random(seed)
    players: list = []  # reused across calls, of every size, as a fold reuses its own
    for _ in range(500):
        teams = [
            [
                None if rng.random() < 0.2 else (rng.uniform(-5, 60), rng.uniform(0.01, 9))
                for _ in range(rng.choice((1, 1, 2, 3)))
            ]
            for _ in range(rng.randint(2, 6))
        ]
        ranks = [rng.choice((1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 7.0)) for _ in teams]
        expected = model.rate(
            [[model.rating(*(r or (None, None))) for r in team] for team in teams],
            ranks=list(ranks),
        )
        got = rate(players, teams, ranks)
        assert [[(p.mu.hex(), p.sigma.hex()) for p in team] for team in expected] == [
            [(mu.hex(), sigma.hex()) for mu, sigma in team] for team in got
        ]


def test_the_incremental_fold_matches_the_whole_fold():
    fold = StandingsFold(["a", "b", "c"], ["g"])
    for match in DEAL:
        fold.add(match)
    assert fold.standings() == compute_standings(reversed(DEAL), ["a", "b", "c"])
    early = StandingsFold(["a", "b", "c", "d"])
    assert [r.bot for r in early.standings().tables[OVERALL]] == ["a", "b", "c", "d"]
    assert early.standings().matches == {OVERALL: 0}


def test_json_data_has_every_column():
    data = standings_as_data(compute_standings(DEAL))
    first = data["g"]["rows"][0]
    assert first["bot"] == "a" and first["rank"] == 1 and data["g"]["matches"] == 3
    assert set(first) >= {
        "played",
        "wins",
        "mean_placing",
        "mean_score",
        "duplicate",
        "mu",
        "sigma",
        "ordinal",
        "faults",
        "forfeits",
        "median_ms",
    }


def render(renderable, width=100):
    console = Console(width=width, color_system=None, record=True, force_terminal=False)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines()) + "\n"


GAME_TABLE = """\
g (3 matches)

  #  bot  played  wins  place  score   dup  rating  faults    ms
 ───────────────────────────────────────────────────────────────
 1=  a         3     2   1.33    7.3  +2.3     6.8  -       6.50
 1=  b         3     1   2.00    4.7  -0.3     1.7  -       1.00
 1=  c         3     0   2.67    3.0  -2.0    -2.7  -       2.00

rating: OpenSkill mu - 3 sigma, the sort key
=: not separated from a neighbour at 95%
"""


def test_the_game_table_renders_at_a_fixed_width():
    assert render(standings_table(compute_standings(DEAL), "g")) == GAME_TABLE


def test_the_overall_table_has_no_score_columns_and_shows_faults():
    match = played(
        0,
        "abc",
        (10, 4, 1),
        (3, 1, 2),
        forfeited=(0,),
        faults=(FaultRecord.read(0, "a", "timeout", 3, "late"),),
    )
    text = render(standings_table(compute_standings([match]), OVERALL))
    assert text.splitlines()[0] == "Overall (1 matches)"
    assert "score" not in text and "dup" not in text
    assert "1 timeout, 1 forfeit" in text


def test_the_live_view_shows_progress_and_latest_faults():
    progress = Progress(total=10, already_done=2, done=3, started=100.0)
    progress.note_fault("g/t0/d0/r1 a (seat 0) timeout: late")
    text = render(live_view(compute_standings(DEAL), progress, now=110.0), width=120)
    assert "5/10 matches (50%), 0.30/s, ETA 0m17s" in text
    assert "latest faults:" in text and "g/t0/d0/r1 a (seat 0) timeout: late" in text
    assert "Overall (3 matches)" in text and "g (3 matches)" in text


async def test_without_a_terminal_progress_is_plain_lines_and_every_fault(autojump_clock):
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    progress = Progress(total=4)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(show_progress, progress, lambda: compute_standings(DEAL), console)
        await trio.sleep(1)
        progress.done = 2
        progress.note_fault("g/t0/d0/r1 a (seat 0) timeout: [no reply] in 1000 ms")
        await trio.sleep(10)
        progress.done = 4
        await trio.sleep(1)
        nursery.cancel_scope.cancel()
    lines = out.getvalue().splitlines()
    assert not any(line.startswith("0/4 matches") for line in lines)  # none before a match
    assert any(line.startswith("2/4 matches (50%)") for line in lines)
    assert "fault: g/t0/d0/r1 a (seat 0) timeout: [no reply] in 1000 ms" in lines
    assert lines[-1].startswith("4/4 matches (100%)")
    assert not any("\x1b" in line for line in lines)


def test_a_bots_report_ranks_its_matches_by_duplicate_score():
    from arena.tournament.standings import bot_report, bot_report_as_data

    fault = FaultRecord.read(seat=1, bot="a", kind="timeout", request_id=3, message="no reply")
    deal = [DEAL[0], StoredMatch(**{**vars(DEAL[1]), "faults": (fault,)}), DEAL[2]]
    standings = compute_standings(deal, "abc", ["g"])
    report = bot_report(standings, deal, "a", worst=2)
    # seat means over the rotations: 25/3, 14/3, 2; a held seat 0, then 1, then 2
    assert [(m.match_id, m.seats) for m in report.worst] == [
        ("g/t0/d0/r0", (0,)),
        ("g/t0/d0/r2", (2,)),
    ]
    assert report.worst[0].duplicate == pytest.approx(10 - 25 / 3)
    assert report.worst[1].duplicate == pytest.approx(4 - 2)
    assert [(f.match_id, f.kind, f.message) for f in report.faults] == [
        ("g/t0/d0/r1", "timeout", "no reply")
    ]
    times = report.times["g"]  # a's decisions: 5, 7 (r0), 9 (r1), 6 (r2)
    assert (times.count, times.p50, times.p90, times.max) == (4, 6.0, 9.0, 9.0)
    assert list(report.times) == ["g", OVERALL] and list(report.rows) == ["g", OVERALL]
    assert report.ranks["g"][1] == 3 and report.matches == 3
    data = bot_report_as_data(report)
    assert data["tables"]["g"]["bot"] == "a" and data["tables"]["g"]["of"] == 3
    assert data["worst"][0]["seats"] == [0] and data["decision_ms"]["g"]["p50"] == 6.0


def test_worst_matches_are_ranked_by_the_duplicate_score_over_the_games_spread():
    from arena.tournament.standings import bot_report

    # Game h scores in hundreds: c's worst raw difference there (-323) is mild for h, where
    # seats differ by ~300, while its -2.67 in g (seats differ by ~2) is its worst match.
    h = [
        played(0, "abc", (1000, 0, 500), (1, 3, 2), game="h"),
        played(1, "cab", (960, 990, 20), (2, 1, 3), game="h"),
        played(2, "bca", (1020, 10, 520), (1, 3, 2), game="h"),
    ]
    matches = DEAL + h
    standings = compute_standings(matches, "abc", ["g", "h"])
    report = bot_report(standings, matches, "c", worst=6)
    assert [m.match_id for m in report.worst[:3]] == ["g/t0/d0/r2", "g/t0/d0/r1", "h/t0/d0/r2"]
    assert min(m.duplicate for m in report.worst) == report.worst[2].duplicate  # raw: h first
    for m in report.worst:
        assert m.scaled == pytest.approx(m.duplicate / report.spreads[m.game])
    assert report.spreads["g"] == pytest.approx(1.9245, abs=1e-4)
    only = bot_report(standings, matches, "c", worst=6, game="h")
    assert [m.game for m in only.worst] == ["h"] * 3
    assert list(only.rows) == list(only.times) == ["h"]


def test_tables_fit_the_width_by_dropping_expendable_columns_never_the_name():
    long = "a-very-long-bot-name@1.2.3+3f9a2c1b7d4e"
    matches = [
        played(0, (long, "b", "c"), (10, 4, 1), (1, 2, 3)),
        played(1, ("c", long, "b"), (6, 8, 1), (2, 1, 3)),
    ]
    standings = compute_standings(matches, [long, "b", "c"], ["g"])

    def render(width):
        console = Console(width=width, file=io.StringIO(), color_system=None)
        console.print(standings_table(standings, "g", width))
        return console.file.getvalue()

    wide = render(200)
    assert "not shown" not in wide and " ms" in wide and "faults" in wide
    narrow = render(72)
    assert all(len(line) <= 72 for line in narrow.splitlines())
    assert long in narrow and "#" in narrow  # the name is whole, the rank is there
    assert "faults" in narrow.split("not shown")[0]  # the most useful column is kept longest
    caption = next(line for line in narrow.splitlines() if "not shown" in line)
    assert "ms" in caption and "played" in caption and "faults" not in caption
    tiny = render(30)  # narrower than the name itself: it folds, no character is lost
    assert "".join(tiny.split()).count(long) == 1


# -- intervals by deal, pairs and ties (SPEC 10.6) -------------------------------------------------


def many_deals(deals=8, skill=None, seed=4):
    """Three bots, every deal in its three rotations; seat luck shared by a deal's rotations."""
    skill = skill or {"a": 6, "b": 0, "c": -6}
    rng = random.Random(seed)
    matches = []
    for deal in range(deals):
        luck = [rng.randrange(30) for _ in range(3)]
        for r in range(3):
            bots = "".join("abc"[(k - r) % 3] for k in range(3))
            scores = [luck[k] + skill[bots[k]] + rng.randrange(-4, 5) for k in range(3)]
            placings = [1 + sorted(scores, reverse=True).index(x) for x in scores]
            matches.append(played(r, bots, scores, placings, deal=deal))
    return matches


def test_intervals_are_by_deal_not_by_match():
    matches = many_deals()
    standings = compute_standings(matches)
    a = rows_by_bot(standings, "g")["a"]
    assert a.played == 24 and a.deals == 8
    per_deal = []
    for deal in range(8):
        rotations = [Rotation(m.bots, m.scores, m.placings) for m in matches if m.deal == deal]
        per_deal.append(Fraction(*deal_values(rotations).dup["a"]))
    expected = estimate_values(per_deal)
    assert a.dup_estimate == expected and a.duplicate == pytest.approx(float(sum(per_deal) / 8))
    assert a.dup_estimate.low < a.duplicate < a.dup_estimate.high
    low, high = a.rating_interval
    assert low == pytest.approx(a.mu - 1.96 * a.sigma) and high == pytest.approx(
        a.mu + 1.96 * a.sigma
    )
    assert rows_by_bot(standings, OVERALL)["a"].dup_estimate is None


def test_pairs_ties_and_shared_ranks():
    standings = compute_standings(many_deals(12))
    assert [r.bot for r in standings.tables["g"]] == ["a", "b", "c"]
    ab, ba = standings.pair("g", "a", "b"), standings.pair("g", "b", "a")
    assert ab.metric == "dup" and ab.estimate.n == 12
    assert ab.estimate.mean == pytest.approx(-ba.estimate.mean)
    assert ab.p_better == pytest.approx(1 - ba.p_better) and ab.p_better > 0.99
    assert standings.adjacent["g"] == [ab.p_better, standings.pair("g", "b", "c").p_better]
    assert standings.settled("g") and not any(r.tied for r in standings.tables["g"])
    assert standings.shared_ranks("g") == [1, 2, 3]
    assert standings.pair(OVERALL, "a", "b").metric == "placing"
    # b and c of equal skill: tied, sharing rank 2, and the table is not settled
    close = compute_standings(many_deals(12, {"a": 9, "b": 0, "c": 0}))
    rows = rows_by_bot(close, "g")
    assert not rows["a"].tied and rows["b"].tied and rows["c"].tied
    assert close.shared_ranks("g") == [1, 2, 2] and not close.settled("g")
    text = render(standings_table(close, "g"))
    assert " 2=  " in text and "=: not separated" in text and "±" in text


def test_a_tie_chain_never_ranks_a_bot_last_in_every_match_first():
    """a ~ b and b ~ c are not separated (b once far ahead), but a beats c by about 10 points
    in every deal and c is last in every match: c must not share a's rank 1 through b."""
    matches = []
    for deal in range(12):
        score = {"a": 10 + deal % 3, "b": 1000 if deal == 0 else 1, "c": 0}
        for r in range(3):
            bots = "".join("abc"[(k - r) % 3] for k in range(3))
            scores = [score[bot] for bot in bots]
            placings = [1 + sorted(scores, reverse=True).index(x) for x in scores]
            matches.append(played(r, bots, scores, placings, deal=deal))
    standings = compute_standings(matches)
    assert [r.bot for r in standings.tables["g"]] == ["a", "b", "c"]
    assert all(m.placings[m.bots.index("c")] == 3 for m in matches)
    assert standings.separated["g"] == [False, False]  # the chain: neighbours not separated
    assert standings.shared_ranks("g") == [1, 1, 2]  # c is below a, which is separated from it
    assert all(r.tied for r in standings.tables["g"])
    data = standings_as_data(standings)["g"]["rows"]
    assert [(r["shared_rank"], r["tied"]) for r in data] == [(1, True), (1, True), (2, True)]
    shown = [line.split()[:2] for line in render(standings_table(standings, "g")).splitlines()]
    assert [cells for cells in shown if cells[1:] in (["a"], ["b"], ["c"])] == [
        ["1=", "a"],
        ["1=", "b"],
        ["2=", "c"],
    ]


def test_partners_are_never_a_pair():
    teams = (0, 1, 0, 1)
    matches = [
        played(r, s, (14, 6, 14, 6), (1, 3, 1, 3), game="af", game_id="all-fours", teams=teams)
        for r, s in enumerate(["abcd", "dabc", "cdab", "bcda"])
    ]
    standings = compute_standings(matches)
    met = {(p.row, p.column) for p in standings.pairs["af"]}
    assert ("a", "c") not in met and ("b", "d") not in met and ("a", "b") in met


def test_json_has_intervals_pairs_and_ties():
    data = standings_as_data(compute_standings(many_deals(12)))
    row = data["g"]["rows"][0]
    assert row["duplicate_interval"]["deals"] == 12 and row["shared_rank"] == 1
    assert row["placing_interval"]["low"] < row["mean_placing"] < row["placing_interval"]["high"]
    assert row["p_better_than_next"] > 0.95 and data["g"]["settled"] is True
    assert {"row", "column", "metric", "deals", "mean", "low", "high", "p_better"} <= set(
        data["g"]["pairs"][0]
    )
    assert data["g"]["confidence"] == 0.95
