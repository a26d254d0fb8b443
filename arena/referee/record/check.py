"""The replay check: a record re-run through the rules, line by line (SPEC.md section 8);
:class:`ReplayError` names the first line where the record and the rules disagree."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import msgspec

from arena.games import GameError, GameSpec, GameState, OptionError, find_game
from arena.games.cards import Rng, derive_seed
from arena.referee.record.files import record_where
from arena.referee.record.format import (
    MISSING,
    READ_FORMATS,
    RECORDED_LINE_CHARS,
    RecordingDealer,
    ReplayError,
    encoder,
    is_int,
    short,
)
from arena.referee.record.lines import read_record
from arena.referee.results import (
    CAUSES,
    FAULT_KIND,
    FORFEITING_CAUSES,
    VERDICT_CAUSE,
    FaultCause,
    FaultKind,
    FaultRecord,
)
from protocol.codec import decode_from_bot
from protocol.messages import PROTOCOL_VERSION, Action


@dataclass
class Replay:
    """A record re-run through the rules: the header, the final state and every entry."""

    header: dict[str, Any]
    spec: GameSpec
    state: GameState
    entries: list[dict[str, Any]]
    result: dict[str, Any] | None
    faults: list[FaultRecord] = field(default_factory=list)
    # per seat, each of its decisions' time as the record gives it (what the results file's
    # decision_ms holds, SPEC 10.5), in order
    times: list[list[DecisionTime]] = field(default_factory=list)
    # why the match was stopped before its end (its record's last line, SPEC 11); else None
    stopped: str | None = None


@dataclass(frozen=True)
class DecisionTime:
    """How one decision of a seat ended, as its record says: the verdict of the line that ended
    it (``ok``, ``malformed``, ``too long``, ``illegal``, ``late``), or ``timeout`` / ``crash``
    when no line did; that line's ``ms`` (None: the record has no time for it, a line without
    the pending id); what the seat was allowed (``time_left_ms``) and with the margin, and what
    its bank was charged (None without a bank). ``line``: its record line, for messages."""

    ending: str
    ms: float | None
    allowed_ms: int
    limit_ms: int
    charged_ms: int | None
    line: int


def replay_record(path: Path, *, at: int | None = None, length: int | None = None) -> Replay:
    """Re-derive the record at ``path`` from its header and the rules, line by line (SPEC 8):
    every shuffle, the deal, every event, request, reply, fault, autopilot decision and action in
    the order the referee writes them, the fault counts and forfeits against ``max_faults``, and
    the result line. ReplayError names the first line that departs (one line, never a traceback
    for a damaged record)."""
    return _Checker(record_where(path, at), read_record(path, at=at, length=length)).run()


VERDICTS = ("ok", "stale", "malformed", "too long", "illegal", "late")
TIME_FIELDS = ("decision_ms", "bank_ms", "increment_ms", "margin_ms", "startup_ms")
_Entry = dict[str, Any]


def forfeit_placings(
    game_placings: tuple[int, ...], forfeited: set[int], teams: tuple[int, ...] | None
) -> list[int]:
    """SPEC 6: every forfeiting seat (in team games its whole team) placed after the others,
    forfeiting ones ranked among themselves by the game's placings."""
    players = len(game_placings)
    losers = set(forfeited)
    if teams is not None:
        losing = {teams[s] for s in forfeited}
        losers = {s for s in range(players) if teams[s] in losing}
    if not losers:
        return list(game_placings)
    keys = [(1 if s in losers else 0, game_placings[s]) for s in range(players)]
    if teams is None:
        return [1 + sum(other < mine for other in keys) for mine in keys]
    team_keys = {teams[s]: keys[s] for s in range(players)}
    return [
        1 + sum(other < team_keys[teams[s]] for other in team_keys.values()) for s in range(players)
    ]


