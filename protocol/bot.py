"""A small helper for writing a bot in Python: read a request, call your function, answer.

The helper does the handshake, keeps track of the match, passes events on, answers every request
with what your function returns, and exits on ``bye`` or end of input::

    from protocol.bot import run

    def choose(request, match):
        # request.view: what you may know; request.legal: every legal action
        return request.legal[0]            # an action from request.legal, or its 0-based index

    run(choose, name="first-legal")

For more control subclass :class:`Bot` and override any of its hooks (``on_match_start``,
``on_event``, ``choose``, ``on_fault``, ``on_match_end``), then ``run(MyBot())``.

Things the helper does for you:
- ``print()`` inside your code goes to standard error (the organiser's log), because a stray line
  on standard output would break the protocol;
- if your ``choose`` raises, the traceback goes to standard error and the first legal action is
  played instead, so one bug costs one decision, not the match; a hook that raises is logged the
  same way and skipped (``on_error="raise"`` to crash instead);
- message types and fields added by later protocol versions are ignored.

Depends on msgspec and ``protocol/`` only (never on the referee).
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

import msgspec

from .codec import decode_to_bot, encode_line
from .messages import (
    PROTOCOL_VERSION,
    Bye,
    Event,
    Fault,
    Hello,
    MatchEnd,
    MatchStart,
    Ready,
    Request,
    SeatInfo,
)

Choice = str | int
"""What a bot answers: an action string from ``legal`` or its 0-based index."""


@dataclass
class Match:
    """One match as this bot has seen it so far."""

    id: str
    game: str
    options: dict[str, Any]
    players: int
    seat: int
    seats: list[SeatInfo]
    events: list[dict[str, Any]] = field(default_factory=list)  # every event, in order
    faults: list[Fault] = field(default_factory=list)
    memory: dict[str, Any] = field(default_factory=dict)  # free for the bot's own notes
    end: MatchEnd | None = None


class Bot:
    """Override ``choose`` (required) and any other hook. Hooks run in message order."""

    name: str = "python-bot"
    version: str = ""

    def on_hello(self, hello: Hello) -> None:
        """The referee's greeting, with the time limits (``hello.limits``)."""

    def on_match_start(self, match: Match) -> None:
        """A new match: ``match.game``, ``match.players``, ``match.seat``, ``match.options``."""

    def on_event(self, match: Match, event: dict[str, Any]) -> None:
        """Something this seat saw happen (already appended to ``match.events``)."""

    def choose(self, request: Request, match: Match) -> Choice:
        raise NotImplementedError("override choose(request, match) to answer requests")

    def on_fault(self, match: Match | None, fault: Fault) -> None:
        """The referee says this bot did something wrong; it has already moved for the bot."""
        print(f"{self.name}: fault {fault.kind}: {fault.message}", file=sys.stderr)

    def on_match_end(self, match: Match, end: MatchEnd) -> None:
        """The match is over: ``end.scores`` and ``end.placings`` per seat."""


class _FunctionBot(Bot):
    def __init__(
        self, function: Callable[[Request, Match], Choice], name: str, version: str
    ) -> None:
        self.function = function
        self.name = name
        self.version = version

    def choose(self, request: Request, match: Match) -> Choice:
        return self.function(request, match)


def run(
    bot: Bot | Callable[[Request, Match], Choice],
    *,
    name: str | None = None,
    version: str | None = None,
    on_error: str = "fallback",
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
) -> None:
    """Play until ``bye`` or end of input. ``bot`` is a :class:`Bot` or a ``choose`` function.

    ``on_error``: "fallback" (log the traceback, play the first legal action) or "raise".
    ``stdin``/``stdout`` default to the process's binary standard streams (tests pass pipes).
    """
    if on_error not in ("fallback", "raise"):
        raise ValueError(f"on_error must be 'fallback' or 'raise', not {on_error!r}")
    if not isinstance(bot, Bot):
        bot = _FunctionBot(bot, name or str(getattr(bot, "__name__", "python-bot")), version or "")
    else:
        bot.name = name or bot.name
        bot.version = version if version is not None else bot.version
    reader = stdin if stdin is not None else sys.stdin.buffer
    writer = stdout if stdout is not None else sys.stdout.buffer
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # a stray print() must never reach the referee
    try:
        _serve(bot, reader, writer, on_error)
    finally:
        sys.stdout = real_stdout


