"""Asking a bot again what it would do at a recorded decision (``arena replay --ask``).

A seat's side of a recorded match is rebuilt from the record and the rules: the ``hello`` (the
recorded name and time control), ``match_start``, every event the seat could see, every fault
notice it was sent and every request, with its view, legal actions and recorded ``time_left_ms``,
in the order and the bytes the referee wrote them (SPEC.md 4, 8). A bot started as in a match
(:meth:`BotProcess.start`: its limits and seal) is sent that conversation; its answer to each
request is read and judged as the referee judges a reply (a stale answer skipped; a line that is
too long, not an ``action``, of a wrong id, or an illegal action, a timeout and a crash are
faults of their kind). Its answers change nothing sent after them: the recorded match goes on.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import msgspec
import trio

from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.lines import LineTooLong, shorten
from arena.referee.process import BotGone, BotProcess
from arena.referee.record import TIME_FIELDS, Replay
from arena.referee.results import FaultKind
from protocol.codec import decode_from_bot, encode_line
from protocol.messages import Action, Event, Fault, MatchEnd, MatchStart, Request, SeatInfo

STDERR_SETTLE_PASSES = 20  # after a reply, scheduler passes its stderr may take to drain
STDERR_KEPT_CHARS = 4000  # of a re-asked decision's stderr, the last this many characters


@dataclass(frozen=True)
class Question:
    """One request the seat was sent: ``number`` counts the seat's requests in the match from 1;
    ``sent`` is every line the seat was sent since the request before, this request last."""

    number: int
    request_id: int
    decision: str
    legal: list[str]
    time_left_ms: int
    recorded: str  # the action the match applied
    recorded_by: str  # "bot", or "autopilot" after a fault
    sent: bytes
    recorded_stderr: str = ""  # what the bot wrote to stderr then, as the record keeps it


@dataclass(frozen=True)
class Conversation:
    """What seat ``seat`` of a recorded match was sent: its requests, then (``ending``) the
    events after its last one and ``match_end``."""

    seat: int
    name: str
    control: TimeControl
    questions: list[Question]
    ending: bytes


@dataclass
class Answer:
    """What the bot answered this time: an ``action`` (None after a fault: ``fault`` its kind,
    ``reason`` why), how long it took and what it wrote to stderr meanwhile."""

    question: Question
    action: str | None
    ms: float | None
    fault: FaultKind | None = None
    reason: str = ""
    stderr: str = ""

    @property
    def differs(self) -> bool:
        return self.fault is not None or self.action != self.question.recorded


@dataclass
class Session:
    """The answers of one re-asked seat, in order; ``stopped``: why the rest was not asked (a
    crash, or a bot that could not start), else empty."""

    conversation: Conversation
    answers: list[Answer] = field(default_factory=list)
    stopped: str = ""


def conversation(replay: Replay, seat: int) -> Conversation:
    """Seat ``seat``'s side of the checked record ``replay``, request by request."""
    header = replay.header
    match_id = header["match_id"]
    state = replay.spec.new_match(header["players"], header["options"], header["seed"])
    seats = [SeatInfo(seat=s["seat"], name=s["bot"], team=s.get("team")) for s in header["seats"]]
    pending = [
        encode_line(
            MatchStart(
                match_id=match_id,
                game=header["game"],
                options=header["options"],
                players=header["players"],
                seat=seat,
                seats=seats,
            )
        )
    ]
    questions: list[Question] = []
    asked: dict[str, Any] | None = None  # the seat's request waiting for its action line
    said = ""  # its stderr, from the reply line that ended it
    writable = True  # the seat's input took everything so far (a crash closes it)
    for entry in replay.entries:
        kind = entry["type"]
        if kind == "event" and writable:
            audience = entry["audience"]
            if audience is None or seat in audience:
                pending.append(encode_line(Event(match_id=match_id, event=entry["data"])))
        elif kind == "fault" and entry["seat"] == seat:
            if entry["kind"] in ("crash", "startup"):
                writable = False  # (the referee writes nothing more to it, not even the notice)
            elif writable:
                fault = Fault(
                    match_id=match_id,
                    id=entry["id"],
                    kind=entry["kind"],
                    message=entry["message"],
                    forfeited=entry["forfeited"],
                )
                pending.append(encode_line(fault))
        elif kind == "request" and entry["seat"] == seat:
            request = Request(
                match_id=match_id,
                id=entry["id"],
                decision=entry["decision"],
                view=state.view(seat),
                legal=entry["legal"],
                time_left_ms=entry["time_left_ms"],
            )
            pending.append(encode_line(request))
            asked = entry
        elif kind == "reply" and asked is not None and entry["seat"] == seat:
            said = entry.get("stderr") or said
        elif kind == "action":
            if asked is not None and entry["seat"] == seat:
                questions.append(
                    Question(
                        number=len(questions) + 1,
                        request_id=asked["id"],
                        decision=asked["decision"],
                        legal=list(asked["legal"]),
                        time_left_ms=asked["time_left_ms"],
                        recorded=entry["action"],
                        recorded_by=entry["by"],
                        sent=b"".join(pending),
                        recorded_stderr=said,
                    )
                )
                pending.clear()
                asked, said = None, ""
            state.apply(entry["action"])
    result = replay.result
    if result is not None and writable:
        pending.append(
            encode_line(
                MatchEnd(
                    match_id=match_id,
                    scores=result["scores"],
                    placings=result["placings"],
                    forfeited=result["forfeited"],
                    reason=result["termination"],
                )
            )
        )
    control = TimeControl(**{key: header["time_control"][key] for key in TIME_FIELDS})
    name = header["seats"][seat]["bot"]
    return Conversation(seat, name, control, questions, b"".join(pending) if writable else b"")


