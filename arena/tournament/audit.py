"""A results file checked against its records (SPEC 8, 10.3, 10.5): ``arena replay --check``.

A record re-derived by the rules (``arena.referee.record.replay_record``: every line, the clock
and every fault's kind) must also tell the same match as its results row: the match, its seats
and bots, its seed, every score, placing, fault and decision time, how it ended. A match of the
current definition must be the match its schedule holds (the same content key: seed, bots in
seat order, time control, fault policy), and its header the definition's time control. The
seed is checked last: a secret one's reveal must open the commitment published at the start,
and every match seed derive from it (or from the public seed).

Every problem is one line naming the match and what differs; nothing here raises for a damaged
record or row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import astuple, dataclass, field, replace
from pathlib import Path
from typing import Any

import msgspec

from arena.games import GameError
from arena.referee.record import (
    DecisionTime,
    Replay,
    ReplayError,
    charges,
    record_where,
    replay_record,
)
from arena.tournament.compare import COMPARE_SCHEDULE, compare_schedule
from arena.tournament.config import bot_identities, plans_of
from arena.tournament.schedule import ScheduledMatch, build_schedule, match_key, sent_match_id
from arena.tournament.store import ResultStore, StoredMatch, StoreError

# A results file keeps each decision's time to 0.01 ms (store.save), a record to 0.001 ms.
ROW_MS = 0.005
RECORD_MS = 0.0005
_encode = msgspec.json.Encoder(order="sorted").encode


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON (lists and tuples alike; 1 and true differ)."""
    return _encode(a) == _encode(b)


def _shown(value: Any) -> str:
    text = _encode(value).decode() if not isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def row_differences(replay: Replay, stored: StoredMatch) -> str | None:
    """The first way the re-derived record and its results row disagree (None: none)."""
    header, result = replay.header, replay.result or {}
    if stored.status != "completed":
        return f"the results file says the match was {stored.status}; its record has a result"
    pairs: list[tuple[str, Any, Any]] = [
        ("match_id", header.get("match_id"), stored.match_id),
        ("game", header.get("game"), stored.game_id),
        ("players", header.get("players"), stored.players),
        ("options", header.get("options"), dict(stored.options)),
        ("seed", header.get("seed"), stored.seed),
        ("bots", [seat.get("bot") for seat in header.get("seats", [])], list(stored.bots)),
        ("scores", result.get("scores"), list(stored.scores)),
        ("placings", result.get("placings"), list(stored.placings)),
        ("teams", result.get("teams"), None if stored.teams is None else list(stored.teams)),
        ("forfeited", result.get("forfeited"), list(stored.forfeited)),
        ("termination", result.get("termination"), stored.reason),
        ("duration_s", result.get("duration_s"), round(stored.duration_s, 6)),
        (
            "faults",
            [astuple(f) for f in replay.faults],
            [astuple(f) for f in stored.faults],
        ),
    ]
    if stored.referee is not None:  # (rows of an older arena have none)
        recorded = {
            **(result.get("referee_ms") or {}),
            "load_per_core": result.get("load_per_core"),
        }
        pairs.append(("referee", recorded, dict(stored.referee)))
    for name, recorded, row in pairs:
        if not _same(recorded, row):
            return f"{name}: the results file has {_shown(row)}, the record {_shown(recorded)}"
    if stored.decision_ms:  # (read without them: not compared)
        for seat, (times, row_times) in enumerate(zip(replay.times, stored.decision_ms)):
            problem = _times_differ(times, row_times)
            if problem is not None:
                return f"seat {seat}'s decision times: {problem}"
        if len(stored.decision_ms) != len(replay.times):
            return f"decision times for {len(stored.decision_ms)} seats, not {len(replay.times)}"
    return None


def _times_differ(times: Sequence[DecisionTime], row: Sequence[float]) -> str | None:
    """Whether a seat's decision times in the results file (each decision's time in ms, SPEC
    10.5: every decision that ended by a line or ran out of time; a crash found at the end of
    the bot's output has none) are those its record gives; the charge of a line the record has
    no time for (one without the pending id) is checked against the row's time."""
    at = 0
    for time in times:
        if time.ending == "crash":  # its seat's last: a time when found at the deadline
            if at == len(row) - 1 and row[at] >= time.limit_ms - ROW_MS:
                at += 1
            continue
        if at >= len(row):
            return f"the results file has {len(row)}, the record more (line {time.line})"
        value = row[at]
        at += 1
        where = f"(record line {time.line}: {time.ending})"
        if time.ms is not None:
            if abs(value - time.ms) > ROW_MS + RECORD_MS + 1e-9:
                return f"the results file has {value} ms, the record {time.ms} ms {where}"
            continue
        late = time.ending in ("late", "timeout")
        if late and value < time.limit_ms - ROW_MS:
            return f"{value} ms, within the {time.limit_ms} ms allowed, {where}"
        if not late and value > time.limit_ms + ROW_MS:
            return f"{value} ms, past the {time.limit_ms} ms allowed, {where}"
        if time.charged_ms is not None and not late:
            lowest = charges(value - ROW_MS, time.allowed_ms)[0]
            highest = charges(value + ROW_MS, time.allowed_ms)[1]
            if not lowest <= time.charged_ms <= highest:
                return f"charged {time.charged_ms} ms for {value} ms {where}"
    if at != len(row):
        return f"the results file has {len(row)}, the record {at} {list(row[at:])[:3]}..."
    return None


