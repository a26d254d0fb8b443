"""Records nobody can edit unnoticed (issue 35): `arena replay --check` re-derives a record (every
line, the clock, every fault's kind) and compares the match with its results row, its definition
and the tournament's seed.

The proof is a mutation test on real records: two real tournaments (real bot processes, real
results files; tests/referee/audit_corpus.py) of every game, with faults of every kind a bot
can earn by its lines, a bank of time, stale replies and forfeits; a generated catalogue of
single edits (tests/referee/record_edits.py: numbers +-1, swapped values, lines deleted,
duplicated and swapped), each applied to a record, compact as stored and in full; every edit
the record and its results row can reveal must be caught, with one line. The test runs each
field kind's first occurrence in one match per game and tournament (its size and catch rate go
to the summary at the end of the run); benchmarks/record_audit.py runs the whole catalogue.
"""

from __future__ import annotations

import fcntl
import gzip
import json
import os
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
import trio
import trio.testing

from arena.games import find_game
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.record import ReplayError, read_record, replay_record
from arena.referee.testing import connect_fake
from tests.referee.audit_corpus import Checker, CorpusMatch, build, load
from tests.referee.record_edits import catalogue, has_short_arrays, unrevealable
from tests.referee.test_hostile_lines import OneLineBot
from tests.referee.test_late_lines import LATE_S
from tests.tournament.test_sealed_deals import arena