async def ask(
    conversation: Conversation,
    spec: BotSpec,
    numbers: set[int] | None,
    log_dir: Path,
) -> Session:
    """Start the bot ``spec`` (named as the recorded seat) and send it the seat's conversation
    up to the last decision in ``numbers`` (None: every one, then the match's end). Its answers
    to the decisions in ``numbers`` are returned; the others are read and set aside, as the
    referee would read them. Raises BotStartupError when the bot cannot start."""
    session = Session(conversation)
    questions = conversation.questions
    last = max(numbers) if numbers else len(questions)
    bot = await BotProcess.start(
        replace(spec, name=conversation.name),  # (its hello names it as the seat was named)
        time_control=conversation.control,
        log_dir=log_dir,
    )
    try:
        for question in questions[:last]:
            answer = await _answer(bot, question, conversation.control.margin_ms)
            if numbers is None or question.number in numbers:
                session.answers.append(answer)
            if answer.fault is FaultKind.CRASH:
                session.stopped = f"decision {question.number}: {answer.reason}"
                return session
        if numbers is None and conversation.ending:
            with trio.move_on_after(1.0):
                try:
                    await bot.send(conversation.ending)
                except BotGone:
                    pass
    finally:
        await bot.close()
    return session


async def _answer(bot: BotProcess, question: Question, margin_ms: int) -> Answer:
    """Send what came before ``question`` and the request, and read the reply as the referee
    does (SPEC.md 5 and 6), with the recorded time left and the margin."""
    bot.mark_log(f"re-ask of request {question.request_id}")
    limit_s = (question.time_left_ms + margin_ms) / 1000
    began = trio.current_time()
    answer: Answer | None = None
    with trio.move_on_after(limit_s):
        try:
            await bot.send(question.sent)
        except BotGone:
            answer = Answer(
                question, None, None, FaultKind.CRASH, f"cannot be written to: {bot.exit_reason()}"
            )
        if answer is None:
            answer = await _reply(bot, question, began)
    if answer is None:
        answer = Answer(
            question,
            None,
            None,
            FaultKind.TIMEOUT,
            f"no answer within {question.time_left_ms} ms (+{margin_ms} ms margin)",
        )
    if answer.fault is FaultKind.CRASH:
        await bot.settle(1.0)
        answer.reason = f"ended or closed its output: {bot.exit_reason()}"
    answer.stderr = await _stderr_of_decision(bot)
    return answer


