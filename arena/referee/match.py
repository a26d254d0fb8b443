"""run_match: the only place that joins the rules and the bot processes. It trusts no bot.

For each decision the referee writes, in one write, everything the seat to move has not seen yet
(the events visible to it, fault notices) followed by the request, then reads that seat's reply
under a deadline. Only the seat to move is read: what another bot writes meanwhile waits in its own
pipe (and blocks only that bot); its standard error is drained all the time (bot_process). Seats
that are not asked get their events with their next request or with match_end, so no bot that
stops reading can hold up the others.

A reply is checked in this order: a line at all (else crash), not over-long, JSON of the right shape
(an ``action`` message), its id (older ids are stale and skipped, newer ones are malformed), exactly
one of ``action``/``index``, legal, in time. Anything wrong is a fault (FaultRecord) and the
autopilot moves instead; see SPEC.md sections 5 and 6.

Deadlines use one cancel scope for the whole match (a fresh scope per request costs about 14 us),
and its deadline is moved only when a decision has to wait in trio's scheduler (ask_rest), before
that wait: a move costs about 2 us (~13k instructions), and the ordinary decision never waits
there. Its reply comes by the quick read, which polls at most until the request's own deadline
plus DEADLINE_SLACK_S (ask_now gives it that bound) and never past trio's next deadline. The scope
meanwhile keeps a deadline set for an earlier request: harmless, since trio acts on deadlines only
while the match's task waits in trio, which it does only after the move (an earlier deadline can
at most end a quick read sooner; the decision then takes trio's path under its own deadline). A
move is skipped when the deadline is already where it may be: from the request's deadline to
DEADLINE_SLACK_S later (never early, at most that late; whether a reply was in time is the
clock's call, not the scope's). A request that fits in the bot's pipe is written without waiting
(the bot's time starts as the write begins: a bot on the referee's core may run before the write
returns); one that does not fit sets the deadline before the write too (a bot that does not read
its input blocks the write), and again once it is written (its time then starts).
An ordinary quick reply is read without a scheduler pass (ProcessTransport's quick read), and
the ordinary decision is made without a coroutine: play() calls ask_now(), a plain method, and
awaits ask_rest() only when something has to wait (a write that does not fit, a reply not there
yet) or the reply is not the ordinary one (then read_reply's full checks take it).

A scope that expired in the scheduler pass that also brought the awaited reply stays cancelled
(moving its deadline does not undo that): the reply is still used, and the scope is replaced before
the next request, so no seat's wait ends on another seat's deadline. Nothing after the reply is
read may be cut short by the scope either (the crash fault's wait is shielded): each decision ends
in exactly one action, after at most one fault of its own.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from math import floor
from pathlib import Path
from typing import Any

import msgspec
import trio
from msgspec import UNSET

from arena.games import GameSpec, GameState
from arena.games.cards import Rng, derive_seed
from arena.referee import trio_fast
from arena.referee.clock import Charge, SeatClock, TimeControl
from arena.referee.lines import SHORT_READ_BYTES, LineTooLong, shorten
from arena.referee.process import BotGone, BotProcess
from arena.referee.record import (
    CANONICAL_ID_AT,
    CANONICAL_REPLY_BASE,
    CANONICAL_TYPE_AT,
    GZIP_FLUSH_S,
    RECORD_FORMAT,
    RECORDED_LINE_CHARS,
    Decision,
    RecordFile,
    RecordingDealer,
    RecordWriter,
    ShortDecision,
    forfeit_placings,
    ms3,
    recorded_text,
)
from arena.referee.results import (
    FAULT_KIND,
    FORFEITING_CAUSES,
    VERDICT_CAUSE,
    FaultCause,
    FaultKind,
    FaultRecord,
    MatchResult,
    Termination,
    latency_summary,
    machine_load_per_core,
)
from protocol.codec import (
    decode_from_bot,
    decode_plain_action,
    encode_line,
    index_reply,
    stale_action_id,
)
from protocol.messages import (
    PROTOCOL_VERSION,
    Action,
    Event,
    Fault,
    MatchEnd,
    MatchStart,
    Request,
    SeatInfo,
)

DEADLINE_SLACK_S = 0.001  # see the module docstring: a deadline may fire this much late
MATCH_END_TIMEOUT_S = 2.0  # how long delivering match_end to one bot may take
SHARED_LINES_KEPT = 256  # at a private event, more shared lines than this are shared out
RECORDED_STALE_REPLIES = 5  # stale answers recorded per request (the rest are skipped unrecorded)
# A decision's stderr in the record (SPEC.md 8): its last this many bytes, and at most this many
# of one seat's in a match.
STDERR_DECISION_BYTES = 2000
STDERR_MATCH_BYTES = 64_000


@dataclass
class _Seat:
    index: int
    bot: BotProcess
    clock: SeatClock
    # The lines (each with its newline) written with the next request, before the match's
    # shared lines it has not taken yet: a list joined once, not a bytearray grown by each
    # event (whose clear() frees its buffer, so each decision's appends reallocated it again).
    pending: list[bytes] = field(default_factory=list)
    shared_taken: int = 0  # how many of the match's shared_lines it has taken
    faults: int = 0
    forfeited: bool = False
    crashed: bool = False
    writable: bool = True  # False once its input is closed or holds a cut-off write
    times_ms: list[float] = field(default_factory=list)
    # When each request of this match was written (the match's time), kept only for a record's
    # reply "ms": request first_id + i at sent_at[i]. The ids of a seat's requests in a match
    # follow one another, and each is written but a last one that forfeits the seat (its write
    # failed or timed out). A list appended to, not a dict by id: the dict's store cost ~0.5 us
    # per decision with C bots (benchmarks: rec6's notes), for one lookup per stale reply.
    first_id: int = 0
    sent_at: list[float] = field(default_factory=list)
    # The length a canonical reply (record.CANONICAL_REPLY_BASE) of this seat has with a
    # one-digit index, for its ids from the latest recorded in full on: 0 (none) until a
    # Decision of the quick path is kept for it, and always with a bank of time. Its ids only
    # grow, so it never exceeds the true length, which no other reply of that id and index
    # reaches (quick_reply).
    canonical_len: int = 0
    stderr_kept: int = 0  # bytes of its stderr this match's record holds (STDERR_MATCH_BYTES)
    stderr_full: bool = False  # the record said that it keeps no more of it in this match

    def take_shared(self, shared: list[bytes]) -> None:
        """Move the match's shared lines this seat has not taken to its pending lines."""
        if self.shared_taken < len(shared):
            self.pending += shared[self.shared_taken :]
            self.shared_taken = len(shared)

    def add_line(self, shared: list[bytes], line: bytes) -> None:
        """Queue a line for this seat alone, after the shared lines it has not taken (which
        came before it)."""
        self.take_shared(shared)
        self.pending.append(line)

    def unseen(self, shared: list[bytes], last: bytes | bytearray) -> bytes:
        """One write of everything the seat has not seen yet, then ``last``: its pending lines
        (rare: match start, a private event, a fault notice), the shared lines it has not taken.
        Both count as seen from here on."""
        lines: list = shared[self.shared_taken :]
        self.shared_taken = len(shared)
        pending = self.pending
        if pending:
            lines[:0] = pending
            pending.clear()
        lines.append(last)  # (a bytearray too: join takes it as it is)
        return b"".join(lines)

    def sent_time(self, request_id: int) -> float | None:
        """When request ``request_id`` was written; None for one not written to it in this match."""
        index = request_id - self.first_id
        return self.sent_at[index] if 0 <= index < len(self.sent_at) else None