class _Checker:
    """Walks a record's lines in order, each checked against what the rules make of the header
    and the lines before it."""

    def __init__(self, path: Path | str, entries: list[_Entry]) -> None:
        self.path = path
        self.entries = entries
        self.position = 0
        self.faults: list[FaultRecord] = []

    # -- reading lines ---------------------------------------------------------------------------

    def fail(self, entry: _Entry | None, message: str) -> NoReturn:
        where = f"{self.path} line {entry['_line']}" if entry else f"{self.path} (at its end)"
        raise ReplayError(f"{where}: {message}")

    def peek(self) -> _Entry | None:
        return self.entries[self.position] if self.position < len(self.entries) else None

    def take(self, kind: str, what: str) -> _Entry:
        """The next line, which must be of type ``kind`` (``what`` says what should come)."""
        entry = self.peek()
        if entry is None:
            self.fail(None, f"the record ends where {what} should come")
        if entry["type"] != kind:
            self.fail(entry, f"a {entry['type']!r} line where {what} should come")
        self.position += 1
        return entry

    def want(self, entry: _Entry, name: str, expected: Any, what: str = "") -> None:
        """Field ``name`` must equal ``expected`` (compared as JSON: 1 is not true)."""
        found = entry.get(name, MISSING)
        if found is MISSING:
            self.fail(entry, f'field "{name}" is missing{what}')
        if _json_key(found) != _json_key(expected):
            self.fail(
                entry,
                f'field "{name}" is {short(found)}; the rules give {short(expected)}{what}',
            )

    def integer(self, entry: _Entry, name: str, minimum: int | None = None) -> int:
        value = entry.get(name)
        if not is_int(value) or (minimum is not None and value < minimum):
            bound = f" >= {minimum}" if minimum is not None else ""
            self.fail(entry, f'field "{name}" is {short(value)}; expected an integer{bound}')
        return value

    def of_type(self, entry: _Entry, name: str, kinds: tuple[type, ...], expected: str) -> Any:
        value = entry.get(name, MISSING)
        ok = value is not MISSING and isinstance(value, kinds)
        if ok and isinstance(value, bool) and bool not in kinds:
            ok = False
        if not ok:
            found = "missing" if value is MISSING else short(value)
            self.fail(entry, f'field "{name}" is {found}; expected {expected}')
        return value

    # -- the match -------------------------------------------------------------------------------

    def run(self) -> Replay:
        header = self.take("header", "the header")
        self.header(header)
        self.expect_shuffles(0)
        deal = self.take("deal", "the deal line")
        self.want(deal, "view", _json_roundtrip(self.state.view(None)), " (the deal)")
        while (entry := self.peek()) is not None and entry["type"] == "fault":
            self.position += 1
            self.fault_line(entry, causes=CAUSES[FaultKind.STARTUP], request_id=None, seat=None)
        self.expect_routed()
        state = self.state
        while not state.is_over and not self.stopped_next():
            self.decision(state.mover)
        if self.stopped_next():
            return self.stopped()
        result = self.take("result", "the result line (the match is over)")
        self.result_line(result)
        extra = self.peek()
        if extra is not None:
            self.fail(extra, f"a {extra['type']!r} line after the result")
        return Replay(header, self.spec, state, self.entries, result, self.faults, self.times)

    def stopped_next(self) -> bool:
        entry = self.peek()
        return entry is not None and entry["type"] == "stopped"

    def stopped(self) -> Replay:
        """A match stopped from outside (SPEC 11): its last line says why, and has no result."""
        entry = self.take("stopped", "the stopped line")
        reason = self.of_type(entry, "reason", (str,), "a string: why the match was stopped")
        extra = self.peek()
        if extra is not None:
            self.fail(extra, f"a {extra['type']!r} line after the stopped line")
        return Replay(
            self.header_entry,
            self.spec,
            self.state,
            self.entries,
            None,
            self.faults,
            self.times,
            stopped=reason,
        )

    def header(self, header: _Entry) -> None:
        self.header_entry = header
        if header.get("format") not in READ_FORMATS:
            self.fail(
                header, f'field "format" is {short(header.get("format"))}; expected 1, 2 or 3'
            )
        self.want(header, "protocol", PROTOCOL_VERSION)
        self.of_type(header, "match_id", (str,), "a string")
        if "sent_match_id" in header:  # (records before it: the bots were sent match_id)
            self.of_type(header, "sent_match_id", (str,), "a string")
        game = self.of_type(header, "game", (str,), "a game id")
        try:
            self.spec = find_game(game)
        except GameError:
            self.fail(header, f'field "game" is {short(game)}; expected a game id')
        players = self.integer(header, "players", 1)
        options = self.of_type(header, "options", (dict,), "an object of every option")
        seed = self.integer(header, "seed", 0)
        if seed >= 2**64:
            self.fail(header, f'field "seed" is {seed}; expected an unsigned 64-bit integer')
        try:
            self.spec.check_players(players)
            resolved = self.spec.resolve_options(options)
        except (OptionError, GameError, TypeError, ValueError) as error:
            self.fail(header, str(error))
        self.want(header, "options", resolved, " (every option, resolved)")
        self.dealer = RecordingDealer(Rng(seed))
        try:
            self.state = self.spec.new_match(players, resolved, seed, self.dealer)
        except (OptionError, GameError, TypeError, ValueError) as error:
            self.fail(header, f"the rules cannot start this match: {error}")
        self.dealer.watch(self.state.events)
        seats = self.of_type(header, "seats", (list,), "a list of each seat's bot")
        teams = self.spec.teams(players)
        if len(seats) != players:
            self.fail(header, f'field "seats" lists {len(seats)} seats for {players} players')
        self.bots = []
        for index, seat in enumerate(seats):
            if not isinstance(seat, dict):
                self.fail(header, f"seats[{index}] is {short(seat)}; expected an object")
            seat = {**seat, "_line": header["_line"]}
            self.want(seat, "seat", index, f" (seats[{index}])")
            self.bots.append(self.of_type(seat, "bot", (str,), f"the name of seat {index}'s bot"))
            if "sent_name" in seat:  # (records before it: the bots were sent the name itself)
                self.of_type(seat, "sent_name", (str,), f"the name seat {index} was sent")
            self.want(seat, "team", None if teams is None else teams[index], f" (seats[{index}])")
            if "decision_ms" in seat:  # a limit of its own (a person's, SPEC 11)
                self.integer(seat, "decision_ms", 1)
        self.teams = teams
        control = self.of_type(header, "time_control", (dict,), "an object")
        for name in TIME_FIELDS:
            value = control.get(name, MISSING)
            if not (value is None and name == "bank_ms") and not (is_int(value) and value >= 0):
                self.fail(header, f"time_control.{name} is {short(value)}; expected an integer")
        if control["decision_ms"] < 1:
            self.fail(header, "time_control.decision_ms is 0; expected an integer >= 1")
        # each seat's limit per decision: the match's, or its own
        self.decision_ms = [s.get("decision_ms", control["decision_ms"]) for s in seats]
        self.margin_ms: int = control["margin_ms"]
        self.increment_ms: int = control["increment_ms"]
        # Each seat's bank as the clock books it (SPEC 5), None without one.
        self.banks: list[int | None] = [control["bank_ms"]] * players
        self.times: list[list[DecisionTime]] = [[] for _ in range(players)]
        self.max_faults = self.integer(header, "max_faults", 1)
        self.fault_counts = [0] * players
        self.forfeited: set[int] = set()
        self.last_request = [0] * players
        self.first_request = [0] * players
        # (seat, request id) -> the earliest "ms" a stale answer to it may have: when its
        # decision ended (the time ran out, or the line that ended it came), then the stale
        # lines read since (read later, received later)
        self.stale_after: dict[tuple[int, int], float] = {}
        self.autopilot = Rng(derive_seed(seed, "autopilot"))
        self.routed = 0
        self.shuffles = 0

    def expect_shuffles(self, before_event: int) -> None:
        decks, marks = self.dealer.decks, self.dealer.marks
        while self.shuffles < len(decks) and marks[self.shuffles] <= before_event:
            entry = self.take("shuffle", f"shuffle {self.shuffles + 1}")
            self.want(entry, "n", self.shuffles + 1)
            self.want(entry, "cards", decks[self.shuffles], f" (shuffle {self.shuffles + 1})")
            self.shuffles += 1

    def expect_routed(self) -> None:
        """The events the last action led to, each shuffle just before the events after it."""
        events = self.state.events
        for n in range(self.routed, len(events)):
            self.expect_shuffles(n)
            entry = self.take("event", f"event {n}")
            event = events[n]
            self.want(entry, "n", n)
            audience = None if event.audience is None else list(event.audience)
            self.want(entry, "audience", audience, f" (event {n})")
            self.want(entry, "data", _json_roundtrip(event.data), f" (event {n})")
        self.routed = len(events)
        self.expect_shuffles(len(events))

    def decision(self, seat: int) -> None:
        state = self.state
        legal = state.legal_actions()
        if seat in self.forfeited:
            entry = self.take("autopilot", f"the autopilot's decision for forfeited seat {seat}")
            self.want(entry, "seat", seat)
            self.want(entry, "decision", state.decision)
            self.want(entry, "legal", legal)
            self.action_line(seat, legal, by="autopilot", request_id=None)
            return
        request = self.take("request", f"a request to seat {seat}")
        self.want(request, "seat", seat)
        if self.last_request[seat]:  # a process's ids count up by one per request (SPEC 4.1)
            request_id = self.last_request[seat] + 1
            self.want(request, "id", request_id, f" (seat {seat}'s next request)")
        else:
            request_id = self.first_request[seat] = self.integer(request, "id", 1)
        self.last_request[seat] = request_id
        self.want(request, "decision", state.decision)
        self.want(request, "legal", legal)
        bank = self.banks[seat]
        own = self.decision_ms[seat]
        allowed = own if bank is None else min(own, bank)
        self.want(request, "time_left_ms", allowed, f" (seat {seat}'s clock, SPEC 5)")
        limit = allowed + self.margin_ms
        ending: _Entry | None = None  # the reply that ends the decision
        judged: _Judged | None = None
        while (reply := self.peek()) is not None and reply["type"] == "reply":
            self.position += 1
            judged = self.reply_line(reply, seat, request_id, legal, limit)
            if reply["verdict"] != "stale":
                ending = reply
                break
        if ending is None and self.stopped_next():
            return  # stopped while this request waited (run() takes the stopped line)
        if ending is not None:
            self.book(seat, ending, allowed, limit)
            self.stale_after[seat, request_id] = ending.get("ms") or 0
        if ending is not None and ending["verdict"] == "ok":
            chosen = self.action_line(seat, legal, by="bot", request_id=request_id)
            if judged is not None and judged.action != chosen:
                self.fail(
                    ending, f"the reply says {judged.action!r}, but the action line has {chosen!r}"
                )
            return
        entry = self.take("fault", f"the fault of seat {seat} at request {request_id}")
        if ending is None:
            causes = (*CAUSES[FaultKind.CRASH], FaultCause.NO_REPLY, FaultCause.INPUT_NOT_READ)
        else:
            causes = (VERDICT_CAUSE[ending["verdict"]],)
        fault = self.fault_line(entry, causes=causes, request_id=request_id, seat=seat)
        if ending is None:
            if fault.kind is FaultKind.TIMEOUT:  # charged what it was allowed (SPEC 5)
                self.charge(seat, allowed)
                self.stale_after[seat, request_id] = limit
            self.times[seat].append(
                DecisionTime(str(fault.kind), None, allowed, limit, None, entry["_line"])
            )
        self.action_line(seat, legal, by="autopilot", request_id=None)

    def charge(self, seat: int, charged: int) -> None:
        bank = self.banks[seat]
        if bank is not None:
            self.banks[seat] = bank - charged + self.increment_ms

    def book(self, seat: int, entry: _Entry, allowed: int, limit: int) -> None:
        """The clock of the line that ended a decision (SPEC 5): in time exactly when it came
        within ``limit`` ms (``allowed`` and the margin), and with a bank, charged
        ``min(allowed, ceil(used))`` (the whole time allowed when late), then the increment.
        ``ms`` is kept to 0.001 ms, so the charge may be either ceiling of the times it rounds."""
        verdict, ms = entry["verdict"], entry.get("ms")
        late = verdict == "late"
        if ms is not None and late and ms < limit:
            self.fail(entry, f"a 'late' reply after {ms} ms, within the {limit} ms allowed")
        if ms is not None and not late and ms > limit:
            self.fail(
                entry,
                f"a {verdict!r} reply after {ms} ms, past the {limit} ms allowed (with the "
                "margin): it is late (SPEC 5)",
            )
        charged = entry.get("charged_ms")
        if self.banks[seat] is None:
            self.want(entry, "charged_ms", None, " (no bank of time)")
        else:
            if not (is_int(charged) and 0 <= charged <= allowed):
                self.fail(entry, f'field "charged_ms" is {short(charged)}; expected 0 to {allowed}')
            if late:
                self.want(entry, "charged_ms", allowed, " (a late line is charged all it had)")
            elif ms is not None:
                lowest, highest = charges(ms, allowed)
                if not lowest <= charged <= highest:
                    expected = lowest if lowest == highest else f"{lowest} or {highest}"
                    self.fail(
                        entry,
                        f'field "charged_ms" is {charged}; the clock charges {expected} for '
                        f"{ms} ms (SPEC 5)",
                    )
            self.charge(seat, charged)
        self.times[seat].append(DecisionTime(verdict, ms, allowed, limit, charged, entry["_line"]))

    def reply_line(
        self, entry: _Entry, seat: int, request_id: int, legal: list[str], limit: int
    ) -> _Judged | None:
        """Check one reply line; what its text says when the text is the whole line."""
        self.want(entry, "seat", seat)
        self.want(entry, "pending", request_id, " (the request being waited for)")
        verdict = entry.get("verdict")
        if verdict not in VERDICTS:
            self.fail(entry, f'field "verdict" is {short(verdict)}; expected one of {VERDICTS}')
        written = entry.get("id", MISSING)
        if written is None:
            pass
        elif not is_int(written):
            self.fail(entry, f'field "id" is {short(written)}; expected an integer or null')
        text = self.of_type(entry, "text", (str,), "the line received")
        said = entry.get("stderr", MISSING)
        if said is not MISSING and not (isinstance(said, str) and said):
            self.fail(entry, f'field "stderr" is {short(said)}; expected the bot\'s stderr text')
        for name in ("ms", "charged_ms"):
            value = entry.get(name, MISSING)
            if value is not None and not (
                isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
            ):
                self.fail(entry, f'field "{name}" is {short(value)}; expected a number or null')
        judged = None if verdict == "too long" else _judge_line(text, request_id, legal)
        if judged is not None:
            # The whole line is in the record: what the referee makes of it follows (SPEC 6).
            self.want(entry, "id", judged.id, " (the id the line names)")
            if judged.verdict == "stale" or verdict == "stale":
                self.want(entry, "verdict", judged.verdict, " (the id the line names)")
            elif verdict != "late" and verdict != judged.verdict:
                self.fail(entry, f"the line is {judged.verdict!r} (SPEC 6), not {verdict!r}")
        if verdict == "too long" and written is not None:
            self.fail(entry, "a 'too long' line has no id (it was never read as JSON)")
        if verdict in ("ok", "illegal") and written != request_id:
            self.fail(entry, f"a {verdict!r} reply to request {written}, not {request_id}")
        # A line after the time ran out is late whatever it is (an over-long or malformed line
        # has no id, a later id is no answer either), but for a stale one (an earlier id).
        if verdict == "late" and written is not None and written < request_id:
            self.fail(entry, f"a 'late' reply naming earlier request {written} (that is stale)")
        if verdict == "stale" and not (is_int(written) and written < request_id):
            self.fail(entry, f"a stale reply must name an earlier request, not {written}")
        # "ms" is measured from the request the line names: none when it names none sent to
        # this seat in this match (no id, a later one, or one of an earlier match).
        sent = is_int(written) and self.first_request[seat] <= written <= request_id
        ms = entry.get("ms")
        if sent and ms is None:
            self.fail(entry, f'field "ms" is null; expected the time since request {written}')
        if not sent and ms is not None:
            self.fail(entry, f'field "ms" is {short(ms)}; expected null (no request of its id)')
        if verdict == "stale":
            self.want(entry, "charged_ms", None, " (a stale line is not charged)")
            if ms is not None:
                key = (seat, written)
                after = self.stale_after.get(key, 0)
                if ms < after:
                    self.fail(
                        entry,
                        f"a stale answer {ms} ms after request {written}, before its decision "
                        f"ended or an earlier answer came ({after} ms)",
                    )
                self.stale_after[key] = ms
        return judged

    def fault_line(
        self,
        entry: _Entry,
        *,
        causes: tuple[FaultCause, ...],
        request_id: int | None,
        seat: int | None,
    ) -> FaultRecord:
        """A fault line whose cause must be one of ``causes``; the fault it records. A line
        written before faults had a cause gets it from its message (FaultRecord.read)."""
        kinds = list(dict.fromkeys(FAULT_KIND[cause] for cause in causes))
        if entry.get("kind") not in kinds:
            self.fail(
                entry, f'field "kind" is {short(entry.get("kind"))}; expected {" or ".join(kinds)}'
            )
        if seat is None:  # a startup fault: any seat, once
            seat = self.integer(entry, "seat", 0)
            if seat >= len(self.bots) or seat in self.forfeited:
                self.fail(entry, f"a startup fault for seat {seat}, which cannot have one")
        self.want(entry, "seat", seat)
        self.want(entry, "bot", self.bots[seat])
        self.want(entry, "id", request_id)
        message = self.of_type(entry, "message", (str,), "the fault's reason")
        cause = entry.get("cause")
        if cause is not None and cause not in causes:
            self.fail(entry, f'field "cause" is {short(cause)}; expected {" or ".join(causes)}')
        fault = FaultRecord.read(seat, self.bots[seat], entry["kind"], request_id, message, cause)
        if fault.cause not in causes:  # (an old line's message names another cause)
            self.fail(entry, f"a {fault.cause} fault where the record has {' or '.join(causes)}")
        self.fault_counts[seat] += 1
        forfeits = fault.cause in FORFEITING_CAUSES or self.fault_counts[seat] >= self.max_faults
        # (Before faults had a cause, one that cut off the write was recorded as not forfeiting.)
        recorded = (
            forfeits
            if cause is not None or fault.cause is not FaultCause.INPUT_NOT_READ
            else (self.fault_counts[seat] >= self.max_faults)
        )
        self.want(
            entry, "forfeited", recorded, f" (fault {self.fault_counts[seat]} of seat {seat})"
        )
        if forfeits:
            self.forfeited.add(seat)
        fault = dataclasses.replace(fault, forfeits=forfeits)
        self.faults.append(fault)
        return fault

    def action_line(self, seat: int, legal: list[str], *, by: str, request_id: int | None) -> str:
        what = "the autopilot's action" if by == "autopilot" else f"seat {seat}'s action"
        entry = self.take("action", what)
        self.want(entry, "seat", seat)
        self.want(entry, "by", by)
        self.want(entry, "id", request_id)
        action = entry.get("action")
        if not isinstance(action, str) or action not in legal:
            explained = self.state.explain_illegal(action) if isinstance(action, str) else ""
            self.fail(entry, f"action {short(action)} by seat {seat} is illegal {explained}")
        if by == "autopilot":
            chosen = legal[self.autopilot.below(len(legal))]
            if action != chosen:
                self.fail(
                    entry,
                    f"the autopilot's move for seat {seat} is {chosen!r} (SPEC section 6), "
                    f"not {action!r}",
                )
        self.state.apply(action)
        self.expect_routed()
        return action

    def result_line(self, entry: _Entry) -> None:
        outcome = self.state.result()
        self.want(entry, "scores", list(outcome.scores))
        self.want(entry, "game_placings", list(outcome.placings))
        forfeited = sorted(self.forfeited)
        self.want(entry, "forfeited", forfeited)
        placings = forfeit_placings(tuple(outcome.placings), self.forfeited, self.teams)
        self.want(entry, "placings", placings, " (forfeits placed last, SPEC 6)")
        self.want(entry, "teams", None if outcome.teams is None else list(outcome.teams))
        self.want(entry, "termination", "completed")
        self.want(entry, "faults", len(self.faults), " (the fault lines)")
        duration = entry.get("duration_s")
        if not isinstance(duration, (int, float)) or isinstance(duration, bool) or duration < 0:
            self.fail(entry, f'field "duration_s" is {short(duration)}; expected seconds')


