"""What a bot is, before it runs: a name, a command line and its limits (no processes here),
and the one set of rules a bot's definition keeps, wherever it is written (a tournament file's
``[[bots]]``, a bot folder's ``bot.toml``; SPEC.md 10.1). Each rule takes a field's value and
returns it checked, or raises :class:`BotFieldError` saying what was expected: the reader of
the file names the file and the field."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

SANDBOXES = (None, "bwrap", "none")  # None: sealed as the machine allows (SPEC.md section 7)
SANDBOX_EXPECTED = '"bwrap" or "none" (or leave it out: sealed as the machine allows)'
# No "+": it separates a submitted bot's version from its content hash (name@version+hash).
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}")
NAME_EXPECTED = "1-40 letters, digits or _ . - (starting with a letter or digit)"
ENV_NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ENV_NAME_EXPECTED = "a variable name of letters, digits and _ (not starting with a digit)"
# Limits the kernel can hold (bytes fit in 63 bits) and no bot needs more of: 1 TiB, 1 year.
LIMIT_MAXIMA = {
    "memory_mb": 1 << 20,
    "file_mb": 1 << 20,
    "cpu_seconds": 366 * 24 * 3600,
    "max_processes": 1 << 22,  # (the kernel's own bound on pid numbers)
}
COMMAND_EXPECTED = (
    'a command: a string like "./bot --fast" or a list of strings like ["./bot", "--fast"]'
)


class BotFieldError(ValueError):
    """A field of a bot's definition that breaks its rule: ``found`` (the value, or with
    ``raw`` a description of it) and what was ``expected``."""

    def __init__(self, found: object, expected: str, *, raw: bool = False) -> None:
        super().__init__(expected)
        self.found, self.expected, self.raw = found, expected, raw


def check_name(value: object) -> str:
    if isinstance(value, str) and NAME_PATTERN.fullmatch(value):
        return value
    raise BotFieldError(value, NAME_EXPECTED)


def check_limit(field: str, value: object) -> int:
    """One of the resource limits (``LIMIT_MAXIMA``' fields): an integer 1 .. its maximum."""
    most = LIMIT_MAXIMA[field]
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= most:
        return value
    raise BotFieldError(value, f"an integer >= 1 and <= {most}")


def check_env_name(name: str) -> str:
    if ENV_NAME_PATTERN.fullmatch(name):
        return name
    raise BotFieldError(f"the name {name!r}", ENV_NAME_EXPECTED, raw=True)


def check_env_value(value: object) -> str:
    if isinstance(value, str) and "\0" not in value:
        return value
    raise BotFieldError(value, "a string without NUL")


def check_command(value: object) -> tuple[str, ...]:
    """A command as argv: a list of strings, or a string split shell-style (no shell runs it);
    non-empty words without NUL."""
    if isinstance(value, str):
        try:
            argv = shlex.split(value)
        except ValueError as error:
            raise BotFieldError(value, f"a command line that splits into words ({error})") from None
    elif isinstance(value, list) and all(isinstance(word, str) for word in value):
        argv = list(value)
    else:
        raise BotFieldError(value, COMMAND_EXPECTED)
    if not argv or not all(argv) or any("\0" in word for word in argv):
        raise BotFieldError(value, COMMAND_EXPECTED + " (non-empty words, no NUL characters)")
    return tuple(argv)


def check_sandbox(value: object) -> str | None:
    if value is None or value in SANDBOXES:
        return value
    raise BotFieldError(value, SANDBOX_EXPECTED)


def check_user(value: object) -> str:
    if isinstance(value, str) and value.strip():
        return value
    raise BotFieldError(value, 'a user name or number, "@own" or "@arena"')


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
        # (Only what the code needs: a definition in a file keeps the rules above, and a
        # limit the kernel refuses is the bot's startup error.)
        for field_name in LIMIT_MAXIMA:
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
            raise ValueError(f"bot {self.name!r}: sandbox {self.sandbox!r}: {SANDBOX_EXPECTED}")