_CRASHED = "\0crashed"  # read_reply's answer when the bot's output ended
_encoder = msgspec.json.Encoder()
encode_event = _encoder.encode
encode_into = _encoder.encode_into
_VIEW_STRUCTS: dict[tuple[str, ...], type[msgspec.Struct]] = {}


def view_struct(state: GameState) -> type[msgspec.Struct] | None:
    """The Struct whose fields are the state's VIEW_KEYS (one class per tuple of keys), or None
    for a game without them. msgspec writes a Struct's fields in order as a dict's keys, so
    encoding ``view_struct(state)(*state.view_values(seat))`` writes view(seat)'s JSON byte for
    byte, without view()'s dict and copies (tests/referee/test_fast_paths.py compares them)."""
    keys = state.VIEW_KEYS
    if keys is None:
        return None
    struct = _VIEW_STRUCTS.get(keys)
    if struct is None:
        # gc=False: made and encoded at once, a view holds no cycle.
        struct = _VIEW_STRUCTS[keys] = msgspec.defstruct("SeatView", keys, gc=False)
    return struct


assert Event.__struct_fields__[-1] == "event", "route_events builds event lines from a prefix"


class _Match:
    """One match in progress: the game state, the seats, the record."""

    # Slots: with more than 29 attributes an instance's attributes live in a dict of its own
    # (CPython 3.11 shares keys up to 30), and every self.x of the per-decision path costs more.
    __slots__ = (
        "action_recorded",
        "asking",
        "autopilot",
        "autopilot_decision",
        "banked",
        "clock_offset",
        "compact_record",
        "control",
        "dealer",
        "eager",
        "event_prefix",
        "events_routed",
        "expiry_check_from",
        "faults",
        "full_record",
        "game",
        "mark",
        "match_id",
        "max_faults",
        "now",
        "players",
        "record",
        "record_due",
        "record_entries",
        "recording",
        "referee_us",
        "request_buffer",
        "resolved",
        "said_from",
        "scope_deadline",
        "seats",
        "seed",
        "sent_id",
        "shared_lines",
        "shuffles_recorded",
        "state",
        "task",
        "teams",
        "unwritten_request",
        "view_struct",
        "waiting",
    )

    def __init__(
        self,
        game: GameSpec,
        bots: Sequence[BotProcess],
        seed: int,
        options: Mapping | None,
        match_id: str,
        control: TimeControl,
        max_faults: int,
        record: RecordWriter,
        sent_id: str | None = None,
        seat_decision_ms: Mapping[int, int] | None = None,
    ) -> None:
        self.game = game
        self.match_id = match_id  # what organisers see: results, records, logs, messages
        self.sent_id = sent_id or match_id  # what the bots are sent (SPEC 4.1)
        self.seed = seed
        self.control = control
        self.max_faults = max_faults
        self.record = record
        self.recording = record.enabled
        self.compact_record = record.enabled and record.compact
        self.full_record = record.enabled and not record.compact
        # A compact record's decision in progress (see the record's section below): the request
        # kept back, as its time_left_ms (the rest follows from the state, unchanged until the
        # action: write_request), None when there is none.
        self.unwritten_request: int | None = None
        self.action_recorded = False  # the decision's array line, action included, is kept
        self.autopilot_decision = False
        self.record_entries = record.entries  # where a compact decision's array goes
        self.banked = control.bank_ms is not None  # else charged_ms is null
        # (In the match's time, self.now.) Kept record lines are written at a request after it.
        self.record_due = 0.0
        self.resolved = game.resolve_options(options)
        self.dealer = RecordingDealer(Rng(seed))
        self.state = game.new_match(len(bots), self.resolved, seed, self.dealer)
        self.dealer.watch(self.state.events)
        self.players = self.state.players
        self.view_struct = view_struct(self.state)
        self.teams = game.teams(self.players)
        own_ms = seat_decision_ms or {}
        self.seats = [
            _Seat(
                i,
                bot,
                SeatClock(replace(control, decision_ms=own_ms[i]) if i in own_ms else control),
                first_id=bot.last_request_id + 1,
            )
            for i, bot in enumerate(bots)
        ]
        # Seats that take their events as they happen (a person at the table, SPEC 11), not
        # with their next request: the same lines, only sooner (push_events).
        self.eager = [seat for seat in self.seats if getattr(seat.bot.transport, "eager", False)]
        self.autopilot = Rng(derive_seed(seed, "autopilot"))
        self.faults: list[FaultRecord] = []
        self.referee_us: list[float] = []
        self.events_routed = 0
        # The lines of the events for every seat since the last share_out(): each seat takes
        # those it has not taken yet with its next request (ask_now), so such an event, the
        # usual kind, is one append and not one per seat.
        self.shared_lines: list[bytes] = []
        self.shuffles_recorded = 0
        # Every event line of the match starts the same: encode that envelope once (this needs
        # "event" to stay the last field of the Event message, which the module checks at import).
        self.event_prefix = encode_line(Event(match_id=self.sent_id, event={}))[: -len(b"{}}\n")]
        # Each request is encoded into this buffer: it keeps its size from one request to the
        # next, where encode() grows a fresh output from a few bytes each time (~1.5k
        # instructions more per request).
        self.request_buffer = bytearray()
        # The request being waited for, so a timeout knows what it interrupted.
        self.mark = time.perf_counter()  # when the referee's own work began (for referee_us)
        # The match's times: trio's clock less a constant (time.perf_counter itself with trio's
        # system clock, whose current_time() is perf_counter() + offset: a Python call fewer on
        # each of the few readings per decision; a test's mock clock as it is). Deadlines given
        # to trio add the offset back (move_deadline).
        clock = trio.lowlevel.current_clock()
        offset = trio_fast.perf_counter_offset(clock)
        if offset is not None:
            self.now: Callable[[], float] = time.perf_counter
            self.clock_offset: float = offset
        else:
            self.now, self.clock_offset = clock.current_time, 0.0
        self.waiting: tuple[_Seat, int, float, bool] | None = None  # seat, id, sent at, written
        # The seat whose decision ask_rest waits for and how much of its stderr had been read
        # then (a recorded match's: decision_stderr). A quick reply has none to keep: stderr
        # written before it would have woken trio's epoll, which sends the decision to ask_rest.
        self.said_from: tuple[_Seat, int] | None = None
        # A decision ask_now began and ask_rest finishes: id, legal, limit_ms, what is still to
        # write (None: all written), a line already read (None: none).
        self.asking: tuple[int, list[str], int, bytes | None, bytes | None] | None = None
        self.record_due = self.now() + GZIP_FLUSH_S
        # The task play() runs in (set there), which ask_now's quick reads are made in: given to
        # them, it spares each a look-up of the current task (a thread-local: ~0.6k instructions).
        self.task: trio.lowlevel.Task | None = None
        self.new_scope()

    # -- the match's cancel scope (see the module docstring) --------------------------------------

    # Reading ``scope.deadline`` and ``scope.cancel_called`` costs more than comparing floats, so
    # the match keeps the deadline it last set, and the earliest time at which the scope can have
    # expired since it was last seen not cancelled (only a deadline ever cancels it).

    def new_scope(self) -> None:
        self.scope_deadline = math.inf
        self.expiry_check_from = math.inf

    def move_deadline(self, scope: trio.CancelScope, deadline: float) -> None:
        """Let ``scope`` expire between ``deadline`` and DEADLINE_SLACK_S later."""
        if not deadline <= self.scope_deadline <= deadline + DEADLINE_SLACK_S:
            self.scope_deadline = deadline + DEADLINE_SLACK_S
            scope.deadline = self.scope_deadline + self.clock_offset  # in trio's time
            self.expiry_check_from = min(self.expiry_check_from, self.scope_deadline)

    def clear_deadline(self, scope: trio.CancelScope) -> None:
        self.scope_deadline = scope.deadline = math.inf  # an expiry before this still counts

    def scope_expired(self, scope: trio.CancelScope) -> bool:
        """Whether the scope's deadline has cancelled it (``scope.cancel_called``)."""
        if self.now() < self.expiry_check_from:
            return False  # no deadline set since it was last seen not cancelled has passed
        if scope.cancel_called:
            return True
        self.expiry_check_from = self.scope_deadline
        return False

    # -- routing what seats may see ----------------------------------------------------------------

    def route_events(self) -> None:
        """Queue each new event for the seats in its audience, and record it (a compact record
        keeps only the shuffles, which the dealer hands the writer as they happen: keep_shuffle)."""
        events = self.state.events
        n, end = self.events_routed, len(events)
        recording = self.full_record
        if n == end and not recording:
            return
        prefix, shared = self.event_prefix, self.shared_lines
        # (The new events as a slice, not by index: ~0.5k instructions fewer per decision; n
        # counts them only for a full record.)
        for audience, data in events[n:end]:
            if recording:
                self.record_shuffles(n)  # a shuffle comes before the events it led to
            line = b"".join((prefix, encode_event(data), b"}\n"))
            if audience is None:
                shared.append(line)
            else:
                if len(shared) > SHARED_LINES_KEPT:
                    self.share_out()
                for index in audience:
                    seat = self.seats[index]
                    if seat.writable:  # (one that is not gets nothing more)
                        seat.add_line(shared, line)
            if recording:
                self.record.write(
                    {
                        "type": "event",
                        "n": n,
                        "audience": None if audience is None else list(audience),
                        "data": data,
                    }
                )
                n += 1
        self.events_routed = end
        if recording and self.shuffles_recorded < len(self.dealer.decks):
            self.record_shuffles(len(events))

    def share_out(self) -> None:
        """Move the shared lines each writable seat has not taken yet to its pending lines, and
        start the shared lines afresh (route_events does, at a private event once they are
        many: so they stay few, as every deal has private events, its hands)."""
        shared = self.shared_lines
        for seat in self.seats:
            if seat.writable:
                seat.take_shared(shared)
            seat.shared_taken = 0
        shared.clear()

    def unwritable(self, seat: _Seat) -> None:
        """The seat's input takes nothing more (closed, or a write was cut off): no event goes
        to it from now on (nothing is written to it, its pending lines and shared ones alike)."""
        seat.writable = False

    def record_shuffles(self, before_event: int) -> None:
        """Record every shuffle not yet written that happened before event ``before_event``."""
        decks, marks = self.dealer.decks, self.dealer.marks
        while self.shuffles_recorded < len(decks) and marks[self.shuffles_recorded] <= before_event:
            n = self.shuffles_recorded
            self.record.write({"type": "shuffle", "n": n + 1, "cards": decks[n]})
            self.shuffles_recorded = n + 1

    # -- the record (SPEC.md section 8) -----------------------------------------------------------
    #
    # A full record gets every line as it happens. A compact one (RecordWriter.compact) gets the
    # same lines less what the rules derive from the header and the actions: no deal or event
    # lines; an ordinary decision (a request answered in time by one valid reply) is one array
    # line [seat, id, time_left_ms, us, charged_ms, text, action], or [us, index] for the
    # canonical reply (quick_reply: ShortDecision), and a forfeited seat's autopilot decision
    # [seat, action]. Any other decision is written in full, its request line first (kept back
    # until then: unwritten_request). arena.referee.record expands it again. An ordinary
    # decision costs one Decision or ShortDecision appended to the writer's entries
    # (quick_reply, read_reply): the writer encodes what it keeps in one call, at least every
    # GZIP_FLUSH_S (ask) and at the end.

    def write(self, entry: dict) -> None:
        """Write a record line, after the request it belongs to if that is still kept back."""
        if self.unwritten_request is not None:
            self.write_request()
        self.record.write(entry)

    def write_request(self) -> None:
        """The request kept back (a compact record's), of the decision in progress: the seat to
        move, its bot's last request id, the state's decision and legal actions (the action is
        not applied yet), and the time_left_ms kept."""
        time_left = self.unwritten_request
        assert time_left is not None
        self.unwritten_request = None
        state = self.state
        seat = self.seats[state.mover]
        self.request_line(
            seat.index, seat.bot.last_request_id, state.decision, state.legal_actions(), time_left
        )

    def request_line(
        self, seat: int, request_id: int, decision: str, legal: list[str], time_left: int
    ) -> None:
        self.record.write(
            {
                "type": "request",
                "seat": seat,
                "id": request_id,
                "decision": decision,
                "legal": legal,
                "time_left_ms": time_left,
            }
        )

    def record_decision(
        self,
        seat: _Seat,
        request_id: int,
        used_ms: float,
        charged_ms: int,
        line: bytes,
        action: str,
        index: int | None = None,
    ) -> None:
        """An ordinary decision of a compact record: its one array line, kept as the values at
        hand (the writer makes the line of them: RecordWriter); apply() records nothing more.
        ``index``: the reply's index when it is the usual reply (quick_reply's IndexReply)."""
        time_left = self.unwritten_request
        assert time_left is not None  # (the callers checked: a request kept back, compact)
        self.unwritten_request = None
        self.action_recorded = True
        us = floor(used_ms * 1000.0 + 0.5)  # microseconds (ms3 of the line's ms)
        if index is not None:
            # The canonical reply, proved by its length and key order (record.py at
            # CANONICAL_REPLY_BASE: the length of a seat's later ids' is never less than
            # canonical_len; the bytes at CANONICAL_ID_AT and CANONICAL_TYPE_AT), of a seat
            # with a request recorded before and no bank (canonical_len set): the short array,
            # which the rest of the record gives the rest of.
            if (
                len(line) == seat.canonical_len + (index > 9)
                and line[CANONICAL_ID_AT] == ord("d")
                and line[CANONICAL_TYPE_AT] == ord("t")
            ):
                self.record_entries.append(ShortDecision(us, index))
                return
            # For the next ids (request_id + 1's digits on); never with a bank (0 matches no
            # line IndexReply reads).
            seat.canonical_len = (
                CANONICAL_REPLY_BASE + 1 + len(str(request_id + 1))
                if seat.clock.bank_left_ms is None
                else 0
            )
        self.record_entries.append(
            Decision(  # (not a tuple: see Decision)
                seat.index,
                request_id,
                time_left,
                us,
                charged_ms,
                line.decode() if len(line) <= RECORDED_LINE_CHARS else recorded_text(line),
                action,
            )
        )

    def record_action(self, seat: _Seat, action: str, chosen_by: str) -> None:
        if self.compact_record and self.autopilot_decision:
            self.autopilot_decision = False
            self.record.write([seat.index, action])
            return
        request_id = seat.bot.last_request_id if chosen_by == "bot" else None
        self.write(
            {
                "type": "action",
                "seat": seat.index,
                "action": action,
                "by": chosen_by,
                "id": request_id,
            }
        )

    # -- faults -----------------------------------------------------------------------------------

    def fault(self, seat: _Seat, cause: FaultCause, request_id: int | None, reason: str) -> None:
        kind = FAULT_KIND[cause]
        seat.faults += 1
        if kind is FaultKind.CRASH:
            seat.crashed = True
            self.unwritable(seat)
        if cause in FORFEITING_CAUSES or seat.faults >= self.max_faults:
            seat.forfeited = True
            seat.bot.retire(f"forfeited match {self.match_id}")
        request = f"request {request_id}" if request_id is not None else "outside a request"
        what = f"(seat {seat.index}), {request}: {reason}"
        if seat.forfeited:
            what += (
                f"; fault {seat.faults}, forfeits the match"
                if kind is not FaultKind.CRASH
                else "; forfeits the match"
            )
        message = f"bot {seat.bot.name} {what}"
        record = FaultRecord(
            seat.index, seat.bot.name, kind, request_id, message, cause, seat.forfeited
        )
        self.faults.append(record)
        self.write(
            {
                "type": "fault",
                "seat": seat.index,
                "bot": seat.bot.name,
                "kind": str(kind),
                "cause": str(cause),
                "id": request_id,
                "message": message,
                "forfeited": seat.forfeited,
            }
        )
        if seat.writable:
            notice = Fault(
                match_id=self.sent_id,
                id=request_id,
                kind=str(kind),
                message=f"bot {seat.bot.sent_name} {what}",  # the name it was sent
                forfeited=seat.forfeited,
            )
            seat.add_line(self.shared_lines, encode_line(notice))  # (after the events before it)

    def autopilot_move(self, legal: list[str]) -> str:
        return legal[self.autopilot.below(len(legal))]

    # -- one decision ------------------------------------------------------------------------------

    def ask_now(self, seat: _Seat, scope: trio.CancelScope) -> tuple[str, str] | None:
        """Ask the seat to move; returns (action, who chose it: "bot" or "autopilot"), or None
        when the decision needs to wait (a write that does not fit, a reply not yet there, or
        not the ordinary one): then ``await self.ask_rest(seat)`` finishes it. The ordinary
        decision (the request fits in the pipe, the reply is there by the quick read, valid and
        in time) is thus made without a coroutine (play() calls this first)."""
        state, bot = self.state, seat.bot
        legal = state.legal_actions()
        if seat.forfeited:
            # No request is sent; the record still lists what the autopilot chose from.
            if self.compact_record:
                self.autopilot_decision = True  # one short line, with the action (apply)
            else:
                self.record.write(
                    {
                        "type": "autopilot",
                        "seat": seat.index,
                        "decision": state.decision,
                        "legal": legal,
                    }
                )
            return self.autopilot_move(legal), "autopilot"
        # (Counted in the bot's stats at the match's end: run_match.)
        request_id = bot.last_request_id = bot.last_request_id + 1
        clock = seat.clock
        time_left = clock.allowed_ms()
        struct = self.view_struct
        values = None if struct is None else state.view_values(seat.index)
        # The view as the seat's view_struct where the game has one: msgspec writes it as
        # view()'s dict, byte for byte (view_struct), without building that dict.
        view: Any = state.view(seat.index) if struct is None or values is None else struct(*values)
        line = self.request_buffer
        request = Request(
            match_id=self.sent_id,
            id=request_id,
            decision=state.decision,
            view=view,
            legal=legal,
            time_left_ms=time_left,
        )
        encode_into(request, line)
        line += b"\n"
        data = seat.unseen(self.shared_lines, line)  # what the seat has not seen, the request
        if self.recording:
            if self.compact_record:
                self.unwritten_request = time_left  # the request's line only if needed
            else:
                self.request_line(seat.index, request_id, state.decision, legal, time_left)
        limit_ms = time_left + clock.margin_ms  # (clock.deadline_ms(), its time_left known)
        # The bot's time starts as the write begins: on a core it shares with the referee
        # (arena.referee.cores) the woken bot may run before the write returns.
        sent_at = self.now()
        try:
            # Most requests fit in the pipe at once: then one deadline move suffices. Otherwise
            # the rest waits for the bot to read (ask_rest), under the deadline counted from
            # before the write (a bot that does not read is timed too).
            written = bot.send_nowait(data)
        except BotGone:
            return self.cannot_write(seat, scope, request_id, legal)
        if written < len(data):
            self.waiting = (seat, request_id, sent_at, False)
            self.move_deadline(scope, sent_at + limit_ms / 1000)
            self.asking = (request_id, legal, limit_ms, data[written:] if written else data, None)
            return None
        self.sent(seat, sent_at)
        # The quick read waits at most to this request's deadline (the scope's is not moved here).
        # Nothing in trio runs meanwhile, so the wait need not be noted (self.waiting) for it.
        # (A short read: a longer reply is kept, and read_reply reads the rest.)
        reply = bot.reader.line_now(
            sent_at + limit_ms / 1000 + DEADLINE_SLACK_S, SHORT_READ_BYTES, self.task
        )
        if reply is not None:
            action = self.quick_reply(seat, request_id, legal, sent_at, limit_ms, reply)
            if action is not None:
                self.mark = time.perf_counter()
                return action, "bot"
        self.waiting = (seat, request_id, sent_at, True)
        self.asking = (request_id, legal, limit_ms, None, reply)
        return None

    def sent(self, seat: _Seat, sent_at: float) -> None:
        """The seat's latest request is written; the bot's time started at ``sent_at`` (the
        match's time). The record notes it for its replies' "ms" (sent_time), and a slow
        match's record is flushed for its watchers; the referee's own time ends here."""
        if self.recording:
            seat.sent_at.append(sent_at)  # (at request_id - seat.first_id)
            if sent_at >= self.record_due:  # a slow match: let its watchers see the lines so far
                self.record_due = sent_at + GZIP_FLUSH_S
                self.record.flush()
        self.referee_us.append((time.perf_counter() - self.mark) * 1e6)

    def cannot_write(
        self, seat: _Seat, scope: trio.CancelScope, request_id: int, legal: list[str]
    ) -> tuple[str, str]:
        self.waiting = None
        self.clear_deadline(scope)
        self.fault(
            seat,
            FaultCause.UNWRITABLE,
            request_id,
            f"cannot be written to any more: {seat.bot.exit_reason()}",
        )
        return self.autopilot_move(legal), "autopilot"

    async def ask_rest(self, seat: _Seat, scope: trio.CancelScope) -> tuple[str, str]:
        """The rest of a decision ask_now began: the write, then the reply, as far as they were
        not done there (``self.asking``)."""
        assert self.asking is not None
        request_id, legal, limit_ms, unsent, line = self.asking
        self.asking = None
        bot = seat.bot
        if self.recording:
            count = bot.stderr_read()
            self.said_from = None if count is None else (seat, count)
        if unsent is None:
            assert self.waiting is not None
            sent_at = self.waiting[2]
        else:
            try:
                await bot.send(unsent)
            except BotGone:
                return self.cannot_write(seat, scope, request_id, legal)
            # (The rest was written in parts, as the bot read: its time starts once it all is.)
            sent_at = self.now()
            self.sent(seat, sent_at)
            self.waiting = (seat, request_id, sent_at, True)
        # Whatever waits from here on waits under this request's deadline.
        self.move_deadline(scope, sent_at + limit_ms / 1000)
        action = await self.read_reply(seat, request_id, legal, sent_at, limit_ms, line)
        self.mark = time.perf_counter()
        self.waiting = None
        self.said_from = None
        # The scope's deadline is left as it is: nothing awaits before the next request moves it
        # (play() applies the action without yielding), except the waits for a crash just below.
        if action is _CRASHED:
            self.clear_deadline(scope)
            # The exit status and the last of its stderr arrive a little after the end of its
            # output on a busy machine; wait for them (bounded) so the fault message quotes both.
            # This happens at most once per seat and match: the seat then forfeits. Shielded: the
            # match's scope may have expired in the very pass that brought the end of file, and
            # this decision must still end in its crash fault and one action (SPEC.md section 8).
            with trio.CancelScope(shield=True):
                await bot.settle(1.0)
            self.fault(
                seat,
                FaultCause.OUTPUT_ENDED,
                request_id,
                f"ended or closed its output: {bot.exit_reason()}",
            )
            action = None
        if action is None:
            return self.autopilot_move(legal), "autopilot"
        return action, "bot"

    def quick_reply(
        self,
        seat: _Seat,
        request_id: int,
        legal: list[str],
        sent_at: float,
        limit_ms: int,
        line: bytes,
    ) -> str | None:
        """The ordinary reply, booked: an action message for the pending id with one valid
        choice, in time (``limit_ms`` since ``sent_at``: what the clock's charge finds in time),
        with no record line to write but a compact record's decision array. None for any other
        line, booking nothing: read_reply's full checks then take it."""
        if self.full_record:  # (read_reply does not call it once a compact one's request line
            return None  # is written: no array stands for that decision then)
        # The usual reply, {"type":"action","id":N,"index":K}, by its own decoder (index_reply);
        # any other line by the general decode, which takes such a line too, as the same id and
        # index.
        reply = index_reply(line)
        if reply is not None:
            if reply.id != request_id:
                return None
            try:
                chosen = legal[reply.index]  # (never negative: IndexReply's)
            except IndexError:
                return None
        else:
            message = decode_plain_action(line)
            if message is None or message.id != request_id:
                return None
            given = message.index
            if given is not UNSET:
                if not 0 <= given < len(legal) or message.action is not UNSET:
                    return None
                chosen = legal[given]
            else:
                named = message.action
                if not isinstance(named, str) or named not in legal:
                    return None
                chosen = named
        used_ms = (self.now() - sent_at) * 1000
        if used_ms > limit_ms:
            return None  # late: read_reply's path books and reports it
        seat.times_ms.append(used_ms)
        charged_ms = seat.clock.charged_in_time_ms(used_ms)
        if self.unwritten_request is not None:  # a compact record's
            index = None if reply is None else reply.index
            self.record_decision(seat, request_id, used_ms, charged_ms, line, chosen, index)
        return chosen

    async def read_reply(
        self,
        seat: _Seat,
        request_id: int,
        legal: list[str],
        sent_at: float,
        limit_ms: int,
        first: bytes | None = None,
    ) -> str | None:
        """Read lines until the reply to ``request_id``; None after a fault (already recorded).
        ``first``: a line already read (by ask_now, which found it not the ordinary reply).

        Any line except a stale answer ends the decision and is charged to the clock: sending
        garbage does not save time.
        """
        reader = seat.bot.reader
        stale = 0
        checked = b""  # the last line stale_action_id judged, and its answer
        checked_id: int | None = None
        until = sent_at + limit_ms / 1000 + DEADLINE_SLACK_S  # the quick read's longest wait
        while True:
            too_long: LineTooLong | None = None
            line: bytes | None = first
            if first is not None:
                first = None
            else:
                try:
                    # Lines already read first (a flood's come by the thousand to a read), then
                    # the quick read, then trio's.
                    line = reader.buffered_line()
                    if line is None:
                        line = reader.line_now(until)
                        if line is None:
                            line = await reader.read_line()
                except LineTooLong as error:
                    too_long, line = error, error.head
                if line is None:
                    return _CRASHED
                if too_long is None:
                    if stale:
                        # After a stale line more tend to come (a late bot's answers, a flood):
                        # one decode tells each, where the checks below take two (quick_reply's
                        # and decode_from_bot's), and none the same bytes as the line before
                        # (a flood's). Any other line goes on to them.
                        if line != checked:
                            checked, checked_id = line, stale_action_id(line, request_id)
                        if checked_id is not None:
                            stale += 1
                            if stale <= RECORDED_STALE_REPLIES:  # (as below)
                                self.reply_entry(
                                    seat, line, "stale", checked_id, request_id, None, None
                                )
                            continue
                    # The ordinary reply takes this shortcut; anything else the checks below.
                    # (Not once a compact record has written this decision's request line, for
                    # a stale reply before it: then no array stands for the decision.)
                    # (And not when the bot wrote to stderr: its line then keeps it.)
                    if (self.unwritten_request is not None or not self.recording) and (
                        self.said_from is None or not self.stderr_waiting(seat)
                    ):
                        action = self.quick_reply(seat, request_id, legal, sent_at, limit_ms, line)
                        if action is not None:
                            return action
            assert line is not None
            used_ms = (self.now() - sent_at) * 1000
            message: object = None
            problem = ""
            if too_long is not None:
                problem = (
                    f"sent a line longer than {too_long.limit} bytes (starting {shorten(line, 60)})"
                )
            else:
                try:
                    message = decode_from_bot(line)
                except (msgspec.DecodeError, msgspec.ValidationError) as error:
                    problem = f"sent {shorten(line)}, which is not a valid message: {error}"
            written_id = message.id if isinstance(message, Action) else None
            if written_id is not None and written_id < request_id:
                # A late answer to an earlier request: never applied to this one. Only the first
                # few are recorded, or a flood of them would fill the disk through the record.
                stale += 1
                if stale <= RECORDED_STALE_REPLIES:
                    self.reply_entry(seat, line, "stale", written_id, request_id, None, None)
                continue
            seat.times_ms.append(used_ms)
            charge = seat.clock.charge(used_ms)
            said = self.decision_stderr(seat)
            if not charge.in_time:
                self.reply_entry(seat, line, "late", written_id, request_id, used_ms, charge, said)
                self.fault(
                    seat,
                    FaultCause.LATE_REPLY,
                    request_id,
                    f"answered after {used_ms:.0f} ms; {charge.allowed_ms} ms were allowed "
                    f"(+{self.control.margin_ms} ms margin)",
                )
                return None
            if not problem:
                if not isinstance(message, Action):
                    problem = f"sent {shorten(line)} while an action message was expected"
                elif message.id > request_id:
                    problem = (
                        f"answered request {message.id}, which was never sent "
                        f"(the pending request is {request_id})"
                    )
            kind = FaultKind.MALFORMED
            if problem or not isinstance(message, Action):
                verdict = "too long" if too_long is not None else "malformed"
            else:
                action, kind, problem = self.check_action(message, legal, line)
                verdict = str(kind) if problem else "ok"
            if problem:
                # The reply line comes first, then the fault it caused (the order things happened).
                self.reply_entry(seat, line, verdict, written_id, request_id, used_ms, charge, said)
                self.fault(seat, VERDICT_CAUSE[verdict], request_id, problem)
                return None
            assert action is not None  # (check_action chose one: no problem)
            if self.unwritten_request is not None and not said:  # (compact: kept this long)
                self.record_decision(seat, request_id, used_ms, charge.charged_ms, line, action)
            elif self.recording:
                self.reply_entry(seat, line, verdict, written_id, request_id, used_ms, charge, said)
            return action

    def stderr_waiting(self, seat: _Seat) -> bool:
        """Whether the seat's bot wrote to its stderr while ask_rest waited for its reply."""
        said_from = self.said_from
        return said_from is not None and bool(seat.bot.stderr_since(said_from[1]))

    def decision_stderr(self, seat: _Seat) -> str:
        """What the seat's bot wrote to its stderr while ask_rest waited for the reply that ends
        its decision (read up to now), as its record keeps it: the last STDERR_DECISION_BYTES,
        within STDERR_MATCH_BYTES of the seat's in the match (markers aside), a cut said in a
        marker; "" for none. Counted as kept: call it once, for the line that is written."""
        said_from = self.said_from
        if said_from is None or said_from[0] is not seat:
            return ""
        bot = seat.bot
        said = bot.stderr_since(said_from[1])
        if not said or seat.stderr_full:
            return ""
        total = (bot.stderr_read() or 0) - said_from[1]
        room = min(STDERR_DECISION_BYTES, STDERR_MATCH_BYTES - seat.stderr_kept)
        if room <= 0:
            seat.stderr_full = True
            return (
                f"[arena: {total} bytes of stderr not kept, nor any more in this match: the "
                f"record keeps {STDERR_MATCH_BYTES} bytes of a seat's stderr per match]"
            )
        kept = said[-room:]
        seat.stderr_kept += len(kept)
        text = kept.decode(errors="replace")
        if total > len(kept):
            text = f"[arena: {total - len(kept)} bytes of stderr before these not kept]\n" + text
        return text

    def check_action(
        self, message: Action, legal: list[str], line: bytes
    ) -> tuple[str | None, FaultKind, str]:
        """(the action, or None; the fault kind; the reason, "" when the action is fine)."""
        if (message.action is UNSET) == (message.index is UNSET):
            return (
                None,
                FaultKind.MALFORMED,
                (
                    f"sent {shorten(line)}: an action message needs exactly one of "
                    '"action" and "index"'
                ),
            )
        if message.index is not UNSET:
            if 0 <= message.index < len(legal):
                return legal[message.index], FaultKind.ILLEGAL, ""
            allowed = ", ".join(legal[:12]) + (", ..." if len(legal) > 12 else "")
            return (
                None,
                FaultKind.ILLEGAL,
                (
                    f"answered index {message.index}, but {len(legal)} actions were offered "
                    f"(0..{len(legal) - 1}: {allowed})"
                ),
            )
        if message.action in legal:
            return message.action, FaultKind.ILLEGAL, ""
        return (
            None,
            FaultKind.ILLEGAL,
            (
                f"answered {message.action!r} to a {self.state.decision} decision, which is "
                f"illegal: {self.state.explain_illegal(message.action)}"
            ),
        )

    def reply_entry(
        self,
        seat: _Seat,
        line: bytes,
        verdict: str,
        written_id: int | None,
        pending_id: int,
        used_ms: float | None,
        charge: Charge | None,
        said: str = "",
    ) -> None:
        """The record's ``reply`` line (SPEC.md section 8); ``said``: the bot's stderr of the
        decision the line ends (decision_stderr), kept on it.

        ``id`` is the id the bot wrote (None when the line has none); ``ms`` is measured from the
        request that id names (None when it names no request sent in this match); ``pending`` is
        the request the line was read for and charged to; ``charged_ms`` what the bank lost.
        """
        if not self.recording:
            return
        if written_id == pending_id:
            ms = used_ms
        else:
            sent = None if written_id is None else seat.sent_time(written_id)
            ms = None if sent is None else (self.now() - sent) * 1000
        charged = None if charge is None or not self.banked else charge.charged_ms
        text = line[:RECORDED_LINE_CHARS].decode("utf-8", errors="replace")
        entry = {
            "type": "reply",
            "seat": seat.index,
            "id": written_id,
            "ms": None if ms is None else ms3(ms),
            "pending": pending_id,
            "charged_ms": charged,
            "text": text,
            "verdict": verdict,
        }
        if said:
            entry["stderr"] = said
        self.write(entry)

    def timed_out(self) -> str:
        """The pending request ran out of time: record the fault, return the autopilot's move."""
        assert self.waiting is not None
        seat, request_id, sent_at, written = self.waiting
        self.waiting = None
        waited_ms = (self.now() - sent_at) * 1000
        seat.times_ms.append(waited_ms)
        charge = seat.clock.charge(None)
        if seat.bot.transport.exit_status() is not None:
            # It died while a child of it kept its output open, so no end of file came.
            self.fault(
                seat,
                FaultCause.DIED,
                request_id,
                f"ended while its output stayed open: {seat.bot.exit_reason()}",
            )
        elif not written:
            # The write was cut off: the bot's input now holds half a line, so it cannot go on.
            self.unwritable(seat)
            self.fault(
                seat,
                FaultCause.INPUT_NOT_READ,
                request_id,
                f"did not read its input within {charge.allowed_ms} ms "
                f"(+{self.control.margin_ms} ms margin)",
            )
            seat.bot.mark_broken("stopped reading its input")
        else:
            self.fault(
                seat,
                FaultCause.NO_REPLY,
                request_id,
                f"no answer to a {self.state.decision} decision within {charge.allowed_ms} ms "
                f"(+{self.control.margin_ms} ms margin)",
            )
        return self.autopilot_move(self.state.legal_actions())

    # -- the whole match ---------------------------------------------------------------------------

    def start(self, commitment: str | None = None) -> None:
        seats_info = [
            SeatInfo(
                seat=s.index,
                name=s.bot.sent_name,
                team=None if self.teams is None else self.teams[s.index],
            )
            for s in self.seats
        ]
        self.record.write(
            {
                "type": "header",
                "format": RECORD_FORMAT,
                "protocol": PROTOCOL_VERSION,
                "match_id": self.match_id,
                "sent_match_id": self.sent_id,
                "game": self.game.id,
                "players": self.players,
                "options": self.resolved,
                "seed": self.seed,
                "seats": [
                    {
                        "seat": s.index,
                        "bot": s.bot.name,
                        "version": s.bot.version,
                        "team": None if self.teams is None else self.teams[s.index],
                        "ready_name": s.bot.reported_name,
                        "sent_name": s.bot.sent_name,
                        # a seat with a limit of its own (a person's, SPEC 11)
                        **(
                            {"decision_ms": s.clock.decision_ms}
                            if s.clock.decision_ms != self.control.decision_ms
                            else {}
                        ),
                    }
                    for s in self.seats
                ],
                "time_control": self.control.as_dict(),
                "max_faults": self.max_faults,
                "started": datetime.now(UTC).isoformat(timespec="seconds"),
                **({"commitment": commitment} if commitment is not None else {}),
                **({"compact": True} if self.compact_record else {}),
            }
        )
        self.record_shuffles(0)
        if self.full_record:
            self.record.write({"type": "deal", "view": self.state.view(None)})
        elif self.compact_record:
            self.dealer.then = self.record.keep_shuffle
        for seat in self.seats:
            if seat.bot.startup_error is not None:
                # Its process could not be started: the seat forfeits and the autopilot plays it.
                self.unwritable(seat)
                seat.forfeited = True
                self.fault(
                    seat, FaultCause.NOT_STARTED, None, f"did not start: {seat.bot.startup_error}"
                )
                continue
            seat.bot.stats.matches += 1
            seat.bot.mark_log(f"match {self.match_id} ({self.game.id}, seat {seat.index}) starts")
            seat.pending.append(
                encode_line(
                    MatchStart(
                        match_id=self.sent_id,
                        game=self.game.id,
                        options=self.resolved,
                        players=self.players,
                        seat=seat.index,
                        seats=seats_info,
                    )
                )
            )
        self.route_events()
        if self.eager:
            self.push_events()

    async def play(self) -> None:
        state = self.state
        self.task = trio.lowlevel.current_task()
        while not state.is_over:
            with trio.CancelScope() as scope:
                self.new_scope()
                seats = self.seats
                while state.seat_to_move is not None:  # (not state.is_over: a property call)
                    seat = seats[state.seat_to_move]
                    answer = self.ask_now(seat, scope)
                    expired = False
                    if answer is None:
                        answer = await self.ask_rest(seat, scope)
                        # It expired in the pass that brought this reply: moving its deadline
                        # does not undo that, and the next seat's wait would end at once. (Only
                        # trio's scheduler cancels it, and ask_now never yields to it.)
                        expired = self.now() >= self.expiry_check_from and self.scope_expired(scope)
                    self.apply(seat, answer[0], answer[1])
                    if expired:
                        break
            if scope.cancelled_caught and self.waiting is not None:
                seat = self.waiting[0]
                self.mark = time.perf_counter()
                self.apply(seat, self.timed_out(), "autopilot")

    def apply(self, seat: _Seat, action: str, chosen_by: str) -> None:
        """Apply the decision's action, recorded unless its compact line is (quick_reply)."""
        if self.action_recorded:  # an ordinary decision's compact line (quick_reply)
            self.action_recorded = False
        elif self.recording:
            self.record_action(seat, action, chosen_by)
        self.state.apply(action)
        self.route_events()
        if self.eager:
            self.push_events()

    def push_events(self) -> None:
        """Write to each eager seat (a person) what it has not seen yet, now rather than with
        its next request: the very lines a bot gets, in the same order, only sooner."""
        for seat in self.eager:
            if not seat.writable:
                continue
            seat.take_shared(self.shared_lines)
            if seat.pending:
                data = b"".join(seat.pending)
                seat.pending.clear()
                try:
                    seat.bot.send_nowait(data)
                except BotGone:
                    self.unwritable(seat)

    def final_placings(
        self, game_placings: tuple[int, ...]
    ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Placings with every forfeited seat (and its partners) placed last; the forfeited seats."""
        forfeited = tuple(s.index for s in self.seats if s.forfeited)
        return tuple(forfeit_placings(game_placings, set(forfeited), self.teams)), forfeited

    async def finish(
        self,
        placings: tuple[int, ...],
        scores: tuple[int, ...],
        forfeited: tuple[int, ...],
        termination: Termination = Termination.COMPLETED,
    ) -> None:
        """Send match_end (after anything still pending) to every seat that can take it."""
        end = encode_line(
            MatchEnd(
                match_id=self.sent_id,
                scores=list(scores),
                placings=list(placings),
                forfeited=list(forfeited),
                reason=termination,
            )
        )

        async def deliver(seat: _Seat, data: bytes) -> None:
            with trio.move_on_after(MATCH_END_TIMEOUT_S) as scope:
                try:
                    await seat.bot.send(data)
                except BotGone:
                    seat.bot.mark_broken("could not take match_end")
            if scope.cancelled_caught:
                seat.bot.mark_broken("did not read its input (match_end)")

        # Mostly it fits in each bot's pipe at once; only what does not waits (in parallel).
        rest: list[tuple[_Seat, bytes]] = []
        for seat in self.seats:
            if seat.writable:
                data = seat.unseen(self.shared_lines, end)
                try:
                    written = seat.bot.send_nowait(data)
                except BotGone:
                    seat.bot.mark_broken("could not take match_end")
                    continue
                if written < len(data):
                    rest.append((seat, data[written:]))
        if rest:
            async with trio.open_nursery() as nursery:
                for seat, data in rest:
                    nursery.start_soon(deliver, seat, data)


class MatchStopped(Exception):
    """The match was stopped from outside (MatchStop): its record ends with a ``stopped`` line."""

    def __init__(self, reason: str, record_path: Path | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.record_path = record_path


class MatchStop:
    """Stops a match from outside with a reason (a person's Ctrl-C, SPEC 11): the decision in
    progress is abandoned, the record ends with ``{"type": "stopped", "reason": ...}`` instead
    of a result, and run_match raises MatchStopped."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self.scope = trio.CancelScope()

    def stop(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
        self.scope.cancel()


async def run_match(
    game: GameSpec,
    seats: Sequence[BotProcess],
    *,
    seed: int,
    options: Mapping | None = None,
    match_id: str,
    time_control: TimeControl = TimeControl(),
    max_faults: int = 3,
    record_path: Path | RecordFile | None = None,
    commitment: str | None = None,
    sent_id: str | None = None,
    seat_decision_ms: Mapping[int, int] | None = None,
    stop: MatchStop | None = None,
) -> MatchResult:
    """Play one match between running bots (seat i is ``seats[i]``) and return its result.
    ``record_path``: a file to write the match's record to, or a records file to append it to
    (the result's ``record_span`` says where it went). ``commitment``: the commitment of the
    secret tournament seed the match seed derives from, for the record's header (SPEC 10.3).
    ``sent_id``: the match id the bots are sent, when it is not ``match_id`` (a tournament's
    opaque id, SPEC 4.1); everything else (record, result, log markers, messages) names the
    match by ``match_id``.
    ``seat_decision_ms``: a limit per decision of its own for some seats (a person's); the header
    names it in that seat's entry. ``stop``: lets the caller stop the match (MatchStopped).

    Raises OptionError for a bad player count or options before any bot is spoken to. The bots are
    not closed here: their owner closes them, and replaces any that is no longer ``alive``.
    """
    if max_faults < 1:
        raise ValueError(f"max_faults = {max_faults}: expected >= 1")
    began = time.perf_counter()
    game.check_players(len(seats))
    if len({id(bot) for bot in seats}) != len(seats):
        raise ValueError("run_match: one BotProcess in two seats (start one process per seat)")
    options = game.resolve_options(options)  # bad options fail before any file or bot is touched
    record = RecordWriter(
        record_path
        if record_path is None or isinstance(record_path, RecordFile)
        else Path(record_path)
    )
    match = None
    finished = False
    try:
        match = _Match(
            game,
            seats,
            seed,
            options,
            match_id,
            time_control,
            max_faults,
            record,
            sent_id,
            seat_decision_ms,
        )
        stop_scope = stop.scope if stop is not None else trio.CancelScope()
        with stop_scope:
            match.start(commitment)
            await match.play()
        if stop is not None and stop_scope.cancelled_caught:
            reason = stop.reason or "stopped"
            match.write({"type": "stopped", "reason": reason})
            record.close()
            raise MatchStopped(reason, record.path)
        outcome = match.state.result()
        placings, forfeited = match.final_placings(outcome.placings)
        # "completed", unless the game stops early on purpose (arena check's one-decision matches)
        termination = Termination(match.state.termination)
        await match.finish(placings, outcome.scores, forfeited, termination)
        duration = time.perf_counter() - began
        load = machine_load_per_core()
        record.write(
            {
                "type": "result",
                "scores": list(outcome.scores),
                "game_placings": list(outcome.placings),
                "placings": list(placings),
                "teams": None if outcome.teams is None else list(outcome.teams),
                "forfeited": list(forfeited),
                "termination": termination,
                "faults": len(match.faults),
                "duration_s": round(duration, 6),
                "referee_ms": latency_summary(match.referee_us),
                "load_per_core": load,
            }
        )
        finished = True
        record.close()  # (before the result: its span is known once written)
        return MatchResult(
            match_id=match_id,
            game=game.id,
            options=match.resolved,
            seed=seed,
            players=match.players,
            bots=tuple(s.bot.name for s in match.seats),
            scores=tuple(outcome.scores),
            placings=placings,
            teams=outcome.teams,
            forfeited=forfeited,
            faults=tuple(match.faults),
            decision_ms=tuple(tuple(s.times_ms) for s in match.seats),
            referee_us=tuple(match.referee_us),
            record_path=record.path,
            record_span=record.span,
            termination=termination,
            duration_s=duration,
            load_per_core=load,
        )
    finally:
        record.close()
        if match is not None:
            for seat in match.seats:  # its requests in this match (ids counted in ask_now)
                seat.bot.stats.requests += seat.bot.last_request_id - seat.first_id + 1
        if not finished:
            # Cut off mid-match (cancelled or a crash in the referee): no bot's stream can be trusted.
            for bot in seats:
                bot.mark_broken(f"match {match_id} was aborted")
