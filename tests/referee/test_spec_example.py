"""SPEC.md section 4.3's example conversation is exactly what the referee sends and accepts.

Each `>`/`<` line of the example must occur, in order, in the conversation of a real match played
with the example's bot (illegal on its second answer, by index on its third).
"""

from __future__ import annotations

import json
from pathlib import Path

import trio

from arena.games import find_game
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.testing import FakeBot, connect_fake

SPEC = Path(__file__).resolve().parents[2] / "SPEC.md"


class ExampleBot(FakeBot):
    """The bot of the example: first legal by value, except answers 2 (illegal) and 3 (index)."""

    def __init__(self) -> None:
        super().__init__("example")
        self.asked = 0
        self.conversation: list[str] = []

    async def handle(self, message):
        self.conversation.append("> " + self.raw[-1].decode())
        await super().handle(message)

    async def on_request(self, request):
        self.asked += 1
        if self.asked == 2:
            await self.send({"type": "action", "id": request["id"], "action": "bid:9"})
        elif self.asked == 3:
            await self.send({"type": "action", "id": request["id"], "index": 0})
        else:
            await super().on_request(request)

    async def send(self, message):
        if isinstance(message, dict):
            self.conversation.append("< " + json.dumps(message, separators=(",", ":")))
        await super().send(message)


async def example_conversation() -> list[str]:
    bot = ExampleBot()
    async with trio.open_nursery() as nursery:
        procs = [await connect_fake(nursery, b) for b in (bot, FakeBot("b"), FakeBot("c"))]
        await run_match(
            find_game("aon"), procs, seed=1, match_id="demo-1", time_control=TimeControl()
        )
        for proc in procs:
            await proc.close()
    return bot.conversation


def spec_example_lines() -> list[str]:
    text = SPEC.read_text()
    section = text[text.index("### 4.3") : text.index("## 5. ")]
    return [line[4:] for line in section.splitlines() if line.startswith(("    > ", "    < "))]


async def test_spec_example_is_a_real_conversation(autojump_clock):
    conversation = await example_conversation()
    shown = spec_example_lines()
    assert len(shown) > 20
    position = 0
    for line in shown:
        assert line in conversation[position:], f"SPEC.md 4.3: not sent (in this order): {line}"
        position = conversation.index(line, position) + 1
    assert conversation[: len(shown) - 4] == shown[:-4]  # the beginning is shown unbroken
    assert conversation[-4:] == shown[-4:]  # and so is the end