async def _reply(bot: BotProcess, question: Question, began: float) -> Answer:
    """Read lines until one answers ``question`` (an earlier request's id is skipped)."""
    pending, legal = question.request_id, question.legal

    def fault(kind: FaultKind, reason: str) -> Answer:
        return Answer(question, None, (trio.current_time() - began) * 1000, kind, reason)

    while True:
        try:
            line = await bot.reader.read_line()
        except LineTooLong as error:
            return fault(
                FaultKind.MALFORMED,
                f"sent a line longer than {error.limit} bytes (starting {shorten(error.head, 60)})",
            )
        if line is None:
            return Answer(question, None, None, FaultKind.CRASH, "")
        try:
            message = decode_from_bot(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            return fault(
                FaultKind.MALFORMED, f"sent {shorten(line)}, which is not a valid message: {error}"
            )
        if not isinstance(message, Action):
            return fault(
                FaultKind.MALFORMED, f"sent {shorten(line)} while an action message was expected"
            )
        if message.id < pending:
            continue  # a late answer to an earlier request: skipped, as in a match
        if message.id > pending:
            return fault(
                FaultKind.MALFORMED,
                f"answered request {message.id}, which was never sent "
                f"(the pending request is {pending})",
            )
        by_index = message.index is not msgspec.UNSET
        if by_index == (message.action is not msgspec.UNSET):
            return fault(
                FaultKind.MALFORMED,
                f'sent {shorten(line)}: an action message needs exactly one of "action" and '
                '"index"',
            )
        if by_index:
            index = message.index
            assert isinstance(index, int)
            if 0 <= index < len(legal):
                return Answer(question, legal[index], (trio.current_time() - began) * 1000)
            return fault(
                FaultKind.ILLEGAL,
                f"answered index {index}, but {len(legal)} actions were offered",
            )
        if message.action in legal:
            return Answer(question, str(message.action), (trio.current_time() - began) * 1000)
        return fault(FaultKind.ILLEGAL, f"answered {message.action!r}, which is not legal now")


async def _stderr_of_decision(bot: BotProcess) -> str:
    """What the bot wrote to stderr since the request (its log's latest section). The stderr
    pipe is drained by a task of its own: a bot writes its stderr before its reply, so it is in
    the pipe already, and a few scheduler passes let that task take it."""
    since = getattr(bot.transport, "stderr_since_mark", None)
    if since is None:
        return ""
    seen, still = -1, 0
    for _ in range(STDERR_SETTLE_PASSES):
        await trio.sleep(0)
        now = len(since())
        still = still + 1 if now == seen else 0
        if still == 2:
            break
        seen = now
    return str(since())[-STDERR_KEPT_CHARS:]


def decision_numbers(text: str, count: int) -> set[int] | None:
    """An ``--ask`` value: ``all`` (None), or decision numbers ``N``, ``N,M`` or ``N-M`` of a
    seat with ``count`` decisions. Raises ValueError with the reason."""
    if text.strip().lower() == "all":
        return None
    numbers: set[int] = set()
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        try:
            first, end = int(low), int(high or low)
        except ValueError:
            raise ValueError(f"{part.strip()!r} is not a decision number") from None
        numbers.update(range(first, end + 1))
    outside = sorted(n for n in numbers if not 1 <= n <= count)
    if not numbers or outside:
        raise ValueError(
            f"decision {outside[0] if outside else text}: this seat has decisions 1..{count}"
            if count
            else "this seat was asked no decision in this match"
        )
    return numbers


def changed(session: Session) -> Iterator[Answer]:
    """The answers that differ from the record (another action, or a fault)."""
    return (answer for answer in session.answers if answer.differs)