GAMES = ("alles-oder-nichts", "vingt-down", "eight-rounds", "all-fours")


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> list[CorpusMatch]:
    """Played once per run, whatever the number of xdist workers (the first builds it under a
    lock in their shared folder, the others read it)."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    folder = shared / "record-audit-corpus"
    with open(shared / "record-audit-corpus.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / "done").exists():
            return load(folder)
        folder.mkdir(exist_ok=True)
        matches = build(folder)
        (folder / "done").write_text("")
        return matches


def test_the_corpus_holds_every_game_fault_and_clock(corpus, tmp_path):
    assert {m.game for m in corpus} == set(GAMES)
    entries = [json.loads(line) for m in corpus for line in m.full]
    verdicts = Counter(e["verdict"] for e in entries if e["type"] == "reply")
    assert {"ok", "malformed", "illegal", "stale"} <= set(verdicts), verdicts
    faults = {e["kind"] for e in entries if e["type"] == "fault"}
    assert {"malformed", "illegal", "timeout"} <= faults
    assert any(e["type"] == "autopilot" for e in entries)  # a forfeited seat played on
    assert any(e["type"] == "reply" and (e["charged_ms"] or 0) > 0 for e in entries)  # a bank
    assert all(has_short_arrays(m.compact) for m in corpus if m.tournament == "plain")
    checker = Checker(tmp_path)
    for match in corpus:  # the real records pass, compact and in full
        assert checker.problem(match, match.compact) is None
        assert checker.problem(match, match.full) is None
    for name in ("plain", "banked"):
        checked = arena(
            "replay", "--check", corpus[0].results.parent.parent / name / "results.sqlite"
        )
        assert checked.returncode == 0, checked.stderr
        assert "matches checked against their records; the revealed seed" in checked.stdout
        assert "opens the commitment" in checked.stdout


@pytest.mark.parametrize("game", GAMES)
def test_every_edit_the_record_and_its_row_can_reveal_is_caught(
    corpus, game, tmp_path, record_property
):
    checker = Checker(tmp_path)
    picked = {m.tournament: m for m in reversed(corpus) if m.game == game}  # (the first of each)
    total, revealable, caught, exempt, missed = 0, 0, 0, Counter(), []
    for match in picked.values():
        for compact, lines in ((True, match.compact), (False, match.full)):
            short = compact and has_short_arrays(lines)
            for edit in catalogue(lines, last=False):
                total += 1
                problem = checker.problem(match, edit.lines)
                assert problem is None or "\n" not in problem, (edit.what, problem)
                why = unrevealable(edit, lines, compact, short)
                if why is not None:
                    exempt[why] += 1
                    continue
                revealable += 1
                if problem is not None:
                    caught += 1
                else:
                    form = "compact" if compact else "full"
                    missed.append(f"{match.tournament} {form} {edit.what}")
    summary = (
        f"{game}: {total} single edits of {2 * len(picked)} real records, {revealable} of them "
        f"revealable by the record and its results row: {caught} caught"
    )
    record_property("record_audit", summary)
    assert missed == [], f"{summary}; missed: {missed[:20]}"
    assert revealable > 500


def test_a_header_that_names_another_sent_id_or_name_is_caught(corpus, tmp_path):
    """The id the bots were sent follows from the results file's key (SPEC 4.1), the names they
    were sent from the definition: a header that says otherwise is caught."""
    checker = Checker(tmp_path)
    match = corpus[0]
    header = json.loads(match.full[0])
    assert checker.problem(match, match.full) is None
    for edited, said in (
        ({**header, "sent_match_id": "0123456789abcdef"}, "sent_match_id: '0123456789abcdef'"),
        (
            {
                **header,
                "seats": [{**header["seats"][0], "sent_name": "candidate"}, *header["seats"][1:]],
            },
            "seats[0].sent_name: the definition sends",
        ),
    ):
        lines = [json.dumps(edited, separators=(",", ":")).encode(), *match.full[1:]]
        problem = checker.problem(match, lines)
        assert problem is not None and said in problem, problem


def _member(match: CorpusMatch) -> tuple[Path, int, int]:
    assert match.stored.record is not None and match.stored.record.span is not None
    return match.stored.record.path, *match.stored.record.span


def test_a_row_that_says_otherwise_fails_the_check_in_one_line(corpus, tmp_path):
    """A records file's match and its results row disagreeing (here: the row's scores), found by
    `arena replay --check --match` and by the check of the whole results file."""
    import shutil

    source = corpus[0].results.parent
    copy = tmp_path / "copy"
    shutil.copytree(source, copy)
    match = next(m for m in corpus if m.results.parent == source and m.game == "all-fours")
    records, at, length = _member(match)
    records = copy / "records" / records.name
    good = arena("replay", "--check", records, "--match", match.stored.match_id)
    assert good.returncode == 0, good.stderr
    assert "and with its row in" in good.stdout and "opens the commitment" in good.stdout
    scores = list(match.stored.scores)
    scores[0] += 1
    with sqlite3.connect(copy / "results.sqlite") as db:  # (the row, edited from outside)
        db.execute(
            "UPDATE matches SET scores = ? WHERE match_id = ?",
            (json.dumps(scores), match.stored.match_id),
        )
    bad = arena("replay", "--check", records, "--match", match.stored.match_id)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert bad.stderr.count("\n") == 1
    assert f"scores: the results file has {json.dumps(scores).replace(' ', '')}" in bad.stderr
    whole = arena("replay", "--check", copy / "results.sqlite")
    assert whole.returncode == 1
    assert whole.stderr.splitlines()[0].startswith(f"{match.stored.match_id}: {records}")


def test_swapped_seat_names_in_a_header_are_caught(corpus, tmp_path):
    """The header's bots swapped between two seats (no fault line names them): the rules take
    it, the results row does not (it was accepted before)."""
    checker = Checker(tmp_path)
    for match in corpus:
        header = json.loads(match.compact[0])
        seats = header["seats"]
        pairs = [
            (i, j)
            for i in range(len(seats))
            for j in range(i)
            if seats[i]["bot"] != seats[j]["bot"]
        ]
        if not pairs:
            continue
        i, j = pairs[0]
        seats[i]["bot"], seats[j]["bot"] = seats[j]["bot"], seats[i]["bot"]
        edited = [json.dumps(header, separators=(",", ":")).encode(), *match.compact[1:]]
        problem = checker.problem(match, edited)
        assert problem is not None and ("bots:" in problem or '"bot"' in problem), problem


def test_a_seats_own_limit_or_a_stopped_line_in_a_tournament_record_is_caught(corpus, tmp_path):
    """What only `arena play` writes (a person's own limit per decision, a stopped match: SPEC
    11) is refused in a tournament's record: its seat would have had more time than the
    definition gives, and a stopped match is not the stored one."""
    checker = Checker(tmp_path)
    match = corpus[0]
    header = json.loads(match.compact[0])
    header["seats"][1]["decision_ms"] = 10 * header["time_control"]["decision_ms"]
    edited = [json.dumps(header, separators=(",", ":")).encode(), *match.compact[1:]]
    problem = checker.problem(match, edited)
    assert problem is not None and "seat 1" in problem, problem
    stopped = [*match.compact[:-1], b'{"type":"stopped","reason":"stopped"}']
    assert checker.problem(match, stopped) is not None


def test_a_deeply_nested_line_is_one_line_not_a_traceback(tmp_path, corpus):
    deep = b'{"type":"reply","x":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    path = tmp_path / "deep.jsonl"
    path.write_bytes(corpus[0].full[0] + b"\n" + deep + b"\n")
    with pytest.raises(ReplayError, match="line 2: not JSON: JSON nested too deeply"):
        read_record(path)
    compact = tmp_path / "deep.jsonl.gz"
    compact.write_bytes(gzip.compress(corpus[0].compact[0] + b"\n" + deep + b"\n"))
    with pytest.raises(ReplayError, match="line 2: not JSON: JSON nested too deeply"):
        replay_record(compact)
    done = arena("replay", "--check", path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "nested too deeply" in done.stderr


def test_a_compact_record_without_a_shuffle_line_is_caught(corpus, tmp_path):
    """Each shuffle line of a compact record is kept for readers without the rules: one
    deleted went unnoticed before (10 of 10)."""
    checker = Checker(tmp_path)
    for match in corpus:
        shuffles = [
            n for n, line in enumerate(match.compact) if line.startswith(b'{"type":"shuffle"')
        ]
        for n in shuffles:
            edited = match.compact[:n] + match.compact[n + 1 :]
            problem = checker.problem(match, edited)
            assert problem is not None and "shuffle" in problem, problem


class _Paced(OneLineBot):
    """A late line first (within the 1 ms a deadline may fire late: recorded `late`), then
    each answer after ``think_s``, so the bank is charged whole milliseconds."""

    def __init__(self, name: str, think_s: float) -> None:
        super().__init__(name, lambda r: b'{"type":"action","id":%d,"index":0}' % r["id"], LATE_S)
        self.think_s = think_s

    async def on_request(self, request):
        if self.asked:
            await trio.sleep(self.think_s)
        await super().on_request(request)


async def _clocked_match(path: Path) -> None:
    control = TimeControl(decision_ms=100, bank_ms=150, increment_ms=20, margin_ms=10)
    async with trio.open_nursery() as nursery:
        bots = [_Paced("late", 0.0) if s == 0 else _Paced(f"p{s}", 0.0042 * s) for s in range(3)]
        procs = [await connect_fake(nursery, bot, time_control=control) for bot in bots]
        try:
            await run_match(
                find_game("alles-oder-nichts"),
                procs,
                seed=5,
                match_id="m",
                time_control=control,
                record_path=path,
            )
        finally:
            for proc in procs:
                await proc.close()


def test_every_edit_of_the_clock_is_caught(tmp_path):
    """The clock's edits the check missed before (all 46 of the issue's): the header's time
    control, a request's time_left_ms, an ok reply made 400 ms, a bank's charge, a late line
    made fast. A match of the referee against in-memory bots under a mock clock (so a late line
    and every charge are certain), with a bank and an increment."""
    path = tmp_path / "clock.jsonl"
    trio.run(_clocked_match, path, clock=trio.testing.MockClock(autojump_threshold=0))
    replay_record(path)
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    assert any(e["type"] == "reply" and e["verdict"] == "late" for e in entries)
    assert any(e["type"] == "reply" and (e["charged_ms"] or 0) >= 4 for e in entries)

    def edited(at: int, change) -> Path:
        copy = json.loads(json.dumps(entries))
        change(copy[at])
        out = tmp_path / "edited.jsonl"
        out.write_text("".join(json.dumps(e) + "\n" for e in copy))
        return out

    def where(kind, **fields):
        return next(
            i
            for i, e in enumerate(entries)
            if e["type"] == kind and all(e.get(k) == v for k, v in fields.items())
        )

    ok = where("reply", verdict="ok")
    charged = next(
        i for i, e in enumerate(entries) if e["type"] == "reply" and (e["charged_ms"] or 0) > 1
    )
    cases = {
        "header decision_ms": (0, lambda e: e["time_control"].update(decision_ms=101)),
        "header bank_ms": (0, lambda e: e["time_control"].update(bank_ms=149)),
        "header increment_ms": (0, lambda e: e["time_control"].update(increment_ms=21)),
        "time_left_ms": (where("request", seat=1), lambda e: e.update(time_left_ms=99)),
        "a 400 ms reply kept ok": (ok, lambda e: e.update(ms=400.0)),
        "a bank's charged_ms": (charged, lambda e: e.update(charged_ms=e["charged_ms"] - 1)),
        "a late reply made fast": (where("reply", verdict="late"), lambda e: e.update(ms=3.0)),
        "a late reply charged less": (
            where("reply", verdict="late"),
            lambda e: e.update(charged_ms=e["charged_ms"] - 1),
        ),
    }
    for name, (at, change) in cases.items():
        with pytest.raises(ReplayError) as caught:
            replay_record(edited(at, change))
        assert "\n" not in str(caught.value), name
