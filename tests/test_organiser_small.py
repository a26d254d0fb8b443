"""Issue 38, item 7: the small things an organiser trips on, each verified."""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console

from arena.referee.bot_spec import BotSpec
from arena.referee.process import BotStartupError
from arena.render.terminal import standings_tables
from arena.tournament.pool import broken_bot_line
from arena.tournament.standings import compute_standings
from tests.tournament.test_sealed_deals import arena
from tests.tournament.test_store import match

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "tests" / "bots" / "random_bot.py"


def test_a_preflight_line_quotes_the_bots_stderr_once():
    error = BotStartupError(
        "a", "ended before saying ready: exited with status 1 (stderr: Traceback | boom: no numpy)"
    )
    error.stderr_tail = "Traceback\nboom: no numpy"
    line = broken_bot_line(BotSpec(name="a", argv=("python3", "a.py")), error)
    assert line.count("boom: no numpy") == 1 and "its stderr ends" not in line
    error.stderr_tail = "loading a model..."  # not in the reason: added once
    error.reason = "no ready message within 500 ms"
    line = broken_bot_line(BotSpec(name="a", argv=("python3", "a.py")), error)
    assert line.endswith("no ready message within 500 ms; its stderr ends: loading a model...")


def test_a_preflight_error_prints_no_progress_and_each_line_once(tmp_path):
    dies = tmp_path / "dies.py"
    dies.write_text(
        "import sys\nprint('boom: cannot load weights', file=sys.stderr)\nsys.exit(3)\n"
    )
    run = arena(
        "tournament",
        "--bot", f"a={sys.executable} {dies}",
        "--bot", f"b={sys.executable} {RANDOM_BOT}",
        "--games", "aon", "--deals", "1", "--results", tmp_path / "r" / "r.sqlite",
    )  # fmt: skip
    assert run.returncode == 2
    assert "0/4 matches" not in run.stdout  # no progress line before the error
    assert "2 bots, 1 game, 4 matches" in run.stdout  # and no "1 games"
    assert run.stderr.count("boom: cannot load weights") == 1


def test_arena_games_piped_keeps_every_alias_and_writes_toml_values():
    run = arena("games")
    assert run.returncode == 0
    assert "all-fours-trinidad" in run.stdout and "double-or-nothing" in run.stdout
    assert "(False)" not in run.stdout and "drop_out = false" in run.stdout
    assert not [line for line in run.stdout.splitlines() if line.endswith(" ")]
    narrow = arena("games", "--width", "80")
    assert all(len(line) <= 80 for line in narrow.stdout.splitlines())
    assert "all-fours-trinidad" in narrow.stdout  # folded at spaces, never cut


def test_tables_at_80_columns_cut_no_name_number_or_rank():
    long = "heuristic-with-a-long-name"
    deal = [
        match(
            f"g/t0/d{d}/r{r}",
            deal=d,
            rotation=r,
            bots=bots,
            scores=scores,
            placings=placings,
            faults=(),
            forfeited=(),
        )
        for d in range(3)
        for r, (bots, scores, placings) in enumerate(
            [
                ((long, "random-c", "late"), (31, 12, -4), (1, 2, 3)),
                (("late", long, "random-c"), (2, 40, 7), (3, 1, 2)),
                (("random-c", "late", long), (9, 1, 33), (2, 3, 1)),
            ]
        )
    ]
    standings = compute_standings(deal, [long, "random-c", "late"], ["g"])
    wide = Console(width=400, record=True)
    wide.print(standings_tables(standings))
    whole = [line.split() for line in wide.export_text().splitlines() if long in line]
    assert len(whole) == 2  # the game's table and the overall one
    for width in (80, 60):
        console = Console(width=width, record=True)
        console.print(standings_tables(standings, width))
        text = console.export_text()
        assert all(len(line) <= width for line in text.splitlines())
        rows = [line.split() for line in text.splitlines() if long in line]
        assert len(rows) == 2  # the name whole, on one line, in both tables
        for row, full in zip(rows, whole, strict=True):
            assert row[0] == full[0]  # the rank, with its "=" when tied
            assert all(cell in full for cell in row)  # every number shown whole


def test_replay_of_a_results_file_says_what_it_is_and_what_to_give(tmp_path):
    from tests.tournament.test_sealed_edges import small_tournament

    path = small_tournament(tmp_path / "t", name="given")
    assert arena("tournament", path).returncode == 0
    results = tmp_path / "t" / "out" / "results.sqlite"
    run = arena("replay", results)
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "Usage" not in run.stderr
    assert "is a results file (SQLite), not a match record" in run.stderr
    example = run.stderr.split("(e.g. `", 1)[1].split("`", 1)[0]
    assert arena(*example.split()[1:]).returncode == 0  # the example works as given


def test_on_a_terminal_lines_wrap_at_spaces_and_faults_keep_their_reason():
    """The start line wraps between words on a terminal (not mid-word by the terminal), stays
    one line in a log; the live view's latest faults end with their whole reason."""
    import io

    from arena.cli.tournament import say
    from arena.render.terminal import live_view
    from arena.tournament.runner import Progress

    line = (
        "tournament 'demo': 4 bots, 4 games, 1,056 matches, here in 2 processes, pinned with "
        "their bots (a core per match at once); results in results/demo/results.sqlite"
    )
    words = line.split()
    terminal = Console(file=io.StringIO(), width=50, force_terminal=True, color_system=None)
    say(terminal, line)
    shown = terminal.file.getvalue().splitlines()
    assert len(shown) > 1 and all(len(row) <= 50 for row in shown)
    assert [w for row in shown for w in row.split()] == words  # no word broken in two
    log = Console(file=io.StringIO(), width=50, force_terminal=False)
    say(log, line)
    assert log.file.getvalue() == line + "\n"

    progress = Progress(total=10)
    reason = "no answer in 1000 ms (the referee's latency was 3 ms: the bot's, not the arena's)"
    progress.note_fault(f"aon/t0/d3/r1 late (seat 2, request 4) timeout: {reason}")
    screen = Console(file=io.StringIO(), width=50, force_terminal=True, color_system=None)
    screen.print(live_view(None, progress, now=progress.started + 1, width=20, screen=50))
    text = screen.file.getvalue()
    assert text.count("(seat 2") == 1 and all(len(row) <= 50 for row in text.splitlines())
    fault = " ".join(text.split("latest faults:")[1].split())
    assert fault.endswith(reason)
