"""A person at the table: a seat the referee plays like any bot's (SPEC.md 11).

The person's seat is a :class:`~arena.referee.process.BotProcess` over a :class:`PersonTransport`:
the referee writes it the same JSON lines it writes a bot (hello, match_start, the events its
seat may see, requests with the seat's view and legal actions, faults, match_end) and reads an
``action`` line back, under the same checks and clock. Nothing else reaches the person: a
:class:`Person` (the terminal, a web page) is shown those messages and answers requests, so it
cannot see more than a bot in that seat would. The one difference is when: the transport is
``eager``, so the referee writes it each event as it happens rather than with its next request.

    async with trio.open_nursery() as nursery:
        seat = await seat_person(nursery, MyPerson(), "human", control)
        await run_match(game, [seat, bot1, bot2, bot3], ...)
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

import trio

from arena.games import GameSpec
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.match import MatchStop, run_match
from arena.referee.process import BotProcess
from arena.referee.results import MatchResult

PERSON_ARGV = ("(a person)",)  # what the seat's BotSpec names as its program


class Person(Protocol):
    """Someone who plays a seat: shown each message its seat receives, asked for each action."""

    async def show(self, message: dict[str, Any]) -> None:
        """A message to the seat (match_start, event, fault, request, match_end), in order."""

    async def choose(self, request: dict[str, Any]) -> str:
        """The action for ``request`` (shown just before): one of ``request["legal"]``."""


class PersonTransport:
    """Both pipes of the person's seat, in memory. ``eager``: the referee writes it each event
    as it happens (Match.push_events); ``write_now`` takes any write at once."""

    eager = True

    def __init__(self) -> None:
        self.to_person, self.person_reads = trio.open_memory_channel[bytes](math.inf)
        self.person_writes, self.from_person = trio.open_memory_channel[bytes](math.inf)
        self.status: str | None = None
        self._leftover = b""

    def write_now(self, data: bytes) -> int:
        if self.status is not None:
            raise trio.BrokenResourceError("the person has left the table")
        self.to_person.send_nowait(data)
        return len(data)

    async def send_all(self, data: bytes) -> None:
        self.write_now(data)
        await trio.lowlevel.checkpoint()

    async def receive_some(self, max_bytes: int) -> bytes:
        if not self._leftover:
            try:
                self._leftover = await self.from_person.receive()
            except (trio.EndOfChannel, trio.ClosedResourceError):
                return b""
        chunk, self._leftover = self._leftover[:max_bytes], self._leftover[max_bytes:]
        return chunk

    async def terminate(self, grace_s: float) -> None:
        self.leave("left the table")

    def exit_status(self) -> str | None:
        return self.status

    def leave(self, status: str) -> None:
        if self.status is None:
            self.status = status
        self.to_person.close()
        self.person_writes.close()


async def drive(person: Person, transport: PersonTransport, name: str) -> None:
    """Read what the referee writes to the seat, show it to the person, answer each request."""
    buffer = b""
    try:
        async for chunk in transport.person_reads:
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                message = json.loads(line)
                kind = message.get("type")
                if kind == "hello":
                    await _send(transport, {"type": "ready", "name": name, "version": "person"})
                elif kind == "bye":
                    return
                else:
                    await person.show(message)
                    if kind == "request":
                        # The person's own limit: past it the referee's autopilot moves (a
                        # timeout fault, SPEC 6), and the question is withdrawn.
                        with trio.move_on_after(message["time_left_ms"] / 1000):
                            action = await person.choose(message)
                            await _send(
                                transport, {"type": "action", "id": message["id"], "action": action}
                            )
    except trio.ClosedResourceError:
        pass
    finally:
        transport.leave("left the table")


async def _send(transport: PersonTransport, message: dict[str, Any]) -> None:
    try:
        await transport.person_writes.send(json.dumps(message).encode() + b"\n")
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass


async def seat_person(
    nursery: trio.Nursery, person: Person, name: str, control: TimeControl
) -> BotProcess:
    """The person's seat, ready to play: its driver runs in ``nursery`` until the seat closes."""
    transport = PersonTransport()
    nursery.start_soon(drive, person, transport, name)
    return await BotProcess.connect(BotSpec(name, PERSON_ARGV), transport, time_control=control)


PERSON_NO_LIMIT_MS = 86_400_000  # a day: the person's limit per decision when none is given


async def play_person_match(
    game: GameSpec,
    person: Person,
    *,
    name: str,
    seat: int,
    bots: list[BotSpec],
    seed: int,
    options: Mapping[str, Any],
    control: TimeControl,
    person_ms: int | None,
    record: Path | None,
    log_dir: Path,
    stop: MatchStop,
    nursery: trio.Nursery,
) -> MatchResult:
    """Start the bots (``bots`` in seat order, the person's seat left out), seat the person at
    ``seat`` and play one match; the bots are closed whatever happens. The person's limit per
    decision is ``person_ms`` (None: PERSON_NO_LIMIT_MS), the bots' ``control``. Raises
    BotStartupError, OptionError, or MatchStopped once ``stop`` is used."""
    own_ms = PERSON_NO_LIMIT_MS if person_ms is None else person_ms
    seats: list[BotProcess] = []
    try:
        for spec in bots:
            seats.append(await BotProcess.start(spec, time_control=control, log_dir=log_dir))
        person_seat = await seat_person(nursery, person, name, replace(control, decision_ms=own_ms))
        seats.insert(seat, person_seat)
        return await run_match(
            game,
            seats,
            seed=seed,
            options=options,
            match_id="match",  # (never the seed: bots are sent it, SPEC 3)
            time_control=control,
            record_path=record,
            seat_decision_ms={seat: own_ms},
            stop=stop,
        )
    finally:
        with trio.CancelScope(shield=True):
            for bot in seats:
                await bot.close()
