"""One running bot program: its own process group, resource limits, bounded I/O."""

from __future__ import annotations

from pathlib import Path

from arena.bots import BotSpec
from arena.clock import TimeControl


class BotStartupError(Exception):
    """A bot could not be started or did not say ready in time (the message names the bot)."""


class BotProcess:
    """One running bot program (plays many matches in sequence)."""

    spec: BotSpec
    name: str
    version: str
    alive: bool

    @classmethod
    async def start(cls, spec: BotSpec, *, time_control: TimeControl, log_dir: Path) -> "BotProcess":
        raise NotImplementedError("skeleton: being implemented on branch referee")

    async def close(self) -> None:
        raise NotImplementedError("skeleton: being implemented on branch referee")
