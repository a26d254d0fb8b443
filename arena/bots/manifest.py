"""A bot folder: its manifest (``bot.toml``) and the content hash naming each submitted version.

A bot is a folder holding a ``bot.toml``::

    name = "random"                 # letters, digits, '.', '_', '-'; the bot's name in standings
    author = "Ann Example"
    version = "1.0.0"               # the author's own label (letters, digits, '.', '_', '-')
    run = ["python3", "bot.py"]     # or a string, split like a shell would: "python3 bot.py"
    build = "make"                  # optional; no shell runs it: ["sh", "-c", "a && b"] if needed
    build_timeout_s = 120           # optional, default 300, at most 3600

    [limits]                        # optional; the arena's defaults apply to whatever is left out
    memory_mb = 512
    cpu_seconds = 60
    file_mb = 16

    [env]                           # optional extra environment, for the build and for the bot
    MY_SETTING = "fast"

``run`` and ``build`` start in the bot folder; a first word with a ``/`` in it (``./bot``,
``bin/bot``) is a path inside the folder, a bare word (``python3``, ``node``) is looked up on PATH.

:func:`load_manifest` reports every problem at once, one line each, naming the file and the field.

The **content hash** (:func:`content_hash`) names one version of the submitted sources: SHA-256
over the folder's entries in sorted order of their relative paths (as bytes), each entry written
as ``d <path>\\0`` for a directory, ``l <path>\\0<target>\\0`` for a symlink, and
``f <path>\\0<size>\\0<bytes>`` for a file (``x`` instead of ``f`` when it is executable); the
first 12 hex digits are the hash.
VCS folders, caches and the arena's own ``.arena`` folder (:data:`EXCLUDED_DIRS`,
:data:`EXCLUDED_FILES`) are neither hashed nor copied; everything else is, so build outputs left
in the folder are part of the submission. ``arena submit`` hashes its staged copy *before* the
build, so the hash is a function of what the author sent.

Errors::

    BotFolderError      a folder that cannot be submitted (a symlink leaving it, a device file)
    └── ManifestError   a missing, unreadable or invalid bot.toml; ``problems``: one line each
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import shutil
import stat
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from arena.referee.bot_spec import (
    COMMAND_EXPECTED,
    NAME_EXPECTED,
    BotFieldError,
    BotSpec,
    check_command,
    check_env_name,
    check_env_value,
    check_limit,
    check_name,
)

T = TypeVar("T")

MANIFEST_FILE = "bot.toml"
DEFAULT_BUILD_TIMEOUT_S = 300
MAX_BUILD_TIMEOUT_S = 3600
HASH_LENGTH = 12
# Never part of a submission: version control, caches, and the arena's own bookkeeping folder.
EXCLUDED_DIRS = frozenset(
    {".git", ".hg", ".svn", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".arena"}
)
EXCLUDED_FILES = frozenset({".DS_Store"})
EXCLUDED_SUFFIXES = (".pyc", ".pyo")

VERSION_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}")
VERSION_EXPECTED = '1-32 letters, digits or _ . - (starting with a letter or digit), like "1.0.0"'
AUTHOR_PATTERN = re.compile(r"(?s).{1,200}")
TOP_LEVEL_FIELDS = ("name", "author", "version", "run", "build", "build_timeout_s", "limits", "env")
LIMIT_FIELDS = ("memory_mb", "cpu_seconds", "file_mb")


class BotFolderError(Exception):
    """A bot folder that cannot be submitted; the message names the folder or file."""


class ManifestError(BotFolderError):
    """An invalid bot.toml at ``path``; ``problems``: one line each, naming the file and field."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        self.path = path
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class Manifest:
    """A validated ``bot.toml``; ``folder`` is the bot folder it was read from."""

    folder: Path
    name: str
    author: str
    version: str
    run: tuple[str, ...]
    build: tuple[str, ...] | None = None
    build_timeout_s: float = DEFAULT_BUILD_TIMEOUT_S
    memory_mb: int | None = None
    cpu_seconds: int | None = None
    file_mb: int | None = None
    env: tuple[tuple[str, str], ...] = ()

    @property
    def path(self) -> Path:
        return self.folder / MANIFEST_FILE

    def run_argv(self) -> tuple[str, ...]:
        """``run`` with a relative program path made absolute inside the folder."""
        return _absolute_program(self.run, self.folder)

    def build_argv(self) -> tuple[str, ...] | None:
        return None if self.build is None else _absolute_program(self.build, self.folder)

    def bot_spec(self, content_hash: str) -> BotSpec:
        """The BotSpec that runs this bot from its folder; its version is ``<version>+<hash>``."""
        return BotSpec(
            name=self.name,
            argv=self.run_argv(),
            cwd=str(self.folder),
            env=self.env,
            version=f"{self.version}+{content_hash}",
            memory_mb=self.memory_mb,
            cpu_seconds=self.cpu_seconds,
            file_mb=self.file_mb,
        )


def bot_label(spec: BotSpec) -> str:
    """How standings and results name a bot: ``name@version`` (just the name without a version)."""
    return f"{spec.name}@{spec.version}" if spec.version else spec.name


