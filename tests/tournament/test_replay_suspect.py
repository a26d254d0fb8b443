"""Issue 38, item 2, with real processes: a normal run flags no match, and `--replay suspect`
plays again only the matches the latency warning names, keeping every other and the file as it
was."""

from __future__ import annotations

import json
import sqlite3

from arena.tournament.store import ASIDE_FOLDER, ResultStore
from tests.tournament.test_sealed_deals import arena
from tests.tournament.test_sealed_edges import small_tournament


def test_a_normal_run_flags_nothing_and_replay_suspect_replays_only_the_flagged(tmp_path):
    path = small_tournament(tmp_path / "t", name="quiet")
    # A margin generous enough that the referee's latency stays far below half of it even on
    # a machine that other tests fill (the rule itself is tested with exact figures).
    head, bots = path.read_text().split("[[bots]]", 1)
    path.write_text(head + "[time]\nmargin_ms = 400\n\n[[bots]]" + bots)
    first = arena("tournament", path)
    assert first.returncode == 0, first.stderr
    assert "warning:" not in first.stdout and "--replay" not in first.stdout
    results = tmp_path / "t" / "out" / "results.sqlite"
    with ResultStore.open_read(results) as store:
        matches = store.matches()
    assert len(matches) == 3 and all(m.referee and m.referee["max_ms"] < 200 for m in matches)

    # One match as an overloaded referee would have left it: a worst latency over half the
    # margin and a timeout. Only it is suspect.
    target = matches[1].match_id
    with sqlite3.connect(results) as db:
        referee = {**matches[1].referee, "max_ms": 250.0}
        db.execute(
            "UPDATE matches SET referee = ? WHERE match_id = ?", (json.dumps(referee), target)
        )
        key = db.execute("SELECT match_key FROM matches WHERE match_id = ?", (target,)).fetchone()
        db.execute(
            "INSERT INTO faults VALUES (?, 0, 'r0', 'timeout', 3, 'r0 (seat 0): no answer', "
            "'no reply', 0)",
            key,
        )
        db.execute("DELETE FROM fold_state")
    shown = arena("standings", path)
    assert shown.returncode == 0
    assert f"have a timeout that may be the arena's, not the bot's: {target}" in shown.stdout
    assert f"arena tournament {path} --replay suspect" in shown.stdout

    replayed = arena("tournament", path, "--replay", "suspect")
    assert replayed.returncode == 0, replayed.stderr
    assert f"--replay: playing 1 stored matches again ({target})" in replayed.stdout
    assert "done: 1 played, 2 already stored" in replayed.stdout
    (aside,) = (tmp_path / "t" / "out" / ASIDE_FOLDER).iterdir()
    with ResultStore.open_read(aside / "results.sqlite") as store:
        old = {m.match_id: m for m in store.matches()}
    assert old[target].referee["max_ms"] == 250.0  # the old result, kept
    with ResultStore.open_read(results) as store:
        now = {m.match_id: m for m in store.matches()}
    assert set(now) == set(old) and now[target].referee["max_ms"] < 200
    for other in set(now) - {target}:
        assert now[other].key == old[other].key and now[other].seed == old[other].seed
    assert arena("replay", "--check", results).returncode == 0  # (the copy holds the doctored row)

    nothing = arena("tournament", path, "--replay", "suspect")
    assert "no stored match is suspect" in nothing.stdout and "done: 0 played" in nothing.stdout
    wrong = arena("tournament", path, "--replay", "aon/t9/d9/r9")
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1
    assert "--replay: found 'aon/t9/d9/r9'; expected `suspect` or ids" in wrong.stderr
