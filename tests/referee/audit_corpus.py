"""The record-audit corpus: real matches of every game, played by real bot processes in two real
tournaments (one without a bank of time, one with), stored in real results files; and the check
of one edited record against its results row (tests/referee/test_record_audit.py,
benchmarks/record_audit.py).

The bots (tests/bots/audit_bot.py and the random bot): one answers by index without spaces (a
compact record's short arrays), one by value, one makes trouble in each match (a line that is
not JSON, an index out of range, a timeout followed by its stale answer, an answer to a request
not yet sent: its fourth fault forfeits the match, so the autopilot plays its seat on).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from arena.referee.record import ReplayError, record_bytes, replay_record
from arena.tournament.audit import Audit
from arena.tournament.store import ResultStore, StoredMatch

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "bots"
# Generous for the honest bots on a busy machine, and a trouble bot's sleep well past it.
TIME = "decision_ms = 300\nmargin_ms = 100\n"
BANK = TIME + "bank_ms = 1500\nincrement_ms = 40\n"
SLEEP_MS = 800
GAMES = (
    '[{ game = "alles-oder-nichts", players = 3 }, '
    '{ game = "vingt-down", options = { max_deals = 3 } }, '
    '{ game = "eight-rounds", players = 3 }, "all-fours"]'
)


def tournament_file(folder: Path, name: str, time: str) -> Path:
    python = sys.executable
    bots = [
        ("trouble", [python, str(BOTS / "audit_bot.py"), "trouble", str(SLEEP_MS)]),
        ("canonical", [python, str(BOTS / "audit_bot.py"), "canonical"]),
        ("random", [python, str(BOTS / "random_bot.py"), "5"]),
    ]
    entries = "".join(
        f'[[bots]]\nname = "{bot}"\nargv = {json.dumps(argv)}\n\n' for bot, argv in bots
    )
    path = folder / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\nseating = "single"\ndeals = 1\nmax_faults = 4\nconcurrency = 2\n'
        f'workers = 1\noutput = "{name}"\ngames = {GAMES}\n\n[time]\n{time}\n{entries}'
    )
    return path


@dataclass(frozen=True)
class CorpusMatch:
    """A stored match of the corpus: its row, its record as stored (compact) and in full."""

    tournament: str
    stored: StoredMatch
    compact: list[bytes]
    full: list[bytes]
    results: Path

    @property
    def game(self) -> str:
        return self.stored.game_id


def build(folder: Path) -> list[CorpusMatch]:
    """Play both tournaments (at once, each by the arena CLI) into ``folder``; their matches."""
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "arena", "tournament", str(tournament_file(folder, name, time))],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "COLUMNS": "200"},
        )
        for name, time in (("plain", TIME), ("banked", BANK))
    ]
    for run in runs:
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, out + err
        assert "deals revealed: seed" in out, out
    return load(folder)


def load(folder: Path) -> list[CorpusMatch]:
    found = []
    for name in ("plain", "banked"):
        results = folder / name / "results.sqlite"
        with ResultStore.open_read(results) as store:
            for stored in store.matches():
                assert stored.record is not None and stored.record.span is not None
                member = stored.record
                at, length = stored.record.span
                with open(member.path, "rb") as file:
                    file.seek(at)
                    data = file.read(length)
                import gzip

                compact = gzip.decompress(data).splitlines()
                full = record_bytes(member).splitlines()
                found.append(CorpusMatch(name, stored, compact, full, results))
    return found


class Checker:
    """``arena replay --check`` of an edited record of a corpus match: re-derived by the rules,
    then compared with its results row, the definition and the seed."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.audits: dict[Path, Audit] = {}

    def audit(self, results: Path) -> Audit:
        if results not in self.audits:
            with ResultStore.open_read(results) as store:
                self.audits[results] = Audit.of(store)
        return self.audits[results]

    def problem(self, match: CorpusMatch, lines: tuple[bytes, ...] | list[bytes]) -> str | None:
        """What the check says of the record ``lines`` as ``match``'s (None: it passes)."""
        path = self.folder / "edited.jsonl"
        path.write_bytes(b"".join(line + b"\n" for line in lines))
        try:
            replay = replay_record(path)
        except ReplayError as error:
            return str(error)
        return self.audit(match.results).match_problems(replay, match.stored, current=True)
