"""What a bot is, before it runs: a name, a command line and its limits (no processes here)."""

from __future__ import annotations

from dataclasses import dataclass

SANDBOXES = (None, "bwrap", "none")  # None: sealed as the machine allows (SPEC.md section 7)


@dataclass(frozen=True)
class BotSpec:
    """One bot program. ``argv`` is run in ``cwd`` with a minimal environment plus ``env``."""

    name: str  # unique in a tournament, shown in standings
    argv: tuple[str, ...]
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = ()  # extra environment for the bot
    version: str = ""  # e.g. the content hash from `arena submit`
    memory_mb: int | None = None  # resource limits; None = the arena's defaults
    cpu_seconds: int | None = None
    file_mb: int | None = None
    sandbox: str | None = None  # None (sealed by default), "bwrap" or "none" (not sealed)
    # The user it runs as (a name or a number); None: the arena's default (SPEC.md section 7)
    user: str | None = None
    max_processes: int | None = None  # processes and threads at once; None = the default
    # What it must not see (the arena's files, other bots' folders): set by whoever runs it,
    # never by a bot's definition, and no part of what the bot is.
    hidden: tuple[str, ...] = ()
    # The name it and the other bots are sent (hello, match_start), when not ``name``: arena
    # compare sends NEW and OLD under one name, so the field cannot tell its copies apart
    sent_name: str | None = None

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("a bot needs a name")
        for field_name in ("memory_mb", "cpu_seconds", "file_mb", "max_processes"):
            value = getattr(self, field_name)
            if value is not None and value <= 0:
                raise ValueError(
                    f"bot {self.name!r}: {field_name} = {value}: expected a positive number"
                )
        if not self.argv:
            raise ValueError(f"bot {self.name!r}: argv is empty (expected a program to run)")
        if self.user is not None and not self.user.strip():
            raise ValueError(f"bot {self.name!r}: user is empty (expected a user name or number)")
        if self.sandbox not in SANDBOXES:
            raise ValueError(
                f"bot {self.name!r}: sandbox {self.sandbox!r}: expected 'bwrap' or 'none' "
                "(or leave it out)"
            )