def _send(writer: IO[bytes], message: msgspec.Struct) -> None:
    writer.write(encode_line(message))
    writer.flush()


def _serve(bot: Bot, reader: IO[bytes], writer: IO[bytes], on_error: str) -> None:
    matches: dict[str, Match] = {}

    def hook(function: Callable[..., None], *args: Any) -> None:
        """Call one of the bot's hooks under the same error policy as ``choose``."""
        try:
            function(*args)
        except Exception:
            if on_error == "raise":
                raise
            print(
                f"{bot.name}: {function.__name__}() failed; carrying on:\n{traceback.format_exc()}",
                file=sys.stderr,
            )

    for line in reader:
        message = _decode(line)
        if message is None:
            continue
        if isinstance(message, Request):
            match = matches.get(message.match_id) or _unknown_match(message.match_id)
            matches[message.match_id] = match
            _send(writer, _ActionAnswer(id=message.id, **_answer(bot, message, match, on_error)))
        elif isinstance(message, Event):
            known = matches.get(message.match_id)
            if known is not None:
                known.events.append(message.event)
                hook(bot.on_event, known, message.event)
        elif isinstance(message, MatchStart):
            match = Match(
                id=message.match_id,
                game=message.game,
                options=dict(message.options),
                players=message.players,
                seat=message.seat,
                seats=list(message.seats),
            )
            matches[message.match_id] = match
            hook(bot.on_match_start, match)
        elif isinstance(message, Fault):
            known = matches.get(message.match_id)
            if known is not None:
                known.faults.append(message)
            hook(bot.on_fault, known, message)
        elif isinstance(message, MatchEnd):
            ended = matches.pop(message.match_id, None)
            if ended is not None:
                ended.end = message
                hook(bot.on_match_end, ended, message)
        elif isinstance(message, Hello):
            if message.protocol != PROTOCOL_VERSION:
                print(
                    f"{bot.name}: the referee speaks protocol {message.protocol}, this helper "
                    f"{PROTOCOL_VERSION}; carrying on",
                    file=sys.stderr,
                )
            hook(bot.on_hello, message)
            _send(writer, Ready(name=bot.name, version=bot.version))
        elif isinstance(message, Bye):
            return


class _ActionAnswer(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, tag="action"):
    """An ``Action`` written without the unused one of ``action``/``index`` (no ``null``s)."""

    id: int
    action: str | None = None
    index: int | None = None


def _decode(line: bytes) -> Any:
    """A message, or None for a line to ignore (blank, or a message type this helper predates)."""
    if not line.strip():
        return None
    try:
        return decode_to_bot(line)
    except msgspec.ValidationError as error:
        if "Invalid value" in str(error) and "$.type" in str(error):
            return None  # a message type added by a later protocol version
        raise


def _answer(bot: Bot, request: Request, match: Match, on_error: str) -> dict[str, Any]:
    try:
        choice = bot.choose(request, match)
        if isinstance(choice, bool) or not isinstance(choice, (str, int)):
            raise TypeError(
                f"choose() must return an action string or an index, "
                f"not {type(choice).__name__}: {choice!r}"
            )
    except Exception:
        if on_error == "raise":
            raise
        print(
            f"{bot.name}: choose() failed on request {request.id}; playing "
            f"{request.legal[0]!r} instead:\n{traceback.format_exc()}",
            file=sys.stderr,
        )
        choice = request.legal[0]
    return {"index": choice} if isinstance(choice, int) else {"action": choice}


def _unknown_match(match_id: str) -> Match:
    """A request for a match whose start this bot never saw (it should not happen): carry on."""
    return Match(id=match_id, game="", options={}, players=0, seat=-1, seats=[])
