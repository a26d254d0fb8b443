"""`arena check`: put one bot through everything the arena will ask of it, and say what is wrong.

The checks, in order (each gives a :class:`CheckResult`):

1. ``handshake``: the bot starts and answers hello with ready in time.
2. ``decide <game> <decision>``: for every decision kind of every registered game, a match is set
   up just before such a decision of one seat (found by seeded random play), the bot sits in that
   seat, gets the match start and every event that seat saw, and must answer the request legally
   and in time. The match then ends (match_end) and the next check starts a new one in the same
   process, so these also check that the bot gets through a match end and a fresh match start.
3. ``fault notice``: a fault message arrives just before a request, as the referee sends one
   after a bot's rejected answer; the bot must carry on and answer the request.
4. ``unknown message type and field``: a message type and a request field from a later protocol
   version, which a bot must ignore.
5. ``time running low``: a decision with only ``low_time_ms`` left (a nearly spent time bank).
6. ``idle while not asked``: after the bot's reply the next seat (in memory) thinks for
   ``idle_window_ms`` before it answers; the bot, not asked meanwhile, must use at most
   ``idle_cpu_ms`` of CPU time in that window (SPEC.md section 7; the window ends early once it
   has used more). Skipped where the bot's CPU time cannot be read
   (:meth:`BotProcess.cpu_seconds`).
7. ``full match <game>``: a whole match of every game against in-memory random players.
8. ``long match``: the game and player count with the most decisions per seat, on a time bank.
9. ``bye``: bye, then end of input: the bot must exit by itself, with status 0.
10. ``end of input``: a fresh process whose input is closed without bye must exit too.

Everything goes through the real referee (:func:`arena.referee.match.run_match` and
:class:`arena.referee.process.BotProcess`), so a check fails exactly when a tournament would fault the
bot, with the referee's own reason. The other seats are in-memory random players (no processes).
A bot that crashes is restarted for the next check; a bot that cannot start fails the handshake and
every other check is skipped.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import trio

from arena.games import GAMES, GameSpec, Result, find_game
from arena.games.cards import Rng, derive_seed
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.process import CLOSE_GRACE_S, BotGone, BotProcess, BotStartupError
from arena.referee.record import ReplayError, read_record
from arena.referee.results import FaultKind, FaultRecord, MatchResult, Termination
from protocol.codec import decode_to_bot, encode_line
from protocol.messages import Action, Bye, Fault, Hello, Ready, Request

PASSED, FAILED, SKIPPED = "pass", "FAIL", "skip"
IDLE_POLL_S = 0.05  # how often the idle check reads the CPU time during its window
GROUPS = ("decisions", "fault", "future", "low-time", "idle", "full", "long", "exit")
POSITION_SEARCH_SEEDS = 20  # random playouts per option set when looking for decision kinds

HINTS: dict[str, str] = {  # by failure kind: a FaultKind, or one of the check's own
    "cannot run": "Check the command: run it by hand from the same directory (a relative path is "
    "taken from the bot's working directory; a script needs its interpreter or a #! line "
    "and the execute bit).",
    FaultKind.STARTUP: "Read one line from standard input; answer the hello with "
    '{"type":"ready","name":"<your bot>"} on one line, then flush standard output.',
    FaultKind.MALFORMED: "Write exactly one JSON object per line on standard output: "
    '{"type":"action","id":<the request\'s id>,"action":"<one of legal>"} '
    '(or "index":<0-based position in legal>). Debug output goes to standard error.',
    FaultKind.ILLEGAL: "Answer with one of the strings in the request's legal list, exactly as "
    "written, or its 0-based index. Never build an action yourself.",
    FaultKind.TIMEOUT: "Answer within time_left_ms (the request says how long you have) and flush "
    "standard output after every line (print(..., flush=True), fflush(stdout)).",
    FaultKind.CRASH: "The bot ended or closed its output; its standard error log says why. One "
    "process plays many matches: after match_end keep reading until bye or the end of input.",
    "bye": 'Exit (status 0) when you read {"type":"bye"} or reach the end of standard input.',
    "eof": "Exit when standard input ends (read() returns nothing): the referee has gone.",
    "future": "Ignore message types and fields you do not know: later protocol versions add them "
    "(SPEC.md section 4).",
    "fault": "A fault message only informs you; read it (or ignore it) and keep answering requests.",
    "idle": "Once you have replied, wait for your next input: stop every thread or helper process "
    "that thinks ahead, and think only while asked. In a tournament your bot shares one core with "
    "the bots of its table, so CPU used while they are asked is taken from them.",
}


@dataclass
class CheckResult:
    """One line of the scorecard."""

    name: str
    status: str  # PASSED, FAILED or SKIPPED
    sent: str = ""  # what the bot was sent (shortened)
    received: str = ""  # what came back (shortened)
    reason: str = ""  # why it failed or was skipped (one line)
    kind: str = ""  # the failure kind: a fault kind, "startup", "bye", "eof", "idle"
    hint: str = ""
    cut_short: bool = False  # its match was stopped after the decision under test

    @property
    def passed(self) -> bool:
        return self.status == PASSED


@dataclass(frozen=True)
class CheckSettings:
    decision_ms: int = 1000
    margin_ms: int = 50
    startup_ms: int = 10000
    low_time_ms: int = 100
    idle_window_ms: int = 1000  # how long the bot is not asked after its reply (the idle check)
    idle_cpu_ms: int = 150  # the CPU time it may use meanwhile
    exit_grace_s: float = CLOSE_GRACE_S  # how long a bot may take to exit (the referee's grace)
    seed: int = 1
    games: tuple[str, ...] = ()  # game ids or aliases; empty: every registered game
    only: tuple[str, ...] = ()  # check groups (GROUPS) to run; empty: all (handshake always)
    log_dir: Path = Path("arena-check-logs")

    @property
    def time_control(self) -> TimeControl:
        return TimeControl(
            decision_ms=self.decision_ms, margin_ms=self.margin_ms, startup_ms=self.startup_ms
        )


# -- the other seats: random players in memory ------------------------------------------------------


class _RandomSeat:
    """An in-memory transport that behaves like a correct random bot (the other seats of a check)."""

    def __init__(self, seed: int, idle: _IdleWindow | None = None) -> None:
        self.rng = Rng(seed)
        self.idle = idle
        self.outbox_send, self.outbox = trio.open_memory_channel[bytes](math.inf)
        self.partial = b""
        self.status: str | None = None

    async def send_all(self, data: bytes) -> None:
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        for line in lines:
            try:
                message = decode_to_bot(line)
            except msgspec.ValidationError:
                continue  # a message type this random player does not know
            if isinstance(message, Hello):
                self.outbox_send.send_nowait(encode_line(Ready(name="random")))
            elif isinstance(message, Request):
                if self.idle is not None:
                    await self.idle.think()
                index = self.rng.below(len(message.legal))
                self.outbox_send.send_nowait(encode_line(Action(id=message.id, index=index)))

    async def receive_some(self, max_bytes: int) -> bytes:
        return await self.outbox.receive()

    async def terminate(self, grace_s: float) -> None:
        self.status = "exited with status 0"

    def exit_status(self) -> str | None:
        return self.status


class _IdleWindow:
    """The idle check's pause: the first in-memory seat asked after the bot under test was asked
    in this match (so after its reply: the referee asks one seat at a time) thinks for
    ``window_s`` before it answers, and the bot's CPU time is read just before and just after.

    It also reads the CPU time every ``IDLE_POLL_S`` meanwhile and stops thinking once the bot
    has used more than ``limit_s``: the check has failed then, whatever the rest of the window
    holds (so a bot that computes is judged by what it did, not by how much of the machine it
    happened to get)."""

    def __init__(self, bot: BotProcess, window_s: float, limit_s: float) -> None:
        self.bot = bot
        self.asked_before = bot.last_request_id
        self.window_s = window_s
        self.limit_s = limit_s
        self.began = False
        self.readings: tuple[float | None, float | None] | None = None  # its CPU s at both ends
        self.wall_s = 0.0  # from the first reading to the last

    async def think(self) -> None:
        if self.began or self.bot.last_request_id == self.asked_before:
            return
        self.began = True
        began = time.perf_counter()
        first = self.bot.cpu_seconds()
        until = trio.current_time() + self.window_s
        last = first
        while trio.current_time() < until:
            await trio.sleep_until(min(until, trio.current_time() + IDLE_POLL_S))
            last = self.bot.cpu_seconds()
            if first is None or last is None or last - first > self.limit_s:
                break
        self.wall_s = time.perf_counter() - began
        self.readings = (first, last)


async def _random_seats(
    count: int, seed: int, control: TimeControl, idle: _IdleWindow | None = None
) -> list[BotProcess]:
    seats = []
    for n in range(count):
        spec = BotSpec(name=f"random-{n + 1}", argv=("(in memory)",))
        seats.append(
            await BotProcess.connect(
                spec, _RandomSeat(derive_seed(seed, f"seat {n}"), idle), time_control=control
            )
        )
    return seats


# -- positions: a match set up just before a given decision -----------------------------------------


@dataclass(frozen=True)
class Position:
    """Replaying ``steps`` seeded random actions of (game, players, options, seed) reaches a
    ``decision`` of ``seat``."""

    game: GameSpec
    players: int
    options: dict[str, Any]
    seed: int
    steps: int
    decision: str
    seat: int


def _chooser(seed: int) -> Rng:
    return Rng(derive_seed(seed, "arena check"))


def option_sets(game: GameSpec) -> list[dict[str, Any]]:
    """The default options, then each true/false option flipped (some add decision kinds)."""
    sets: list[dict[str, Any]] = [{}]
    for option in game.options:
        if isinstance(option.default, bool):
            sets.append({option.name: not option.default})
    return sets


def find_positions(game: GameSpec, seed: int) -> list[Position]:
    """One position for each decision kind seen in seeded random play, in order of first sight."""
    found: dict[str, Position] = {}
    players = game.default_players
    for options in option_sets(game):
        for n in range(POSITION_SEARCH_SEEDS):
            match_seed = derive_seed(seed, f"{game.id} {options} {n}")
            state = game.new_match(players, options, match_seed)
            chooser = _chooser(match_seed)
            steps = 0
            while not state.is_over:
                kind = state.decision
                if kind not in found:
                    found[kind] = Position(
                        game, players, dict(options), match_seed, steps, kind, state.mover
                    )
                legal = state.legal_actions()
                state.apply(legal[chooser.below(len(legal))])
                steps += 1
    return list(found.values())


def positioned_game(position: Position, then_another: bool = False) -> GameSpec:
    """A copy of the game whose matches start at ``position`` and end after that one decision
    (``then_another``: after the next decision of another seat too)."""
    base = position.game.state_class
    seat = position.seat

    class Positioned(base):  # type: ignore[misc, valid-type]
        # The referee says so in match_end, the record and the result.
        termination = Termination.CUT_SHORT
        seat_to_move: int | None

        def __init__(self, players, options, seed, dealer=None) -> None:
            self.stop_after: int | None = None
            super().__init__(players, options, seed, dealer)
            chooser = _chooser(seed)
            for _ in range(position.steps):
                legal = self.legal_actions()
                self.apply(legal[chooser.below(len(legal))])
            self.stop_after = len(self.actions) + 1

        def _apply(self, action: str) -> None:
            mover = self.seat_to_move
            super()._apply(action)
            if (
                self.stop_after is not None
                and len(self.actions) >= self.stop_after
                and not (then_another and mover == seat)
            ):
                self.seat_to_move = None  # the check wanted this decision (or these) only

        def result(self) -> Result:
            players = self.players
            return Result((0,) * players, (1,) * players, self.SPEC.teams(players))

    Positioned.__name__ = f"Positioned{base.__name__}"
    return dataclasses.replace(position.game, state_class=Positioned)


# -- running the checks --------------------------------------------------------------------------


@dataclass
class _Session:
    """The bot under test (restarted when it dies) and what the checks share."""

    spec: BotSpec
    settings: CheckSettings
    bot: BotProcess | None = None
    matches: int = 0
    startup_problem: str = ""

    async def running(self) -> BotProcess | None:
        bot = self.bot
        if bot is not None and not bot.closed and bot.retired is None and bot.broken is None:
            # Alive, or it ended by itself after the last match_end: then the next match shows
            # that as a crash (one process plays many matches), whether or not its exit has been
            # noticed yet. A bot the referee gave up on (retired, broken) is restarted instead.
            return bot
        if self.bot is not None:
            await self.bot.close()
        try:
            self.bot = await BotProcess.start(
                self.spec, time_control=self.settings.time_control, log_dir=self.settings.log_dir
            )
        except BotStartupError as error:
            self.bot = None
            self.startup_problem = error.reason
        return self.bot

    async def close(self) -> None:
        if self.bot is not None:
            await self.bot.close()

    def upcoming_match_id(self, label: str) -> str:
        return f"check-{self.matches + 1}-{label.replace(' ', '-')}"

    def next_match_id(self, label: str) -> str:
        match_id = self.upcoming_match_id(label)
        self.matches += 1
        return match_id

    async def play(
        self,
        game: GameSpec,
        players: int,
        seat: int,
        options: dict[str, Any],
        seed: int,
        label: str,
        control: TimeControl,
        idle: _IdleWindow | None = None,
    ) -> tuple[MatchResult, Path] | str:
        """One match with the bot in ``seat`` and random players elsewhere (``idle``: one of
        them holds back its answer); a string if the bot could not be started."""
        bot = await self.running()
        if bot is None:
            return self.startup_problem
        others = await _random_seats(players - 1, seed, control, idle)
        seats = others[:seat] + [bot] + others[seat:]
        match_id = self.next_match_id(label)
        record = self.settings.log_dir / f"{match_id}.jsonl"
        result = await run_match(
            game,
            seats,
            seed=seed,
            options=options,
            match_id=match_id,
            time_control=control,
            record_path=record,
        )
        return result, record

    async def play_position(
        self,
        position: Position,
        label: str,
        control: TimeControl,
        idle: _IdleWindow | None = None,
    ) -> tuple[MatchResult, Path] | str:
        """A match set up just before ``position``'s decision and cut short after it (with
        ``idle``: after the next decision of another seat too, who holds back its answer)."""
        return await self.play(
            positioned_game(position, then_another=idle is not None),
            position.players,
            position.seat,
            position.options,
            position.seed,
            label,
            control,
            idle,
        )


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _exchange(record: Path, seat: int, request_id: int | None) -> tuple[str, str]:
    """What the seat was asked (request ``request_id``, or its last one) and what it answered,
    read back from the match record."""
    sent, received = "", ""
    try:
        for entry in read_record(record):
            if entry.get("seat") != seat:
                continue
            if entry["type"] == "request":
                if sent and request_id is not None and entry.get("id", 0) > request_id:
                    break
                legal = entry.get("legal", [])
                shown = ", ".join(legal[:8]) + (", ..." if len(legal) > 8 else "")
                sent = (
                    f"request id {entry.get('id')}: {entry.get('decision')} "
                    f"(legal: {shown}; time_left_ms {entry.get('time_left_ms')})"
                )
                received = "(nothing)"
            elif entry["type"] == "reply":
                received = f"{entry.get('text', '')} [{entry.get('verdict', '')}]"
    except (ReplayError, TypeError):
        pass
    return _short(sent), _short(received)


def _judge(name: str, outcome: tuple[MatchResult, Path] | str, seat: int) -> CheckResult:
    if isinstance(outcome, str):
        return CheckResult(
            name,
            FAILED,
            reason=f"the bot could not be started: {outcome}",
            kind=FaultKind.STARTUP,
            hint=HINTS[FaultKind.STARTUP],
        )
    result, record = outcome
    cut_short = result.termination is Termination.CUT_SHORT
    mine: list[FaultRecord] = [f for f in result.faults if f.seat == seat]
    if not mine:
        sent, received = _exchange(record, seat, None)
        return CheckResult(name, PASSED, sent=sent, received=received, cut_short=cut_short)
    first = mine[0]
    sent, received = _exchange(record, seat, first.request_id)
    more = f" (and {len(mine) - 1} more faults)" if len(mine) > 1 else ""
    kind = str(first.kind)
    return CheckResult(
        name,
        FAILED,
        sent=sent,
        received=received,
        reason=first.message + more,
        kind=kind,
        hint=HINTS.get(kind, ""),
        cut_short=cut_short,
    )


async def _check_decision(session: _Session, position: Position) -> CheckResult:
    name = f"decide {position.game.id} {position.decision}"
    outcome = await session.play_position(position, name, session.settings.time_control)
    return _judge(name, outcome, position.seat)


class _BeforeRequest:
    """Wraps the bot's transport for one match: ``extra`` lines go just before the first request
    (where the referee puts fault notices), and ``field`` is added to that request."""

    def __init__(self, inner: Any, extra: bytes, field: bytes = b"") -> None:
        self.inner = inner
        self.extra = extra
        self.field = field
        self.done = False

    async def send_all(self, data: bytes) -> None:
        head = b'{"type":"request",'
        at = data.find(head)
        if not self.done and at >= 0:
            self.done = True
            data = data[:at] + self.extra + head + self.field + data[at + len(head) :]
        await self.inner.send_all(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def _check_with_extra_lines(
    session: _Session,
    position: Position,
    name: str,
    make_lines: Callable[[BotProcess, str], bytes],
    field: bytes,
    hint: str,
) -> CheckResult:
    """A one-decision match in which the bot also gets ``make_lines(bot, match_id)`` before the
    request (and ``field`` inside it); it must carry on and answer."""
    bot = await session.running()
    if bot is None:
        return _judge(name, session.startup_problem, position.seat)
    lines = make_lines(bot, session.upcoming_match_id(name))
    transport = bot.transport
    bot.transport = _BeforeRequest(transport, lines, field)
    try:
        outcome = await session.play_position(position, name, session.settings.time_control)
    finally:
        bot.transport = transport
    result = _judge(name, outcome, position.seat)
    shown = lines.decode().strip().replace("\n", " ")
    if field:
        shown += f", and the field {field.decode().rstrip(',')} in the request"
    result.sent = _short(f"{shown}, then {result.sent}", 240)
    if not result.passed and result.kind != FaultKind.STARTUP:
        result.hint = hint + " " + result.hint
    return result


async def _check_fault_notice(session: _Session, position: Position) -> CheckResult:
    def notice(bot: BotProcess, match_id: str) -> bytes:
        return encode_line(
            Fault(
                match_id=match_id,
                id=bot.last_request_id or None,
                kind=FaultKind.TIMEOUT,
                message=f"bot {bot.name} (seat {position.seat}), request {bot.last_request_id}: an "
                "example fault notice from arena check; the referee moved for you",
            )
        )

    return await _check_with_extra_lines(
        session, position, "fault notice", notice, b"", HINTS["fault"]
    )


async def _check_future_messages(session: _Session, position: Position) -> CheckResult:
    def unknown(bot: BotProcess, match_id: str) -> bytes:
        return (
            b'{"type":"x_future_notice","match_id":"'
            + match_id.encode()
            + b'","text":"a message type from a later protocol version"}\n'
        )

    return await _check_with_extra_lines(
        session,
        position,
        "unknown message type and field",
        unknown,
        b'"x_future_field":{"a":[1,2]},',
        HINTS["future"],
    )


async def _check_low_time(session: _Session, position: Position) -> CheckResult:
    settings = session.settings
    name = f"time running low ({settings.low_time_ms} ms left)"
    control = TimeControl(
        decision_ms=settings.decision_ms,
        bank_ms=settings.low_time_ms,
        margin_ms=settings.margin_ms,
        startup_ms=settings.startup_ms,
    )
    outcome = await session.play_position(position, name, control)
    return _judge(name, outcome, position.seat)


async def _check_idle(session: _Session, position: Position) -> CheckResult:
    """After its reply the bot is not asked for ``idle_window_ms`` (the next seat thinks): it
    must not compute meanwhile (SPEC.md section 7)."""
    settings = session.settings
    name = "idle while not asked"
    window_ms, limit_ms = settings.idle_window_ms, settings.idle_cpu_ms
    bot = await session.running()
    if bot is None:
        return _judge(name, session.startup_problem, position.seat)
    if bot.cpu_seconds() is None:
        return CheckResult(
            name,
            SKIPPED,
            reason="the bot's CPU time cannot be read on this machine (that needs Linux's /proc "
            "or a cgroup v2)",
        )
    idle = _IdleWindow(bot, window_ms / 1000, limit_ms / 1000)
    # The seat that thinks must not time out: the match's decisions get 3 windows at least.
    control = dataclasses.replace(
        settings.time_control, decision_ms=max(settings.decision_ms, 3 * window_ms)
    )
    outcome = await session.play_position(position, name, control, idle)
    result = _judge(name, outcome, position.seat)
    if not result.passed:
        return result
    result.sent += f", then nothing for {window_ms} ms (the next seat thinks)"
    if idle.readings is None:
        result.status = SKIPPED
        result.reason = "no other seat was asked after the bot's reply"
        return result
    first, last = idle.readings
    wall_ms = idle.wall_s * 1000
    if first is None or last is None:
        result.status, result.kind, result.hint = FAILED, FaultKind.CRASH, HINTS[FaultKind.CRASH]
        result.reason = f"bot {bot.name} ended while not asked: {bot.exit_reason()}"
        return result
    used_ms = max(0.0, last - first) * 1000
    result.received += f"; then {used_ms:.0f} ms of CPU in {wall_ms:.0f} ms"
    if used_ms > limit_ms:
        result.status, result.kind, result.hint = FAILED, "idle", HINTS["idle"]
        result.reason = (
            f"bot {bot.name} computed while not asked: used {used_ms:.0f} ms of CPU in the "
            f"{wall_ms:.0f} ms after its reply (at most {limit_ms} ms; SPEC.md section 7)"
        )
    return result


async def _check_full_match(
    session: _Session, game: GameSpec, players: int, seat: int, name: str, control: TimeControl
) -> CheckResult:
    seed = derive_seed(session.settings.seed, name)
    outcome = await session.play(game, players, seat, {}, seed, name, control)
    result = _judge(name, outcome, seat)
    if result.passed and not isinstance(outcome, str):
        match, _ = outcome
        result.sent = f"a whole match: seat {seat} of {players}, seed {seed}, random opponents"
        asked = len(match.decision_ms[seat])
        slowest = max(match.decision_ms[seat], default=0.0)
        result.received = (
            f"{asked} decisions answered, slowest {slowest:.0f} ms; scores "
            f"{list(match.scores)}, placings {list(match.placings)}"
        )
    return result


def decisions_per_seat(game: GameSpec, players: int, seed: int, matches: int = 3) -> float:
    """The mean number of decisions one seat makes in a random match (to pick the long match)."""
    total = 0
    for n in range(matches):
        state = game.new_match(players, {}, derive_seed(seed, f"length {game.id} {n}"))
        chooser = _chooser(seed + n)
        while not state.is_over:
            legal = state.legal_actions()
            state.apply(legal[chooser.below(len(legal))])
        total += len(state.actions)
    return total / (matches * players)


async def _check_exit(session: _Session, say_bye: bool) -> CheckResult:
    """The end of a bot's life: bye then end of input (as the referee ends every bot), or end of
    input alone (the referee went away). The bot must exit by itself, with status 0."""
    name = "bye, then end of input" if say_bye else "end of input without bye"
    kind = "bye" if say_bye else "eof"
    if not say_bye:
        await session.close()  # a fresh process, so this check does not depend on the last
        session.bot = None
    bot = await session.running()
    if bot is None:
        return _judge(name, session.startup_problem, 0)
    session.bot = None
    sent = '{"type":"bye"}, then end of input' if say_bye else "end of input (no bye)"
    if say_bye:
        try:
            await bot.send(encode_line(Bye()))
        except BotGone:
            pass
    grace = session.settings.exit_grace_s
    await bot.transport.terminate(grace)  # as the referee does: end of input, grace, then kill
    await bot.close()
    status = bot.transport.exit_status() or "still running"
    if status == "exited with status 0":
        return CheckResult(name, PASSED, sent=sent, received=status)
    if status.startswith("killed"):
        reason = f"still running {grace:g} s after {sent}, so it was killed"
    else:
        tail = getattr(bot.transport, "stderr_tail", lambda: "")()
        reason = f"{status} after {sent}" + (f" (stderr: {tail})" if tail else "")
    return CheckResult(
        name, FAILED, sent=sent, received=status, reason=reason, kind=kind, hint=HINTS[kind]
    )


async def _check_long_match(session: _Session, games: list[GameSpec]) -> CheckResult:
    """The game and player count with the most decisions per seat, on a time bank."""
    settings = session.settings
    length = {
        (g, p): decisions_per_seat(g, p, settings.seed) for g in games for p in g.player_counts
    }
    game, players = max(length, key=length.__getitem__)
    bank = TimeControl(
        decision_ms=settings.decision_ms,
        bank_ms=settings.decision_ms * 20,
        increment_ms=settings.decision_ms // 10,
        margin_ms=settings.margin_ms,
        startup_ms=settings.startup_ms,
    )
    name = (
        f"long match {game.id}, {players} players (~{length[game, players]:.0f} decisions, "
        "time bank)"
    )
    return await _check_full_match(session, game, players, players - 1, name, bank)


async def run_checks(
    spec: BotSpec, settings: CheckSettings, report: Callable[[CheckResult], None] | None = None
) -> list[CheckResult]:
    """Run every check in order; ``report`` sees each result as soon as it is known."""
    games = [find_game(g) for g in settings.games] if settings.games else list(GAMES.values())
    settings.log_dir.mkdir(parents=True, exist_ok=True)
    results: list[CheckResult] = []

    def add(result: CheckResult) -> None:
        results.append(result)
        if report is not None:
            report(result)

    session = _Session(spec, settings)
    try:
        bot = await session.running()
        if bot is None:
            problem = session.startup_problem
            hint = HINTS["cannot run" if problem.startswith("cannot run") else FaultKind.STARTUP]
            add(
                CheckResult(
                    "handshake",
                    FAILED,
                    sent="hello",
                    reason=problem,
                    kind=FaultKind.STARTUP,
                    hint=hint,
                )
            )
            for name in (
                "decisions",
                "fault notice",
                "unknown message type and field",
                "time running low",
                "idle while not asked",
                "full matches",
                "long match",
                "bye",
                "end of input",
            ):
                add(CheckResult(name, SKIPPED, reason="the bot did not start"))
            return results
        add(
            CheckResult(
                "handshake",
                PASSED,
                sent="hello (protocol, limits)",
                received=f'ready: name "{bot.reported_name}", version "{bot.reported_version}"',
            )
        )

        wanted = set(settings.only or GROUPS)
        positions = [p for game in games for p in find_positions(game, settings.seed)]
        if "decisions" in wanted:
            for position in positions:
                add(await _check_decision(session, position))
        plays = [p for p in positions if p.decision == "play"] or positions
        if "fault" in wanted:
            add(await _check_fault_notice(session, plays[0]))
        if "future" in wanted:
            add(await _check_future_messages(session, plays[0]))
        if "low-time" in wanted:
            add(await _check_low_time(session, plays[-1]))
        if "idle" in wanted:
            add(await _check_idle(session, plays[0]))
        if "full" in wanted:
            for number, game in enumerate(games):
                players = game.default_players
                add(
                    await _check_full_match(
                        session,
                        game,
                        players,
                        number % players,
                        f"full match {game.id}",
                        settings.time_control,
                    )
                )
        if "long" in wanted:
            add(await _check_long_match(session, games))
        if "exit" in wanted:
            add(await _check_exit(session, say_bye=True))
            add(await _check_exit(session, say_bye=False))
    finally:
        await session.close()
    return results


def check_bot(
    spec: BotSpec, settings: CheckSettings, report: Callable[[CheckResult], None] | None = None
) -> list[CheckResult]:
    """Synchronous entry point (runs trio)."""
    return trio.run(run_checks, spec, settings, report)


__all__ = [
    "CheckResult",
    "CheckSettings",
    "Position",
    "check_bot",
    "run_checks",
    "find_positions",
    "positioned_game",
    "HINTS",
    "PASSED",
    "FAILED",
    "SKIPPED",
]
