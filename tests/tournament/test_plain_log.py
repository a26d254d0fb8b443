"""Issue 38, item 3: a log a CI can read. Piped, a tournament prints a line per finished match
(fastchess's form), each fault on its line once, the standings every N matches with
--report-every, and no line ends in a space; --quiet prints less."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

from arena.referee.results import FaultCause, FaultKind, FaultRecord
from arena.render.terminal import TrimmedLines
from arena.tournament.runner import finished_line
from tests.tournament.test_sealed_deals import arena
from tests.tournament.test_store import match

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "bots"


def test_a_finished_line_names_the_bots_scores_and_faults_once():
    late = "bot late (seat 2), request {}: no answer in 1000 ms"
    timeout, no_reply = FaultKind.TIMEOUT, FaultCause.NO_REPLY
    faults = (
        FaultRecord(2, "late", timeout, 4, late.format(4), no_reply, forfeits=False),
        FaultRecord(2, "late", timeout, 9, late.format(9), no_reply, forfeits=False),
        FaultRecord(
            0,
            "a",
            FaultKind.ILLEGAL,
            1,
            "bot a (seat 0), request 1: 'x' is not legal",
            FaultCause.ILLEGAL_ACTION,
            forfeits=True,
        ),
    )
    done = match("aon/t0/d3/r1", bots=("a", "b", "late"), scores=(31, 12, -4), faults=faults)
    assert finished_line(done, 12, 1056) == (
        "finished 12/1056 aon/t0/d3/r1: a 31, b 12, late -4 (faults: late timeout x2, a illegal)"
    )
    calm = match("aon/t0/d3/r2", faults=())
    assert finished_line(calm, 13, 1056) == "finished 13/1056 aon/t0/d3/r2: a 10, b 7, a 3"
    cut = match("aon/t0/d3/r3", status="aborted", reason="cut by the match time limit of 9 s")
    assert finished_line(cut, 14, 1056) == (
        "aborted 14/1056 aon/t0/d3/r3: cut by the match time limit of 9 s"
    )
    assert faults[0].reason == "no answer in 1000 ms"


def test_trimmed_lines_drop_trailing_spaces_only():
    out = io.StringIO()
    trimmed = TrimmedLines(out)
    trimmed.write("a  b   \n  c ")
    trimmed.write("  \nend")
    trimmed.flush()
    assert out.getvalue() == "a  b\n  c\nend"


def tournament(tmp_path: Path) -> Path:
    path = tmp_path / "log.toml"
    path.write_text(
        'name = "log"\nseed = 5\ndeals = 2\nconcurrency = 1\noutput = "out"\n'
        'games = [{ game = "aon", players = 3 }]\n\n'
        f'[[bots]]\nname = "r0"\nargv = ["{sys.executable}", "{BOTS / "random_bot.py"}", "1"]\n'
        f'[[bots]]\nname = "r1"\nargv = ["{sys.executable}", "{BOTS / "random_bot.py"}", "2"]\n'
        f'[[bots]]\nname = "bad"\nargv = ["{sys.executable}", "{BOTS / "illegal_bot.py"}"]\n'
    )
    return path


def test_a_piped_run_logs_each_match_each_fault_and_interim_standings(tmp_path):
    path = tournament(tmp_path)
    run = arena("tournament", path, "--report-every", "2")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert not [line for line in lines if line.endswith(" ")]  # no trailing spaces anywhere
    finished = [line for line in lines if line.startswith("finished ")]
    assert [int(re.match(r"finished (\d+)/6 ", line)[1]) for line in finished] == [1, 2, 3, 4, 5, 6]
    ids = {line.split()[2].rstrip(":") for line in finished}
    assert len(ids) == 6
    assert all("(faults: bad illegal x" in line for line in finished)  # it sits at every table
    faults = [line for line in lines if line.startswith("fault: ")]
    assert faults and all(line.count("(seat") == 1 and "bot bad" not in line for line in faults)
    assert re.search(
        r"^fault: alles-oder-nichts/t0/d\d/r\d bad \(seat \d, request \d+\) illegal: ", faults[0]
    )
    assert [line for line in lines if line.startswith("standings after ")] == [
        "standings after 2 of 6 matches:",
        "standings after 4 of 6 matches:",
        "standings after 6 of 6 matches:",
    ]

    quiet = arena("tournament", path, "--restart", "--quiet")
    assert quiet.returncode == 0, quiet.stderr
    assert "finished " not in quiet.stdout and "matches (" not in quiet.stdout.split("Overall")[0]
    assert "fault: " in quiet.stdout and "Overall (6 matches)" in quiet.stdout
    assert "done: 6 played" in quiet.stdout
    assert not [line for line in quiet.stdout.splitlines() if line.endswith(" ")]