def load_manifest(folder: Path | str) -> Manifest:
    """Read and validate ``folder/bot.toml``; ManifestError lists every problem found."""
    folder = Path(folder).absolute()
    path = folder / MANIFEST_FILE
    if not folder.is_dir():
        raise ManifestError(
            path, [f"{folder}: not a folder (expected a bot folder holding {MANIFEST_FILE})"]
        )
    try:
        with path.open("rb") as file:
            data = tomllib.load(file)
    except FileNotFoundError:
        raise ManifestError(
            path, [f"{path}: missing (a bot folder needs a {MANIFEST_FILE} manifest)"]
        ) from None
    except tomllib.TOMLDecodeError as error:
        raise ManifestError(path, [f"{path}: not valid TOML: {error}"]) from None
    except (OSError, UnicodeDecodeError) as error:
        raise ManifestError(path, [f"{path}: cannot be read: {error}"]) from None
    return parse_manifest(data, folder=folder, where=path)


def parse_manifest(data: dict[str, Any], *, folder: Path, where: Path) -> Manifest:
    """Validate the parsed TOML ``data``; ``where`` names the file in every message."""
    problems: list[str] = []

    def problem(field: str, found: Any, expected: str, *, raw: bool = False) -> None:
        shown = found if raw else _describe(found)
        problems.append(f"{where}: {field}: found {shown}; expected {expected}")

    for key in data:
        if key not in TOP_LEVEL_FIELDS:
            close = difflib.get_close_matches(key, TOP_LEVEL_FIELDS, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            problem(
                key, "an unknown field", "one of " + ", ".join(TOP_LEVEL_FIELDS) + hint, raw=True
            )

    def required_string(field: str, pattern: re.Pattern[str] | None, expected: str) -> str:
        value = data.get(field)
        if field not in data:
            problem(field, "nothing", expected, raw=True)
        elif (
            not isinstance(value, str)
            or not value.strip()
            or (pattern and not pattern.fullmatch(value))
        ):
            problem(field, value, expected)
        else:
            return value
        return ""

    def checked(field: str, check: Callable[[Any], T], value: Any, fallback: T) -> T:
        """One of a bot definition's rules (arena.referee.bot_spec), its mistake kept."""
        try:
            return check(value)
        except BotFieldError as error:
            problem(field, error.found, error.expected, raw=error.raw)
            return fallback

    name = checked("name", check_name, data.get("name"), "") if "name" in data else ""
    if "name" not in data:
        problem("name", "nothing", NAME_EXPECTED, raw=True)
    author = required_string(
        "author", AUTHOR_PATTERN, "a non-empty string of at most 200 characters"
    )
    version = required_string("version", VERSION_PATTERN, VERSION_EXPECTED)

    run: tuple[str, ...] = ()
    if "run" not in data:
        problem("run", "nothing", COMMAND_EXPECTED, raw=True)
    else:
        run = _command("run", data["run"], problem)

    build: tuple[str, ...] | None = None
    if "build" in data:
        build = _command("build", data["build"], problem) or None

    build_timeout_s: float = DEFAULT_BUILD_TIMEOUT_S
    if "build_timeout_s" in data:
        value = data["build_timeout_s"]
        if "build" not in data:
            problem(
                "build_timeout_s",
                "a time limit but no build command",
                "a build command with it (or leave build_timeout_s out)",
                raw=True,
            )
        elif (
            not isinstance(value, (int, float))
            or isinstance(value, bool)
            or not 0 < value <= MAX_BUILD_TIMEOUT_S
        ):
            problem(
                "build_timeout_s", value, f"a number of seconds > 0 and <= {MAX_BUILD_TIMEOUT_S}"
            )
        else:
            build_timeout_s = value

    limits: dict[str, int | None] = dict.fromkeys(LIMIT_FIELDS)
    if "limits" in data:
        table = data["limits"]
        if not isinstance(table, dict):
            problem("limits", table, f"a [limits] table with {', '.join(LIMIT_FIELDS)}")
        else:
            for key, value in table.items():
                if key not in LIMIT_FIELDS:
                    problem(
                        f"limits.{key}",
                        "an unknown limit",
                        "one of " + ", ".join(LIMIT_FIELDS),
                        raw=True,
                    )
                else:
                    limits[key] = checked(f"limits.{key}", partial(check_limit, key), value, None)

    env: list[tuple[str, str]] = []
    if "env" in data:
        table = data["env"]
        if not isinstance(table, dict):
            problem("env", table, 'an [env] table of NAME = "value" strings')
        else:
            for key, value in table.items():
                env_name = checked(f"env.{key}", check_env_name, key, "")
                text = checked(f"env.{key}", check_env_value, value, None)
                if env_name and text is not None:
                    env.append((env_name, text))

    if problems:
        raise ManifestError(where, problems)
    return Manifest(
        folder=folder,
        name=name,
        author=author,
        version=version,
        run=run,
        build=build,
        build_timeout_s=build_timeout_s,
        env=tuple(env),
        **limits,
    )


def _command(field: str, value: Any, problem: Any) -> tuple[str, ...]:
    """A command as argv (the rule of arena.referee.bot_spec.check_command) whose program, a
    relative path, stays inside the bot folder."""
    try:
        argv = check_command(value)
    except BotFieldError as error:
        problem(field, error.found, error.expected, raw=error.raw)
        return ()
    program = argv[0]
    if "/" in program and not os.path.isabs(program) and _escapes(program):
        problem(
            field,
            program,
            "a program inside the bot folder (a relative path may not leave it with '..')",
        )
        return ()
    return tuple(argv)


def _escapes(relative: str) -> bool:
    normal = os.path.normpath(relative)
    return normal == ".." or normal.startswith("../")


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _absolute_program(argv: tuple[str, ...], folder: Path) -> tuple[str, ...]:
    program = argv[0]
    if "/" in program and not os.path.isabs(program):
        program = os.path.normpath(os.path.join(folder, program))
    return (program, *argv[1:])


def _describe(value: Any) -> str:
    kind = {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a table",
    }.get(type(value), type(value).__name__)
    text = "{...}" if isinstance(value, dict) else json.dumps(value, default=str)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({kind})"


# --- the folder's contents: what is hashed is exactly what is copied ------------------------------


@dataclass(frozen=True)
class Entry:
    """One thing in a bot folder: ``kind`` is "dir", "file" or "link"; ``path``: relative, POSIX."""

    path: str
    kind: str
    executable: bool = False
    target: str = ""


def folder_entries(folder: Path | str) -> list[Entry]:
    """Every entry of the folder that belongs to a submission, sorted by path (as bytes).

    Symlinks are kept as links (never followed) and must point inside the folder; anything that is
    not a file, folder or symlink is refused with a BotFolderError.
    """
    folder = Path(folder)
    entries = list(_walk(folder, "", os.path.realpath(folder)))
    entries.sort(key=lambda entry: os.fsencode(entry.path))
    return entries


def _walk(folder: Path, prefix: str, root: str) -> Iterator[Entry]:
    try:
        children = list(os.scandir(folder / prefix if prefix else folder))
    except OSError as error:
        raise BotFolderError(f"{folder / prefix}: cannot be read: {error.strerror}") from None
    for child in children:
        relative = f"{prefix}{child.name}"
        mode = child.stat(follow_symlinks=False).st_mode
        if stat.S_ISLNK(mode):
            target = os.readlink(child.path)
            # Resolved for real: a lexical check is fooled by links through links ("d -> .").
            if os.path.isabs(target) or not _inside(os.path.realpath(child.path), root):
                raise BotFolderError(
                    f"{folder / relative}: symlink to {target!r} points outside "
                    f"the bot folder (expected links to files inside it)"
                )
            yield Entry(relative, "link", target=target)
        elif stat.S_ISDIR(mode):
            if child.name in EXCLUDED_DIRS:
                continue
            yield Entry(relative, "dir")
            yield from _walk(folder, relative + "/", root)
        elif stat.S_ISREG(mode):
            if child.name in EXCLUDED_FILES or child.name.endswith(EXCLUDED_SUFFIXES):
                continue
            yield Entry(relative, "file", executable=bool(mode & stat.S_IXUSR))
        else:
            raise BotFolderError(
                f"{folder / relative}: not a file, folder or symlink "
                f"(a bot folder may hold only those)"
            )


def content_hash(folder: Path | str) -> str:
    """The documented SHA-256 content hash of the folder's submission entries (12 hex digits)."""
    folder = Path(folder)
    digest = hashlib.sha256()
    for entry in folder_entries(folder):
        path = os.fsencode(entry.path)
        if entry.kind == "dir":
            digest.update(b"d " + path + b"\0")
        elif entry.kind == "link":
            digest.update(b"l " + path + b"\0" + os.fsencode(entry.target) + b"\0")
        else:
            try:
                with open(folder / entry.path, "rb") as file:
                    size = os.fstat(file.fileno()).st_size
                    digest.update(
                        (b"x " if entry.executable else b"f ")
                        + path
                        + b"\0"
                        + str(size).encode()
                        + b"\0"
                    )
                    while chunk := file.read(1 << 20):
                        digest.update(chunk)
            except OSError as error:
                raise BotFolderError(
                    f"{folder / entry.path}: cannot be read: {error.strerror}"
                ) from None
    return digest.hexdigest()[:HASH_LENGTH]


def copy_folder(source: Path | str, destination: Path | str) -> None:
    """Copy the submission entries of ``source`` into the existing empty folder ``destination``.

    File modes and modification times are kept (``make`` decides what to rebuild from them).
    """
    source, destination = Path(source), Path(destination)
    for entry in folder_entries(source):
        target = destination / entry.path
        try:
            if entry.kind == "dir":
                target.mkdir()
            elif entry.kind == "link":
                os.symlink(entry.target, target)
            else:
                shutil.copy2(source / entry.path, target, follow_symlinks=False)
        except OSError as error:
            raise BotFolderError(
                f"{source / entry.path}: cannot be copied: {error.strerror}"
            ) from None
