"""What starting a bot decides before its process exists: its resource limits, how it is sealed,
and what exec would refuse (arena/referee/process.py starts it with these; SPEC.md section 7)."""

from __future__ import annotations

import os
import re
import resource
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import trio

from arena.referee import confine
from arena.referee.bot_spec import BotSpec
from arena.referee.confine import SEAL_OFF, MachineSeal, SealPlan
from arena.referee.spawn import BotUser

DEFAULT_MEMORY_MB = 4096
DEFAULT_CPU_SECONDS = 3600
DEFAULT_FILE_MB = 64


class BotStartupError(Exception):
    """A bot could not be started or did not say ready in time (the message names the bot)."""

    def __init__(self, bot: str, reason: str) -> None:
        self.bot = bot
        self.reason = reason
        self.stderr_tail = ""  # the last lines of its standard error, when it ran at all
        super().__init__(f"bot {bot}: {reason}")


def spawn_problem(argv: Sequence[str], env: Mapping[str, str]) -> str | None:
    """What exec would refuse in a command line or environment, in one line; None if fine."""
    for arg in argv:
        if "\0" in arg:
            return f"its command line holds a NUL character: {arg!r}"
    for key, value in env.items():
        if not key or "=" in key or "\0" in key or "\0" in value:
            return f"environment variable {key!r}: a name without = or NUL, a value without NUL"
    return None


def limits_setter(memory_mb: int, cpu_seconds: int, file_mb: int, processes: int | None = None):
    """The preexec_fn that applies the limits in the child, between fork and exec (with
    ``processes``, RLIMIT_NPROC: for a bot with a user id of its own)."""

    def limit(kind: int, soft: int, hard: int) -> None:
        # Never above the organiser's own hard limit (ulimit): raising it is not allowed.
        _, ceiling = resource.getrlimit(kind)
        if ceiling != resource.RLIM_INFINITY:
            soft, hard = min(soft, ceiling), min(hard, ceiling)
        resource.setrlimit(kind, (soft, hard))

    def apply() -> None:
        address_space = memory_mb * 1024 * 1024
        limit(resource.RLIMIT_AS, address_space, address_space)
        # The soft CPU limit sends SIGXCPU; the hard one, a little later, SIGKILL.
        limit(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 5)
        size = file_mb * 1024 * 1024
        limit(resource.RLIMIT_FSIZE, size, size)
        limit(resource.RLIMIT_CORE, 0, 0)
        if processes is not None:
            limit(resource.RLIMIT_NPROC, processes, processes)

    return apply


async def seal_method(spec: BotSpec) -> str | None:
    """How to seal this bot: "namespaces", "bwrap", or None (not sealed: ``sandbox = "none"``,
    or the machine allows neither, which the arena says once at start). BotStartupError when
    ``sandbox = "bwrap"`` cannot run here, or the bot's folder is one its seal would hide."""
    if spec.sandbox == SEAL_OFF:
        return None
    machine = await _machine_seal()
    if spec.sandbox == "bwrap":
        problem = await check_bwrap()
        if problem:
            raise BotStartupError(spec.name, problem)
        how: str | None = "bwrap"
    else:
        how = machine.method
    folder = os.path.abspath(spec.cwd) if spec.cwd else None
    if how is not None and folder in ("/", *confine.PRIVATE_DIRS, *confine.EMPTY_DIRS):
        where = "sandbox 'bwrap'" if spec.sandbox == "bwrap" else "sealed"
        raise BotStartupError(
            spec.name,
            f"{where}: the bot's folder {spec.cwd!r} must not be /, /tmp, /var/tmp, /dev/shm "
            "or /run (its own private ones would hide it, or it would show the machine's): "
            'give it a folder of its own, or sandbox = "none" (SPEC.md section 7)',
        )
    return how


async def check_bwrap() -> str | None:
    """None when ``sandbox = "bwrap"`` can run here, else a one-line reason (found once)."""
    machine = await _machine_seal()
    return None if machine.bwrap_problem is None else f"sandbox 'bwrap': {machine.bwrap_problem}"


async def _machine_seal() -> MachineSeal:
    """How bots are sealed here (arena.referee.confine), found once, in a thread (it starts a
    process or two)."""
    known = confine.known_machine()
    return known if known is not None else await trio.to_thread.run_sync(confine.machine_seal)


def sealed_command(
    spec: BotSpec,
    argv: list[str],
    folder: str | None,
    user: BotUser | None,
    how: str,
    log_dir: Path,
    file_mb: int,
) -> tuple[list[str], Callable[[], None] | None]:
    """The bot's command line and what its child runs before exec, sealed ``how`` ("namespaces":
    the child makes them; "bwrap": the command line runs it in bubblewrap). BotStartupError for
    a program its seal would hide."""
    plan = SealPlan(
        workdir=folder or "/tmp",  # without a folder: its private /tmp
        own_folder=folder,
        program_folders=tuple(confine.program_folders(argv, folder or "/")),
        hidden=confine.hidden_from(
            [folder] if folder else [], (), (*spec.hidden, os.path.abspath(log_dir))
        ),
        file_mb=file_mb,
        owner=None if user is None else (user.uid, user.gid),
        drop_capabilities=how == "namespaces" and user is None and os.geteuid() == 0,
    )
    program = os.path.normpath(os.path.join(folder or "/", argv[0]))
    covering = [path for path in plan.hidden if confine.under(program, path)]
    if "/" in argv[0] and covering and not (folder and confine.under(program, folder)):
        raise BotStartupError(
            spec.name,
            f"sealed: its program {program} is in {covering[0]}, which its seal hides (the "
            "arena's files and other bots' folders): keep it in the bot's own folder "
            "(SPEC.md section 7)",
        )
    if how == "namespaces":
        return argv, confine.namespaces_child(plan)
    return confine.bwrap_argv(plan, argv, strict=spec.sandbox == "bwrap"), None


def safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:60] or "bot"
