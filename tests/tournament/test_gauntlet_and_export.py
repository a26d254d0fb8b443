"""Issue 38, item 5: a gauntlet plays only its bots' tables with the round robin's deals and
rotations, and shows the field relative to them; a deal set deals every table from the same
public seeds; `arena export` writes a results file as JSON lines, never a secret seed."""

from __future__ import annotations

import json

from arena.tournament.config import ConfigError, config_from_table
from arena.tournament.schedule import GamePlan, build_schedule
from tests.tournament.test_sealed_deals import arena
from tests.tournament.test_sealed_edges import bots_toml


def test_a_gauntlet_is_the_round_robins_tables_of_its_bots():
    plan = GamePlan("aon", "alles-oder-nichts", players=3, deals=2)
    bots = ["a", "b", "c", "d", "e"]
    full = build_schedule(9, bots, [plan])
    gauntlet = build_schedule(9, bots, [GamePlan(**{**vars(plan), "gauntlet": ("a",)})])
    kept = [m for m in full if "a" in m.seats]
    assert list(gauntlet) == kept  # the same ids, seeds, seats, in the same order
    assert len(gauntlet) == 6 * 2 * 3 and len(full) == 10 * 2 * 3  # C(4,2) of C(5,3) tables
    for position, match in enumerate(gauntlet):
        assert gauntlet.by_id(match.match_id) == match
        assert gauntlet.position(match.match_id) == position
    absent = next(m for m in full if "a" not in m.seats)
    assert gauntlet.by_id(absent.match_id) is None and not gauntlet.contains_id(absent.match_id)


def test_a_deal_set_deals_every_table_from_its_seeds(tmp_path):
    seeds = tmp_path / "deals.txt"
    seeds.write_text("# two deals\n12345\n\n18446744073709551615  # the largest\n")
    table = {
        "name": "book",
        "deals_from": str(seeds),
        "games": [{"game": "aon", "players": 3}],
        "bots": [{"name": f"b{i}", "cmd": "true"} for i in range(4)],
    }
    config = config_from_table(table, source="t")
    assert config.deal_set == (12345, 2**64 - 1)
    assert config.definition()["deals_from"] == [12345, 2**64 - 1]
    schedule = build_schedule(0, [b.name for b in config.bots], config.games)
    assert {m.seed for m in schedule if m.deal == 0} == {12345}
    assert {m.seed for m in schedule if m.deal == 1} == {2**64 - 1}
    assert len({m.table for m in schedule}) == 4
    for wrong, message in (
        ({**table, "deals": 3}, "deals_from: found 2 deals; expected at least as many deals"),
        ({**table, "deals_from": [1, -2]}, "deals_from: found [1, -2]"),
        ({**table, "deals_from": "nowhere.txt"}, 'deals_from: found "nowhere.txt"'),
        ({**table, "format": "gauntlet"}, "gauntlet: found nothing; expected a list of the bots"),
        ({**table, "gauntlet": ["b0"]}, 'gauntlet: found ["b0"]'),
        ({**table, "format": "gauntlet", "gauntlet": ["zz"]}, 'gauntlet: found "zz"'),
    ):
        try:
            config_from_table(wrong, source="t")
        except ConfigError as exc:
            assert message in str(exc), (message, str(exc))
        else:
            raise AssertionError(f"accepted: {wrong}")


def test_a_gauntlet_run_then_the_round_robin_keeps_its_matches(tmp_path):
    path = tmp_path / "g.toml"
    text = (
        'name = "g"\nseed = 8\ndeals = 1\nconcurrency = 1\noutput = "out"\n'
        'games = [{ game = "aon", players = 3 }]\n'
    )
    path.write_text(text + 'format = "gauntlet"\ngauntlet = ["r0"]\n\n' + bots_toml(4))
    run = arena("tournament", path)
    assert run.returncode == 0, run.stderr
    assert "9 matches" in run.stdout and "done: 9 played" in run.stdout  # 3 of 4 tables
    assert "the field against r0 (mean dup difference per deal, bot minus r0)" in run.stdout
    results = tmp_path / "out" / "results.sqlite"
    shown = arena("standings", results)
    assert "Overall: the field against r0" in shown.stdout
    data = json.loads(arena("standings", results, "--json").stdout)
    assert data["overall"]["gauntlet"] == ["r0"]
    # The round robin of the same bots plays only the table without r0: the gauntlet's
    # matches are its own (same deals and rotations).
    path.write_text(text + "\n" + bots_toml(4))
    whole = arena("tournament", path)
    assert "kept 9 stored matches, 3 to play" in whole.stdout, whole.stdout + whole.stderr
    # --gauntlet gives the same from the command line.
    again = arena("tournament", path, "--gauntlet", "r1")  # its tables are all stored now
    assert again.returncode == 0, again.stderr
    assert "9 matches" in again.stdout and "done: 0 played, 9 already stored" in again.stdout
    wrong = arena("tournament", path, "--gauntlet", "nobody")
    assert wrong.returncode == 2 and "--gauntlet: found 'nobody'" in wrong.stderr


def test_export_writes_every_match_and_keeps_a_secret_seed(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text(
        'name = "x"\ndeals = 1\nconcurrency = 1\noutput = "out"\n'
        'games = [{ game = "aon", players = 3 }, { game = "eight", players = 3 }]\n\n'
        + bots_toml(3)
    )
    # Only one of its games now: the tournament has not ended, its secret seed is unrevealed.
    assert arena("tournament", path, "--games", "aon").returncode == 0
    results = tmp_path / "out" / "results.sqlite"
    refused = arena("export", results)
    assert refused.returncode == 2 and refused.stdout == ""
    assert "deals are still secret" in refused.stderr and "--without-seeds" in refused.stderr
    out = tmp_path / "x.jsonl"
    kept = arena("export", results, "--without-seeds", "-o", out)
    assert kept.returncode == 0, kept.stderr
    assert "exported 3 matches" in kept.stderr and "seeds left out" in kept.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 3 and all(line["seed"] is None for line in lines)

    assert arena("tournament", path).returncode == 0  # the rest: it ends, the seed is revealed
    done = arena("export", results)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(rows) == 6 and all(row["seed"].isdigit() for row in rows)
    first = rows[0]
    assert set(first) >= {"game", "options", "seed", "seats", "actions", "scores", "placings"}
    assert first["game"] == "alles-oder-nichts" and len(first["seats"]) == 3
    assert first["actions"] and all(a["by"] in ("bot", "autopilot") for a in first["actions"])
    assert sum(1 for a in first["actions"] if a["action"].startswith("bid:")) >= 3
