"""Issue 38, item 9: `arena standings` on a file without a usable cached fold says why it
refolds, and shows its progress (rich's bar on a terminal)."""

from __future__ import annotations

import io
import json
import sqlite3

from rich.console import Console

from arena.render.terminal import RefoldDisplay
from arena.tournament import standings as standings_module
from arena.tournament.standings import FOLD_FORMAT, load_fold
from arena.tournament.store import ResultStore
from tests.tournament.test_sealed_deals import arena
from tests.tournament.test_sealed_edges import small_tournament


def played(tmp_path):
    path = small_tournament(tmp_path / "t", name="refold")
    assert arena("tournament", path).returncode == 0
    return path, tmp_path / "t" / "out" / "results.sqlite"


def test_standings_say_why_they_refold_and_count_the_matches(tmp_path, monkeypatch):
    path, results = played(tmp_path)
    cached = arena("standings", results, "--json")
    assert cached.returncode == 0 and "refolding" not in cached.stderr  # the cache is used
    with sqlite3.connect(results) as db:
        db.execute("DELETE FROM fold_state")
    shown = arena("standings", results, "--json")
    assert shown.returncode == 0, shown.stderr
    json.loads(shown.stdout)  # standard output stays the JSON alone
    assert (
        "refolding the standings of 3 matches: the file holds no cached standings" in shown.stderr
    )
    assert "refolded 3 matches in " in shown.stderr

    # Each reason, and the progress as the matches are folded.
    monkeypatch.setattr(standings_module, "REFOLD_REPORT_EVERY", 1)
    with ResultStore.open_read(results) as store:
        definition = store.definition()
        bots = [b["name"] for b in definition["bots"]]
        games = [g["label"] for g in definition["games"]]
        calls: list = []

        def on_refold(why, total):
            calls.append((why, total))
            return calls.append

        load_fold(store, bots, games, on_refold=on_refold)
        assert calls == [
            ("the file holds no cached standings (written by an older arena, or deleted)", 3),
            1,
            2,
            3,
            3,
        ]
    # A tournament's run writes the cache; one of another margin is refolded, saying so.
    assert arena("tournament", path).returncode == 0
    with ResultStore.open_read(results) as store:
        calls.clear()
        load_fold(store, bots, games, margin_ms=999, on_refold=on_refold)
        assert calls[0] == ("its cached standings are of other margin_ms than its definition's", 3)
        calls.clear()
        load_fold(store, bots, games, on_refold=on_refold)
        assert calls == []  # usable: no refold
    with sqlite3.connect(results) as db:
        db.execute("UPDATE fold_state SET state = x'00'")
    with ResultStore.open_read(results) as store:
        load_fold(store, bots, games, on_refold=on_refold)
        assert (
            calls[0][0]
            == f"its cached standings are of another format (this arena's is {FOLD_FORMAT})"
        )


def test_the_refold_bar_on_a_terminal():
    out = io.StringIO()
    display = RefoldDisplay(Console(file=out, force_terminal=True, width=80))
    advance = display("a reason", 2000)
    advance(1000)
    advance(2000)
    display.close()
    text = out.getvalue()
    assert "refolding the standings of 2000 matches: a reason" in text
    assert "2000/2000" in text or "1000/2000" in text  # rich's bar drew the count
    assert "refolded 2000 matches in " in text