def definition_differences(replay: Replay, definition: Mapping[str, Any]) -> str | None:
    """How a current match's record departs from the definition: its time control, fault
    policy and the names its bots were sent (the rest of what the definition decides is in the
    match's content key)."""
    header = replay.header
    sent = {b.get("name"): b.get("sent_name", b.get("name")) for b in definition.get("bots", [])}
    for index, seat in enumerate(header.get("seats", [])):
        bot = seat.get("bot")
        if "sent_name" in seat and bot in sent and seat["sent_name"] != sent[bot]:
            return (
                f"seats[{index}].sent_name: the definition sends {bot} as {_shown(sent[bot])}, "
                f"the record says {_shown(seat['sent_name'])}"
            )
    if "time" in definition and not _same(header.get("time_control"), definition["time"]):
        return (
            f"time_control: the definition has {_shown(definition['time'])}, the record "
            f"{_shown(header.get('time_control'))}"
        )
    own = [s.get("seat") for s in header.get("seats", ()) if "decision_ms" in s]
    if own:  # a seat's own limit is a person's (SPEC 11): a tournament seats no person
        return f"seat {own[0]} has a limit per decision of its own; the definition has none"
    if "max_faults" in definition and header.get("max_faults") != definition["max_faults"]:
        return (
            f"max_faults: the definition has {definition['max_faults']}, the record "
            f"{header.get('max_faults')}"
        )
    return None


@dataclass(frozen=True)
class DealSource:
    """Where a results file's deals come from: the ``seed`` every match seed derives from
    (None while it is secret), the ``commitment`` every record header carries (None: a public
    seed), a ``problem`` with the reveal, and a ``note`` saying how it stands."""

    seed: int | None
    commitment: str | None
    note: str
    problem: str | None = None


def deal_source(store: ResultStore) -> DealSource:
    seed = store.definition().get("seed")
    if isinstance(seed, int) and not isinstance(seed, bool):  # the organiser's: public
        return DealSource(seed, None, f"the public seed {seed}")
    state = store.seal()
    problem = state.problem()
    if state.revealed is not None and problem is None:
        return DealSource(
            state.revealed.seed,
            state.commitment,
            f"the revealed seed {state.revealed.seed} opens the commitment {state.commitment}",
        )
    if state.commitment is not None:
        return DealSource(
            None,
            state.commitment,
            f"the seed is secret until the tournament ends (commitment {state.commitment}): "
            "match seeds not checked yet",
            problem,
        )
    return DealSource(None, None, "no seed known: match seeds not checked")


Lookup = Callable[[str], ScheduledMatch | None]


def schedule_lookup(definition: Mapping[str, Any], seed: int, kind: str | None) -> Lookup:
    """The keyed scheduled match of a match id under ``definition`` dealt from ``seed``
    (``kind``: the results file's schedule note, ``compare`` for ``arena compare``)."""
    bots = [entry["name"] for entry in definition["bots"]]
    plans = plans_of(definition)
    identities = bot_identities(definition["bots"])

    def keyed(match: ScheduledMatch | None) -> ScheduledMatch | None:
        if match is None:
            return None
        key = match_key(match, identities, definition["time"], definition["max_faults"])
        return replace(match, key=key)

    if kind == COMPARE_SCHEDULE:
        plan = compare_schedule(seed, bots[0], bots[1], bots[2:], plans)
        by_id = {match.match_id: match for match in plan.matches}
        return lambda match_id: keyed(by_id.get(match_id))
    schedule = build_schedule(seed, bots, plans, definition.get("seating", "duplicate"))
    return lambda match_id: keyed(schedule.by_id(match_id))


def schedule_differences(stored: StoredMatch, lookup: Lookup) -> str | None:
    """How a current match departs from its place in the schedule (its deal seed first)."""
    scheduled = lookup(stored.match_id)
    if scheduled is None:
        return "the schedule of the definition has no match of this id"
    if scheduled.seed != stored.seed:
        return (
            f"seed {stored.seed} does not derive from the tournament seed: the schedule deals "
            f"{scheduled.seed} (SPEC 10.3)"
        )
    if stored.key and scheduled.key != stored.key:
        return (
            f"its content key {stored.key} is not the schedule's {scheduled.key} (its bots, "
            "options, time control or fault policy differ from the definition's)"
        )
    return None