def _json_key(value: Any) -> bytes:
    """A value as canonical JSON (keys sorted), so that 1 and true, or 1 and 1.0, differ."""
    return _sorted_encoder.encode(value)


_sorted_encoder = msgspec.json.Encoder(order="sorted")


@dataclass(frozen=True)
class _Judged:
    """What the referee makes of a whole reply line, its time aside (SPEC 5, 6): ``verdict``
    (``ok``, ``stale``, ``malformed`` or ``illegal``), the ``id`` it names (None: none read),
    and for ``ok`` the action it chose."""

    verdict: str
    id: int | None
    action: str | None = None


REPLACED = "\ufffd"  # what recorded_text puts for bytes that are not UTF-8


def _judge_line(text: str, pending: int, legal: list[str]) -> _Judged | None:
    """A reply line judged as the referee judges it (match.read_reply) for request ``pending``
    with actions ``legal``, from the record's ``text``; None when the text may not be the
    whole line (cut at RECORDED_LINE_CHARS bytes, or with bytes that were not UTF-8)."""
    raw = text.encode()
    if len(raw) >= RECORDED_LINE_CHARS or REPLACED in text:
        return None
    try:
        message = decode_from_bot(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return _Judged("malformed", None)
    if not isinstance(message, Action):
        return _Judged("malformed", None)
    if message.id < pending:
        return _Judged("stale", message.id)
    if message.id > pending or (message.action is msgspec.UNSET) == (
        message.index is msgspec.UNSET
    ):
        return _Judged("malformed", message.id)
    if message.index is not msgspec.UNSET:
        if 0 <= message.index < len(legal):
            return _Judged("ok", message.id, legal[message.index])
        return _Judged("illegal", message.id)
    if message.action in legal:
        return _Judged("ok", message.id, message.action)
    return _Judged("illegal", message.id)


def charges(ms: float, allowed: int) -> tuple[int, int]:
    """The least and most a bank may be charged for a line recorded ``ms`` after its request
    (SPEC 5: ``min(allowed, ceil(used))`` of the measured time, which ``ms`` rounds to 0.001)."""
    return tuple(  # type: ignore[return-value]
        min(allowed, max(0, math.ceil(used - 1e-6))) for used in (ms - 0.0005, ms + 0.0005)
    )


def _json_roundtrip(data: Any) -> Any:
    """``data`` as it reads back from JSON (tuples become lists), for comparisons."""
    return msgspec.json.decode(encoder.encode(data))
