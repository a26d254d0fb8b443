"""Issue 38, item 1: no advice that loses data. ``--restart`` sets the old results, records and
logs aside in a named, timestamped folder that ``arena standings`` and ``arena replay --check``
still read; a results file of another tournament is never offered to ``--restart``; and no
message of the arena advises an action that discards stored matches."""

from __future__ import annotations

import ast
import sqlite3
from pathlib import Path

from arena.tournament.store import ASIDE_FOLDER, ResultStore, StoreError
from tests.tournament.test_sealed_deals import arena
from tests.tournament.test_sealed_edges import small_tournament

ROOT = Path(__file__).resolve().parents[2]


def stored(path: Path) -> int:
    with ResultStore.open_read(path) as store:
        return store.count_matches()


def test_restart_sets_the_results_records_and_logs_aside_where_it_says(tmp_path):
    path = small_tournament(tmp_path / "t", name="cup")
    assert arena("tournament", path).returncode == 0
    out = tmp_path / "t" / "out"
    results = out / "results.sqlite"
    assert stored(results) == 3

    again = arena("tournament", path, "--restart")
    assert again.returncode == 0, again.stderr
    said = next(line for line in again.stdout.splitlines() if line.startswith("--restart:"))
    folders = list((out / ASIDE_FOLDER).iterdir())
    assert len(folders) == 1 and str(folders[0]) in said and "3 stored matches" in said
    aside = folders[0] / "results.sqlite"
    assert f"arena standings {aside}" in said
    assert "done: 3 played, 0 already stored" in again.stdout
    assert stored(results) == 3  # the new run's own three

    # The old matches are whole, and their records moved with them and still found.
    assert stored(aside) == 3
    assert (folders[0] / "records").is_dir() and (folders[0] / "logs").is_dir()
    checked = arena("replay", "--check", aside)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    report = arena("standings", aside, "--bot", "r0")
    assert report.returncode == 0 and str(folders[0] / "records") in report.stdout
    # ... and the new run's records are where the new file says.
    assert arena("replay", "--check", results).returncode == 0


def test_a_results_file_of_another_tournament_is_never_offered_to_restart(tmp_path):
    """The issue's case: --results at another tournament's file while this tournament's output
    folder holds this tournament's records. Refused, with or without --restart, naming both
    files and what they hold; nothing changes."""
    first = small_tournament(tmp_path / "a", name="a")
    second = small_tournament(tmp_path / "b", name="b")
    assert arena("tournament", first).returncode == 0
    assert arena("tournament", second).returncode == 0
    theirs = tmp_path / "a" / "out" / "results.sqlite"
    before = theirs.read_bytes()
    for extra in ((), ("--restart",)):
        refused = arena("tournament", second, "--results", theirs, *extra)
        assert refused.returncode == 2, refused.stdout
        message = refused.stderr.strip()
        assert "\n" not in message and "Traceback" not in message
        assert str(theirs) in message and "(3 stored matches)" in message
        assert "--restart" not in message and "discard" not in message
    # Its own output folder (another folder) cannot make --restart take the other file either.
    own = arena(
        "tournament", second, "--results", theirs, "--restart", "--games", "aon"
    )  # (the same refusal, whatever else is given)
    assert own.returncode == 2
    assert theirs.read_bytes() == before and stored(theirs) == 3
    assert not (tmp_path / "a" / "out" / ASIDE_FOLDER).exists()


def test_restart_into_a_file_of_another_tournament_is_refused_naming_it(tmp_path):
    """The same file, through a tournament whose output is the file's own folder."""
    first = small_tournament(tmp_path / "a", name="a")
    assert arena("tournament", first).returncode == 0
    renamed = tmp_path / "a" / "renamed.toml"
    renamed.write_text(first.read_text().replace('name = "a"', 'name = "renamed"'))
    for extra in ((), ("--restart",)):
        refused = arena(
            "tournament", renamed, "--results", tmp_path / "a" / "out" / "results.sqlite", *extra
        )
        assert refused.returncode == 2
        assert "holds the 3 stored matches of tournament 'a', not 'renamed'" in refused.stderr
        assert "discard" not in refused.stderr
    assert stored(tmp_path / "a" / "out" / "results.sqlite") == 3


def test_messages_that_offer_restart_name_what_is_set_aside(tmp_path):
    path = tmp_path / "r.sqlite"
    definition = {"bots": [{"name": "x", "version": "", "program": {"x.py": "1"}}]}
    with ResultStore.open_for_run(path, name="t", fingerprint="f", definition=definition):
        pass
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema'")
        db.execute(
            "INSERT INTO matches (match_key, match_id, game, game_id, table_no, deal, rotation, "
            "seed, players, options, bots, scores, placings, forfeited, decision_ms, status, "
            "reason, duration_s, finished_at, current) VALUES ('k', 'g/t0/d0/r0', 'g', 'g', 0, "
            "0, 0, '1', 3, '{}', '[]', '[]', '[]', '[]', '[]', 'completed', '', 1, '', 1)"
        )
    try:
        ResultStore.open_for_run(path, name="t", fingerprint="f", definition=definition)
    except StoreError as exc:
        assert "--restart to set its 1 stored matches aside" in str(exc)
    else:
        raise AssertionError("another schema was opened")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema'")
    changed = {"bots": [{"name": "x", "version": "", "program": {"x.py": "2"}}]}
    try:
        ResultStore.open_for_run(path, name="t", fingerprint="g", definition=changed)
    except StoreError as exc:
        assert "its 1 stored matches are not the new program's" in str(exc)
        assert "--restart to set them aside" in str(exc)
    else:
        raise AssertionError("a changed program was opened")
    with ResultStore.open_for_run(
        path, name="t", fingerprint="g", definition=changed, restart=True, output=tmp_path / "o"
    ) as store:
        assert store.aside is not None and store.aside.matches == 1
        assert store.count_matches() == 0
    assert stored(store.aside.results) == 1


def test_no_message_advises_discarding_stored_matches():
    """Every string in the arena's code that mentions --restart says what it keeps, never that
    it discards (the audit of item 1, kept true by this test)."""
    offenders = []
    for source in (ROOT / "arena").rglob("*.py"):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr | ast.Constant) and _mentions_restart(node):
                text = ast.unparse(node)
                if "discard" in text.lower() or "wipe" in text.lower():
                    offenders.append(f"{source.relative_to(ROOT)}:{node.lineno}: {text[:80]}")
    assert not offenders, offenders


def _mentions_restart(node: ast.AST) -> bool:
    return "--restart" in ast.unparse(node)
