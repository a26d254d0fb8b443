"""In-memory fake bots for tests: the referee without processes, under trio's autojump clock.

    async with trio.open_nursery() as nursery:
        bot = await connect_fake(nursery, FakeBot("alice"))
        result = await run_match(game, [bot, ...], seed=1, match_id="m")

A :class:`FakeBot` is a task that speaks the protocol over a :class:`FakeTransport` (the same
seam a real bot process uses). Subclass it and override :meth:`FakeBot.on_request` (or
:meth:`FakeBot.handle`) to misbehave in one particular way. Every message it receives is kept in
``received`` (parsed) and ``raw`` (the exact bytes of each line).
"""

from __future__ import annotations

import json
import math
from typing import Any

import trio

from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.process import BotProcess


class FakeTransport:
    """Both pipes of a bot, in memory. ``exit_status`` is set when the fake bot ends."""

    def __init__(self) -> None:
        self.to_bot_send, self.to_bot_receive = trio.open_memory_channel[bytes](math.inf)
        self.from_bot_send, self.from_bot_receive = trio.open_memory_channel[bytes](math.inf)
        self.status: str | None = None
        self.input_open = True
        self._leftover = b""
        self.written = bytearray()  # every byte the referee wrote, read by the bot or not
        self.bot_scope = trio.CancelScope()

    # the referee's side
    async def send_all(self, data: bytes) -> None:
        if self.status is not None or not self.input_open:
            raise trio.BrokenResourceError("the fake bot's input is closed")
        self.written += data
        await self.to_bot_send.send(data)

    def written_messages(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The messages the referee wrote (whether or not the bot got round to reading them)."""
        messages = [json.loads(line) for line in bytes(self.written).splitlines()]
        return [m for m in messages if kind is None or m["type"] == kind]

    async def receive_some(self, max_bytes: int) -> bytes:
        if not self._leftover:
            try:
                self._leftover = await self.from_bot_receive.receive()
            except trio.EndOfChannel:
                return b""
        chunk, self._leftover = self._leftover[:max_bytes], self._leftover[max_bytes:]
        return chunk

    async def terminate(self, grace_s: float) -> None:
        self.input_open = False
        self.to_bot_send.close()
        with trio.move_on_after(grace_s):
            while self.status is None:
                await trio.sleep(0.01)
        if self.status is None:
            self.status = "killed by SIGKILL"
        self.bot_scope.cancel()

    def exit_status(self) -> str | None:
        return self.status


class FakeBot:
    """A well-behaved bot: ready at hello, the first legal action for every request (by value)."""

    def __init__(self, name: str = "fake", version: str = "1") -> None:
        self.name = name
        self.version = version
        self.received: list[dict[str, Any]] = []
        self.raw: list[bytes] = []
        self.transport: FakeTransport | None = None

    async def run(self, transport: FakeTransport) -> None:
        self.transport = transport
        buffer = b""
        with transport.bot_scope:
            try:
                async for chunk in transport.to_bot_receive:
                    buffer += chunk
                    while b"\n" in buffer:
                        line, buffer = buffer.split(b"\n", 1)
                        self.raw.append(line)
                        message = json.loads(line)
                        self.received.append(message)
                        await self.handle(message)
                        if transport.status is not None:
                            return
                if transport.status is None:
                    self.exit(0)
            except trio.ClosedResourceError:
                pass

    async def handle(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "hello":
            await self.send({"type": "ready", "name": self.name, "version": self.version})
        elif kind == "request":
            await self.on_request(message)
        elif kind == "bye":
            self.exit(0)

    async def on_request(self, request: dict[str, Any]) -> None:
        await self.send({"type": "action", "id": request["id"], "action": request["legal"][0]})

    async def send(self, message: dict[str, Any] | bytes) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        assert self.transport is not None
        try:
            await self.transport.from_bot_send.send(data)
        except trio.ClosedResourceError:
            pass

    def exit(self, code: int = 0) -> None:
        """End the bot: its output closes and its exit status is set."""
        assert self.transport is not None
        self.transport.status = f"exited with status {code}"
        self.transport.input_open = False
        self.transport.from_bot_send.close()

    def messages(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m["type"] == kind]


async def connect_fake(
    nursery: trio.Nursery,
    bot: FakeBot,
    *,
    time_control: TimeControl = TimeControl(),
    spec: BotSpec | None = None,
    max_line_bytes: int = 1 << 20,
    transport: FakeTransport | None = None,
) -> BotProcess:
    """Start ``bot`` as a task in ``nursery`` and return the BotProcess that talks to it
    (through ``transport``: a fresh FakeTransport unless given, e.g. one that misbehaves)."""
    transport = transport or FakeTransport()
    nursery.start_soon(bot.run, transport)
    spec = spec or BotSpec(bot.name, ("fake",))
    return await BotProcess.connect(
        spec, transport, time_control=time_control, max_line_bytes=max_line_bytes
    )