@dataclass
class Audit:
    """What a results file holds for checking its matches: its definition, where its deals
    come from, and (once the seed is known) the schedule to look matches up in."""

    path: Path
    definition: dict[str, Any]
    source: DealSource
    lookup: Lookup | None
    id_key: bytes | None = None  # of the match ids sent to bots (SPEC 4.1); None: not known

    @classmethod
    def of(cls, store: ResultStore) -> Audit:
        definition = store.definition()
        source = deal_source(store)
        lookup = None
        if source.seed is not None and source.problem is None:
            try:
                lookup = schedule_lookup(definition, source.seed, store.note("schedule"))
            except (KeyError, TypeError, ValueError, IndexError, GameError):
                lookup = None  # a definition this arena cannot read: seeds not checked
        try:
            id_key = store.match_id_key()
        except StoreError:
            id_key = None  # (a damaged key: the ids sent are not checked)
        return cls(store.path, definition, source, lookup, id_key)

    def match_problems(self, replay: Replay, stored: StoredMatch, current: bool) -> str | None:
        """The first way a stored match and its re-derived record disagree (None: none)."""
        problem = row_differences(replay, stored)
        sent = replay.header.get("sent_match_id")
        if problem is None and sent is not None and self.id_key is not None:
            if sent != sent_match_id(self.id_key, stored):
                problem = (
                    f"sent_match_id: {_shown(sent)} is not the id the results file's key gives "
                    f"this match ({sent_match_id(self.id_key, stored)}, SPEC 4.1)"
                )
        commitment = replay.header.get("commitment")
        if problem is None and self.source.commitment is not None and current:
            if commitment != self.source.commitment:
                problem = (
                    f"commitment: the results file has {self.source.commitment}, the record "
                    f"{_shown(commitment)}"
                )
        if problem is None and current:
            problem = definition_differences(replay, self.definition)
        if problem is None and current and self.lookup is not None:
            problem = schedule_differences(stored, self.lookup)
        return problem


def record_of(stored: StoredMatch) -> tuple[Path, int | None, int | None] | None:
    """Where a stored match's record is: its file, and its span in a records file."""
    if stored.record_path is None:
        return None
    at, length = stored.record_span if stored.record_span is not None else (None, None)
    return Path(stored.record_path), at, length


@dataclass
class AuditReport:
    checked: int = 0  # matches whose record was re-derived and compared with its row
    without_record: int = 0  # completed matches stored without a record (records = false)
    aborted: int = 0
    problems: list[str] = field(default_factory=list)
    source: DealSource | None = None


def audit_results(path: Path, *, limit: int = 1000) -> AuditReport:
    """Check every stored match of a results file against its record, and the file's seed
    (SPEC 8, 10.3). StoreError for a file that cannot be read. At most ``limit`` problems."""
    report = AuditReport()
    with ResultStore.open_read(path) as store:
        audit = Audit.of(store)
        report.source = audit.source
        if audit.source.problem is not None:
            report.problems.append(f"{path}: {audit.source.problem}")
        current = store.current_keys()
        for stored in store.iter_all_matches():
            if len(report.problems) >= limit:
                break
            if stored.status != "completed":
                report.aborted += 1
                continue
            where = record_of(stored)
            if where is None:
                report.without_record += 1
                continue
            problem = _match_problem(audit, stored, stored.match_key in current, *where)
            report.checked += 1
            if problem is not None:
                report.problems.append(f"{stored.match_id}: {problem}")
    return report


def _match_problem(
    audit: Audit,
    stored: StoredMatch,
    current: bool,
    record: Path,
    at: int | None,
    length: int | None,
) -> str | None:
    try:
        replay = replay_record(record, at=at, length=length)
    except ReplayError as error:
        return str(error)
    problem = audit.match_problems(replay, stored, current)
    return None if problem is None else f"{record_where(record, at)}: {problem}"


def stored_match_of(
    results: Path, match_id: str, record: Path, at: int | None
) -> tuple[Audit, StoredMatch] | None:
    """The current stored match ``match_id`` of a results file whose record is the one at
    ``record`` (byte ``at`` of a records file), with what checking it needs; None when the file
    holds no such match (or cannot be read)."""
    try:
        with ResultStore.open_read(results) as store:
            stored = store.match(match_id)
            if stored is None or stored.record_path is None:
                return None
            span_at = None if stored.record_span is None else stored.record_span[0]
            if Path(stored.record_path).resolve() != record.resolve() or span_at != at:
                return None
            return Audit.of(store), stored
    except StoreError:
        return None


def check_record_row(audit: Audit, stored: StoredMatch, replay: Replay) -> str | None:
    """A re-derived record of a current stored match against its row, definition and seed."""
    problem = audit.match_problems(replay, stored, current=True)
    if problem is None and audit.source.problem is not None:
        problem = audit.source.problem
    return problem


def lines(report: AuditReport) -> Iterator[str]:
    """The report's lines after its problems: what was checked, and how the seed stands."""
    skipped = []
    if report.without_record:
        skipped.append(f"{report.without_record} stored without a record")
    if report.aborted:
        skipped.append(f"{report.aborted} aborted")
    yield (
        f"{report.checked} matches checked against their records"
        + (f" ({', '.join(skipped)})" if skipped else "")
        + (f"; {report.source.note}" if report.source is not None else "")
    )
