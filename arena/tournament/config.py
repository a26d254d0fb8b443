"""The tournament definition: a TOML file in tournaments/, or the quick form from the command line.

Every field is checked here, before anything runs, and every mistake is reported at once: a
:class:`ConfigError` with one line per mistake naming the file, the field, what was found and what
was expected, e.g.::

    tournaments/x.toml: bots[2].argv: found 7 (an integer); expected a list of strings

The format is specified in SPEC.md section 10 (keep the two in step).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any, NoReturn, TypeVar

from arena.bots.installed import BotsDirError, tournament_bots
from arena.bots.manifest import (
    EXCLUDED_DIRS,
    EXCLUDED_FILES,
    EXCLUDED_SUFFIXES,
    MANIFEST_FILE,
    BotFolderError,
    content_hash,
)
from arena.games import GAMES, GameError, GameSpec, find_game
from arena.referee.bot_spec import (
    LIMIT_MAXIMA,
    SANDBOX_EXPECTED,
    SANDBOXES,
    BotFieldError,
    BotSpec,
    check_command,
    check_env_name,
    check_env_value,
    check_limit,
    check_name,
    check_sandbox,
    check_user,
)
from arena.referee.bot_spec import NAME_EXPECTED as BOT_NAME_EXPECTED
from arena.referee.clock import TimeControl
from arena.referee.confine import arena_files
from arena.tournament.schedule import (
    DEFAULT_MAX_TABLES,
    SEATINGS,
    GamePlan,
    ScheduledMatch,
    match_key,
)

T = TypeVar("T")

DEFAULT_DEALS = 2
DEFAULT_MAX_FAULTS = 3
DEFAULT_MATCH_TIME_LIMIT_S = 600.0
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}$")
NAME_EXPECTED = "1-40 letters, digits or _ . + - (starting with a letter or digit)"
# Bounds that keep a schedule countable and quick to build: its length must fit a machine
# integer (deals x tables x rotations x games), and sampling tables keeps a count per pair of
# bots (bots^2 of them: 20,000 bots took 3.2 GB and minutes before the first line).
MAX_BOTS = 1024
MAX_DEALS = 10**12
MAX_TABLES = 10_000
MAX_GAMES = 100

TOP_FIELDS = (
    "name",
    "seed",
    "deals",
    "seating",
    "concurrency",
    "workers",
    "affinity",
    "cluster",
    "max_faults",
    "match_time_limit",
    "output",
    "results",
    "records",
    "time",
    "bots",
    "bots_dir",
    "games",
    "stop",
    "format",
    "gauntlet",
    "deals_from",
)
FORMATS = ("round-robin", "gauntlet")
MAX_DEAL_SET = 1_000_000  # seeds in a deal set (deals_from)
DEAL_SET_EXPECTED = (
    "a file of deal seeds (one integer 0 .. 2^64-1 a line; # starts a comment) or a list of "
    "such integers"
)
STOP_FIELDS = ("confidence", "min_deals", "max_deals")
BOT_FIELDS = (
    "name",
    "argv",
    "cmd",
    "cwd",
    "env",
    "version",
    "memory_mb",
    "cpu_seconds",
    "file_mb",
    "sandbox",
    "user",
    "max_processes",
    "files",
    "exclude",
)
GAME_FIELDS = ("game", "label", "players", "deals", "options", "max_tables")
CLUSTER_FIELDS = ("address", "matches_per_worker", "tls_ca_file", "tls_cert", "tls_key")
CLUSTER_TLS_FIELDS = ("tls_ca_file", "tls_cert", "tls_key")
CLUSTER_EXPECTED = (
    'a Dask scheduler\'s address such as "tls://HOST:8786", or "local:N" for a Dask cluster of '
    "N workers on this machine"
)
CLUSTER_ADDRESS = re.compile(r"^(?:[a-z][a-z0-9+]*://)?[^\s/:]+:\d{1,5}$")
LOCAL_CLUSTER = re.compile(r"^local:(\d{1,3})$")
TIME_FIELDS = ("decision_ms", "bank_ms", "increment_ms", "margin_ms", "startup_ms")


@dataclass(frozen=True)
class StopRule:
    """Play deals in rounds until every game's ranking is separated (SPEC 10.9)."""

    confidence: float = 0.95
    min_deals: int = 8
    max_deals: int = 1024

    def rounds(self, most: int) -> list[int]:
        """The deal counts after which the rule looks: min_deals, then doubling, up to ``most``
        (the largest game's deal count, itself at most max_deals)."""
        targets, target = [], min(self.min_deals, most)
        while target < most:
            targets.append(target)
            target *= 2
        return [*targets, most]


class ConfigError(ValueError):
    """Mistakes in a definition: ``problems`` holds one line per mistake naming the file, the
    field, what was found and what was expected; ``str()`` gives them all, one per line."""

    def __init__(self, *problems: str) -> None:
        self.problems = list(problems)
        if len(problems) > 1:
            source = problems[0].split(": ", 1)[0]
            text = "\n  ".join([f"{source}: {len(problems)} mistakes", *problems])
        else:
            text = problems[0] if problems else "a mistake in the definition"
        super().__init__(text)


@dataclass(frozen=True)
class TournamentConfig:
    name: str
    # The tournament seed every deal derives from (SPEC 10.3). None: secret, drawn for the
    # results file when it is new and read from it on a resume (arena.tournament.sealing), so
    # a config read from a file without `seed` has none until then.
    seed: int | None
    bots: tuple[BotSpec, ...]
    games: tuple[GamePlan, ...]
    seating: str = "duplicate"
    concurrency: int = field(default_factory=lambda: os.cpu_count() or 1)
    workers: int | None = None  # processes playing matches; None = worker_count()
    # each process that plays pinned to a core of its own, with its bots (arena.referee.cores);
    # not part of the definition: it decides where matches run, never what they are
    affinity: bool = True
    cluster: str | None = None  # a Dask scheduler's address or "local:N": play on its workers
    matches_per_worker: int | None = None  # on a cluster; None = each worker's thread count
    # a tls:// cluster's security files (CA, certificate, key): the organiser's, not part of the
    # definition; None: Dask's own configuration (``local:N`` makes its own)
    cluster_tls: tuple[str, str, str] | None = None
    time_control: TimeControl = TimeControl()
    max_faults: int = DEFAULT_MAX_FAULTS
    match_time_limit_s: float = DEFAULT_MATCH_TIME_LIMIT_S
    output: Path = Path("results")  # folder for the match records and bot logs
    results: Path = Path("results/results.sqlite")
    records: bool = True  # write a JSONL record of every match
    source: str = "<command line>"  # the file it came from, for messages
    # deals in rounds until the rankings are separated; not part of the definition: it decides
    # which deals are played, never what a match is
    stop: StopRule | None = None
    # per bot name: what its program is, {file or folder: SHA-256} (see program_hashes)
    programs: dict[str, dict[str, str]] = field(default_factory=dict)
    # the same as an older arena hashed them (argv's files only), for a results file it began
    # (legacy_program_hashes); ``legacy_hashing``: the definition uses them (SPEC 10.4)
    legacy_programs: dict[str, dict[str, str]] = field(default_factory=dict)
    legacy_hashing: bool = False
    # Whether the seed is the organiser's (the file's `seed`, --seed): public, so bots may know
    # it. False: a secret seed, never in the definition (its commitment is in the results file).
    public_seed: bool = True
    # The secret seed's commitment (SPEC 10.3), written into every record header; and whether
    # the seed was revealed already (the tournament has ended: nothing more may be dealt).
    commitment: str | None = None
    revealed: bool = False
    # a gauntlet (SPEC 10.2): only the tables where one of these bots sits are played
    gauntlet: tuple[str, ...] = ()
    # a deal set (SPEC 10.3): deal d of every table is dealt from the d-th seed; where from
    deal_set: tuple[int, ...] = ()
    deal_set_source: str = ""
    # a new process of every bot for every match (arena compare: the field meets NEW's and
    # OLD's copies of a deal in the same state); part of the definition when set
    fresh_processes: bool = False

    def definition(self) -> dict[str, Any]:
        """What decides the matches and their results (not where files go, not how many run at
        once): its fingerprint ties a results file to the definition that filled it. A secret
        seed is null here: the definition is stored in the results file and shown by its web
        pages while the tournament runs."""
        return {
            "name": self.name,
            "seed": self.seed if self.public_seed else None,
            "seating": self.seating,
            "bots": [
                {
                    "name": b.name,
                    "argv": list(b.argv),
                    "cwd": b.cwd,
                    "env": dict(b.env),
                    "version": b.version,
                    "memory_mb": b.memory_mb,
                    "cpu_seconds": b.cpu_seconds,
                    "file_mb": b.file_mb,
                    "sandbox": b.sandbox,
                    "program": dict(self.programs.get(b.name, {})),
                    # only when given, so that older definitions keep their fingerprints
                    **({"user": b.user} if b.user else {}),
                    **({"max_processes": b.max_processes} if b.max_processes else {}),
                    **({"sent_name": b.sent_name} if b.sent_name else {}),
                }
                for b in self.bots
            ],
            "games": [
                {
                    "label": g.label,
                    "game": g.game_id,
                    "players": g.players,
                    "deals": g.deals,
                    "options": dict(g.options),
                    "max_tables": g.max_tables,
                }
                for g in self.games
            ],
            "time": {
                "decision_ms": self.time_control.decision_ms,
                "bank_ms": self.time_control.bank_ms,
                "increment_ms": self.time_control.increment_ms,
                "margin_ms": self.time_control.margin_ms,
                "startup_ms": self.time_control.startup_ms,
            },
            "max_faults": self.max_faults,
            "match_time_limit": self.match_time_limit_s,
            # only when given, so that other definitions keep their fingerprints
            **({"format": "gauntlet", "gauntlet": list(self.gauntlet)} if self.gauntlet else {}),
            **({"deals_from": list(self.deal_set)} if self.deal_set else {}),
            # bots hashed whole (SPEC 10.4); absent as an older arena wrote it
            **({} if self.legacy_hashing else {"bots_hashed": "whole"}),
            **({"fresh_processes": True} if self.fresh_processes else {}),
        }

    def bot_identities(self) -> dict[str, str]:
        """Per bot name, a hash of everything that makes it the bot it is: its definition entry,
        its program's content hash included. A stored match is a match of these identities."""
        return bot_identities(self.definition()["bots"])

    def for_players(self) -> TournamentConfig:
        """This config as processes that only play matches get it (worker processes, a Dask
        cluster's workers): without the seed, which they never need (each match comes with
        its own) and which would give away every deal to be played."""
        return replace(self, seed=None)

    def keyer(self) -> Callable[[ScheduledMatch], ScheduledMatch]:
        """A function giving a match its content key (:func:`arena.tournament.schedule.match_key`),
        with this definition's identities computed once."""
        identities = self.bot_identities()
        time_control = self.definition()["time"]

        def keyed(match: ScheduledMatch) -> ScheduledMatch:
            return replace(match, key=match_key(match, identities, time_control, self.max_faults))

        return keyed

    def keyed(self, matches: Sequence[ScheduledMatch]) -> list[ScheduledMatch]:
        """``matches`` with their content keys."""
        keyer = self.keyer()
        return [keyer(m) for m in matches]

    def worker_count(self) -> int:
        """Processes that play the matches: ``workers`` if set, else one per core up to
        ``concurrency``; never more than ``concurrency``. One means this process alone."""
        wanted = self.workers if self.workers is not None else (os.cpu_count() or 1)
        return max(1, min(wanted, self.concurrency))

    def fingerprint(self) -> str:
        text = json.dumps(self.definition(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def arena_files(self) -> list[str]:
        """What no bot may read (hidden from sealed bots, SPEC.md section 7): the output folder,
        the results file and the tournament file."""
        source = [self.source] if os.path.isfile(self.source) else []
        return arena_files(self.output, self.results, *source)

    @property
    def records_dir(self) -> Path:
        return self.output / "records"

    @property
    def logs_dir(self) -> Path:
        return self.output / "logs"


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def bot_identities(entries: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Per bot name, the hash of its definition entry (TournamentConfig.bot_identities), from
    the entries as a definition holds them (a results file's too)."""
    return {
        entry["name"]: _sha256(json.dumps(entry, sort_keys=True, separators=(",", ":")))
        for entry in entries
    }


def plans_of(definition: Mapping[str, Any]) -> list[GamePlan]:
    """The games of a definition as the schedule takes them (a results file's definition)."""
    return [
        GamePlan(
            label=g["label"],
            game_id=g["game"],
            players=g["players"],
            deals=g["deals"],
            options=dict(g.get("options", {})),
            team_size=find_game(g["game"]).team_size,
            max_tables=g["max_tables"],
            deal_seeds=tuple(int(seed) for seed in definition.get("deals_from", ())),
            gauntlet=tuple(definition.get("gauntlet", ())),
        )
        for g in definition["games"]
    ]


def with_gauntlet(config: TournamentConfig, names: Sequence[str]) -> TournamentConfig:
    """``config`` as a gauntlet of ``names`` (``--gauntlet``); ConfigError for a name that is
    not one of its bots."""
    known = [b.name for b in config.bots]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(
            f"--gauntlet: found {unknown[0]!r}; expected one of the bots ({', '.join(known)})"
        )
    chosen = tuple(dict.fromkeys(names))
    return replace(
        config, gauntlet=chosen, games=tuple(replace(g, gauntlet=chosen) for g in config.games)
    )


@dataclass(frozen=True)
class BotScope:
    """What a bot is, for its content hash (SPEC 10.4): ``files``, the files and folders its
    [[bots]] entry declares (None: its own folder), less the ``exclude`` patterns (build
    products, logs)."""

    files: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()


OUTPUT_LOCK = ".arena-lock"  # (arena.tournament.store.OutputLock): a tournament's output folder
RESULTS_SUFFIXES = (".sqlite", ".sqlite-wal", ".sqlite-shm", ".sqlite-journal")


def program_hashes(
    spec: BotSpec,
    *,
    submitted: bool = False,
    scope: BotScope = BotScope(),
    skip: Sequence[Path] = (),
) -> dict[str, str]:
    """What a bot's program is, by content (SPEC 10.4), as ``{file or folder/: SHA-256}``:

    - a submitted bot: its whole installed folder (``arena submit``'s content hash);
    - a bot that declares ``files``: each of them (a folder whole), relative to its ``cwd``;
    - otherwise its own folder: the folder of its own file (the first argument of ``argv`` after
      the program that names an existing file, as an interpreter's script; else the program,
      when it is inside the bot's ``cwd``), or the nearest folder above it, up to its ``cwd``,
      that holds a ``bot.toml``; and any other argument naming a file outside that folder (the
      interpreter, say); a bot with no such file: the files its ``argv`` names.

    Folders are hashed less version control and caches (as ``arena submit``), the ``exclude``
    patterns, arena output folders (holding ``.arena-lock``), results files and the files of
    ``skip`` (the tournament file), so the files of a tournament never change a bot. A program
    found on PATH (``python3``, ``node``) is not hashed: it is the machine's, not the bot's.
    OSError and BotFolderError come through for the caller to name the field."""
    if submitted and spec.cwd:
        return {spec.cwd.rstrip("/") + "/": content_hash(spec.cwd)}
    base = Path(spec.cwd) if spec.cwd is not None else None
    if scope.files is not None:
        hashes = {}
        for name in scope.files:
            path = Path(name) if Path(name).is_absolute() or base is None else base / name
            if path.is_dir():
                hashes[name.rstrip("/") + "/"] = folder_digest(path, scope.exclude, skip)
            else:
                hashes[name] = file_digest(path)  # (a missing one: OSError, named by the caller)
        return hashes
    files = argv_files(spec)
    if not files:
        return {}
    # the bot's own file: the first one named after the program (an interpreter's script, a
    # jar), else the program itself, whose folder is the bot's only inside its cwd (not
    # /usr/bin of a bot run as /usr/bin/env ...)
    named_after = files[0][0] != spec.argv[0]
    argument, program = files[1] if not named_after and len(files) > 1 else files[0]
    inside = base is not None and program.resolve().is_relative_to(base.resolve())
    if argument == spec.argv[0] and not inside:
        return legacy_program_hashes(spec)
    folder = own_folder(program, base)
    hashes = {_relative_name(folder, base) + "/": folder_digest(folder, scope.exclude, skip)}
    for argument, path in files:
        if not path.resolve().is_relative_to(folder.resolve()):
            hashes[argument] = file_digest(path)
    return hashes


def legacy_program_hashes(spec: BotSpec) -> dict[str, str]:
    """An older arena's program hashes: only the files ``argv`` names (SPEC 10.4, for results
    files begun before bots were hashed whole)."""
    return {argument: file_digest(path) for argument, path in argv_files(spec)}


def argv_files(spec: BotSpec) -> list[tuple[str, Path]]:
    """The arguments of ``argv`` that name existing files, with their paths (relative ones
    taken from the bot's ``cwd``; a program looked up on PATH is not one)."""
    found = []
    for index, argument in enumerate(spec.argv):
        if index == 0 and "/" not in argument:
            continue  # looked up on PATH
        if "\0" in argument:
            continue
        path = Path(argument)
        if not path.is_absolute():
            if spec.cwd is None:
                continue  # it runs in a fresh private folder: relative names point nowhere
            path = Path(spec.cwd) / path
        if path.is_file():
            found.append((argument, path))
    return found


def own_folder(program: Path, cwd: Path | None) -> Path:
    """A bot's own folder: the nearest folder from its program file's up to ``cwd`` that holds
    a bot.toml, else the program file's folder."""
    folder = program.parent
    for candidate in (folder, *folder.parents):
        if (candidate / MANIFEST_FILE).is_file():
            return candidate
        if cwd is None or candidate.resolve() == cwd.resolve():
            break
    return folder


def _relative_name(folder: Path, base: Path | None) -> str:
    if base is not None and folder.resolve().is_relative_to(base.resolve()):
        return os.path.relpath(folder.resolve(), base.resolve())
    return str(folder)


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def folder_digest(folder: Path, exclude: Sequence[str] = (), skip: Sequence[Path] = ()) -> str:
    """SHA-256 over a folder's entries as ``arena submit``'s content hash takes them (sorted
    paths, kinds, sizes, contents), less ``exclude`` (glob patterns matched against each
    entry's path inside the folder, from the right: ``*.log``, ``build/*``), arena output
    folders and results files. A symlink is hashed as its target's name, wherever it points."""
    digest = hashlib.sha256()
    for relative, path in _scope_entries(folder, exclude, {p.resolve() for p in skip}):
        name = os.fsencode(relative)
        if path.is_symlink():
            digest.update(b"l " + name + b"\0" + os.fsencode(os.readlink(path)) + b"\0")
        elif path.is_dir():
            digest.update(b"d " + name + b"\0")
        else:
            executable = os.access(path, os.X_OK)
            digest.update((b"x " if executable else b"f ") + name + b"\0")
            digest.update(bytes.fromhex(file_digest(path)))
    return digest.hexdigest()


def _scope_entries(folder: Path, exclude: Sequence[str], skip: set[Path]) -> list[tuple[str, Path]]:
    entries = []
    for root, dirs, names in os.walk(folder):
        here = Path(root)
        kept = []
        for name in sorted(dirs):
            path = here / name
            relative = path.relative_to(folder).as_posix()
            if (
                name in EXCLUDED_DIRS
                or _excluded(relative, exclude, folder=True)
                or (path / OUTPUT_LOCK).exists()
            ):
                continue
            entries.append((relative, path))
            if not path.is_symlink():
                kept.append(name)
        dirs[:] = kept
        for name in names:
            path = here / name
            relative = path.relative_to(folder).as_posix()
            if (
                name in EXCLUDED_FILES
                or name.endswith(EXCLUDED_SUFFIXES + RESULTS_SUFFIXES)
                or _excluded(relative, exclude)
                or (skip and path.resolve() in skip)
            ):
                continue
            entries.append((relative, path))
    return sorted(entries, key=lambda entry: os.fsencode(entry[0]))


def _excluded(relative: str, patterns: Sequence[str], *, folder: bool = False) -> bool:
    """Whether a pattern matches the path (a folder also by ``NAME/*`` or ``NAME/**``: all
    that it holds, so the folder itself too)."""
    path = PurePosixPath(relative)
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if folder:
            pattern = pattern.removesuffix("/**").removesuffix("/*")
        if pattern and path.match(pattern):
            return True
    return False


def _programs(
    reader: _Reader, bots: Sequence[tuple[str, BotSpec, bool, BotScope]], skip: Sequence[Path]
) -> dict[str, dict[str, str]]:
    """Each bot's program hashes; a program that cannot be read is a mistake of its field."""
    programs: dict[str, dict[str, str]] = {}
    for where, bot, submitted, scope in bots:

        def hashes(
            where: str = where, bot: BotSpec = bot, submitted: bool = submitted, scope=scope
        ) -> dict:
            try:
                return program_hashes(bot, submitted=submitted, scope=scope, skip=skip)
            except (OSError, BotFolderError) as exc:
                field_name = where if scope.files is None else where.rsplit(".", 1)[0] + ".files"
                reader.fail(field_name, bot.name, f"files that can be read ({exc})")

        programs[bot.name] = reader.read(hashes, {})
    return programs


# -- reading values, one field at a time -----------------------------------------------------------


def _describe(value: object) -> str:
    kinds = {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a table",
    }
    kind = kinds.get(type(value), type(value).__name__)
    shown = json.dumps(value, default=str) if not isinstance(value, dict) else "{...}"
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"{shown} ({kind})"


class _Reader:
    """Checks fields of one source. ``fail`` raises ConfigError naming the source and field;
    ``read`` runs one check and, when it fails, keeps the mistake in ``problems`` and goes on,
    so that :meth:`done` reports every mistake of the file at once."""

    def __init__(self, source: str, base: Path | None = None) -> None:
        self.source = source
        self.base = base  # relative paths in the file are taken from its folder
        self.problems: list[str] = []

    def place(self, text: str) -> str:
        """A path as written in the file, made relative to the file's folder (if it has one)."""
        if self.base is None or Path(text).is_absolute():
            return text
        return os.path.normpath(self.base / text)

    def message(self, field_name: str, found: object, expected: str, *, raw: bool = False) -> str:
        shown = found if raw else _describe(found)
        return f"{self.source}: {field_name}: found {shown}; expected {expected}"

    def fail(self, field_name: str, found: object, expected: str, *, raw: bool = False) -> NoReturn:
        raise ConfigError(self.message(field_name, found, expected, raw=raw))

    def note(self, field_name: str, found: object, expected: str, *, raw: bool = False) -> None:
        """Keep a mistake for :meth:`done` and go on."""
        self.problems.append(self.message(field_name, found, expected, raw=raw))

    def read(self, check: Callable[[], T], fallback: T) -> T:
        """``check()``, or ``fallback`` with its mistakes kept for later."""
        try:
            return check()
        except ConfigError as exc:
            self.problems.extend(exc.problems)
            return fallback

    def done(self) -> None:
        """Raise every mistake kept so far (in the order found)."""
        if self.problems:
            raise ConfigError(*self.problems)

    def only(self, table: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
        for key in table:
            if key not in allowed:
                place = f"{where}.{key}" if where else key
                self.note(place, "an unknown field", "one of " + ", ".join(allowed), raw=True)

    def integer(
        self, name: str, value: object, *, minimum: int | None = None, maximum: int | None = None
    ) -> int:
        if (
            isinstance(value, int)
            and not isinstance(value, bool)
            and (minimum is None or value >= minimum)
            and (maximum is None or value <= maximum)
        ):
            return value
        bounds = [f">= {minimum}"] if minimum is not None else []
        bounds += [f"<= {maximum}"] if maximum is not None else []
        self.fail(name, value, "an integer" + (" " + " and ".join(bounds) if bounds else ""))

    def number(self, name: str, value: object) -> float:
        if (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and math.isfinite(value)
            and value > 0
        ):
            return float(value)
        self.fail(name, value, "a number of seconds > 0")

    def text(self, name: str, value: object, *, nonempty: bool = True) -> str:
        if isinstance(value, str) and (value.strip() or not nonempty):
            return value
        self.fail(name, value, "a non-empty string" if nonempty else "a string")

    def boolean(self, name: str, value: object) -> bool:
        if isinstance(value, bool):
            return value
        self.fail(name, value, "true or false")

    def table(self, name: str, value: object) -> dict[str, Any]:
        if isinstance(value, dict):
            return value
        self.fail(name, value, "a table ({ key = value, ... } or a [section])")

    def bot_field(self, field_name: str, check: Callable[[Any], T], value: object) -> T:
        """``check(value)``: one of a bot definition's rules (arena.referee.bot_spec)."""
        try:
            return check(value)
        except BotFieldError as error:
            self.fail(field_name, error.found, error.expected, raw=error.raw)

    def name(self, field_name: str, value: object) -> str:
        if isinstance(value, str) and NAME_PATTERN.match(value):
            return value
        self.fail(field_name, value, NAME_EXPECTED)


# -- the parts of a definition --------------------------------------------------------------------


def _bot(reader: _Reader, where: str, raw: object) -> tuple[BotScope, BotSpec] | None:
    """One [[bots]] entry and what it is for its content hash; None (its mistakes kept in
    ``reader``) when it has any."""
    table = reader.read(lambda: reader.table(where, raw), None)
    if table is None:
        return None
    before = len(reader.problems)
    reader.only(table, BOT_FIELDS, where)

    def read_name() -> str:
        if "name" not in table:
            reader.fail(f"{where}.name", "nothing", BOT_NAME_EXPECTED, raw=True)
        return reader.bot_field(f"{where}.name", check_name, table["name"])

    def command() -> tuple[str, ...]:
        if ("argv" in table) == ("cmd" in table):
            reader.fail(
                where,
                "both argv and cmd" if "argv" in table else "neither argv nor cmd",
                "exactly one of argv (a list of strings) or cmd (a command line)",
                raw=True,
            )
        if "argv" in table:
            argv = table["argv"]
            if not isinstance(argv, list):
                reader.fail(f"{where}.argv", argv, "a list of strings (or cmd: a command line)")
            return reader.bot_field(f"{where}.argv", check_command, argv)
        cmd = reader.text(f"{where}.cmd", table["cmd"])
        return reader.bot_field(f"{where}.cmd", check_command, cmd)

    def directory() -> str | None:
        if "cwd" not in table:
            return None
        cwd = reader.place(reader.text(f"{where}.cwd", table["cwd"]))
        if not Path(cwd).is_dir():
            reader.fail(f"{where}.cwd", cwd, "an existing directory")
        return cwd

    def environment() -> list[tuple[str, str]]:
        env_table = reader.table(f"{where}.env", table.get("env", {}))
        env = []
        for key, value in env_table.items():
            named = partial(reader.bot_field, f"{where}.env.{key}", check_env_name, key)
            name = reader.read(named, "")
            text = reader.read(
                partial(reader.bot_field, f"{where}.env.{key}", check_env_value, value), None
            )
            if name and text is not None:
                env.append((name, text))
        return env

    def sandboxed() -> str | None:
        return reader.bot_field(f"{where}.sandbox", check_sandbox, table.get("sandbox"))

    bot_name: str = reader.read(read_name, "")
    argv_tuple: tuple[str, ...] = reader.read(command, ())
    cwd_problems = len(reader.problems)
    cwd = reader.read(directory, None)
    if argv_tuple and len(reader.problems) == cwd_problems:
        field_name = f"{where}.argv" if "argv" in table else f"{where}.cmd"
        reader.read(lambda: _check_program(reader, field_name, argv_tuple[0], cwd), None)
    env: list[tuple[str, str]] = reader.read(environment, [])
    limits: dict[str, int] = {}
    for limit in LIMIT_MAXIMA:
        if limit in table:
            check = partial(check_limit, limit)
            limits[limit] = reader.read(
                partial(reader.bot_field, f"{where}.{limit}", check, table[limit]), 1
            )
    sandbox = reader.read(sandboxed, None)
    user = reader.read(partial(_user, reader, where, table), None)
    version = reader.read(
        lambda: reader.text(f"{where}.version", table.get("version", ""), nonempty=False), ""
    )
    scope = reader.read(partial(_scope, reader, where, table, cwd), BotScope())
    if len(reader.problems) > before:
        return None
    return scope, BotSpec(
        name=bot_name,
        argv=argv_tuple,
        cwd=cwd,
        env=tuple(sorted(env)),
        version=version,
        sandbox=sandbox,
        user=user,
        memory_mb=limits.get("memory_mb"),
        cpu_seconds=limits.get("cpu_seconds"),
        file_mb=limits.get("file_mb"),
        max_processes=limits.get("max_processes"),
    )


def _scope(reader: _Reader, where: str, table: dict[str, Any], cwd: str | None) -> BotScope:
    """``files`` (what the bot is, relative to its cwd) and ``exclude`` (patterns left out)."""

    def paths(field_name: str) -> tuple[str, ...] | None:
        if field_name not in table:
            return None
        value = table[field_name]
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(v, str) and v and "\0" not in v for v in value)
        ):
            reader.fail(f"{where}.{field_name}", value, "a non-empty list of paths")
        return tuple(value)

    files = paths("files")
    exclude = paths("exclude") or ()
    for name in files or ():
        path = Path(name) if Path(name).is_absolute() or cwd is None else Path(cwd) / name
        if not path.exists():
            reader.note(
                f"{where}.files", name, "an existing file or folder (relative to the bot's cwd)"
            )
    return BotScope(files, exclude)


def _user(reader: _Reader, where: str, table: dict[str, Any]) -> str | None:
    """The bot's ``user`` (a user name or number), None when it gives none."""
    if "user" not in table:
        return None
    return reader.bot_field(f"{where}.user", check_user, table["user"])


def _check_program(reader: _Reader, field_name: str, program: str, cwd: str | None) -> None:
    """A missing program is a mistake in the file, not a bot that forfeits every match."""
    if "/" in program:
        path = Path(cwd or ".") / program
        if not (path.is_file() and os.access(path, os.X_OK)):
            reader.fail(
                field_name,
                program,
                "an executable program (a relative path is taken from the bot's cwd)",
            )
    elif shutil.which(program) is None:
        reader.fail(field_name, program, "a program found on PATH")


def _bots_dir(reader: _Reader, raw: object) -> tuple[BotSpec, ...]:
    """``bots_dir = "bots"`` or ``bots_dir = { path = "bots", sandbox = "bwrap" }``: the latest
    version of every bot installed there by ``arena submit``, named ``name@version``
    (arena/bots/installed.py)."""
    table = {"path": raw} if isinstance(raw, str) else reader.table("bots_dir", raw)
    reader.only(table, ("path", "sandbox"), "bots_dir")
    path = reader.place(reader.text("bots_dir.path", table.get("path")))
    sandbox = table.get("sandbox")
    if sandbox not in SANDBOXES:
        reader.fail("bots_dir.sandbox", sandbox, SANDBOX_EXPECTED)
    try:
        return tuple(replace(bot, sandbox=sandbox) for bot in tournament_bots(path))
    except BotsDirError as exc:
        raise ConfigError(f"{reader.source}: bots_dir: {exc}") from None


def _game(reader: _Reader, where: str, raw: object, default_deals: int) -> GamePlan | None:
    """One [[games]] entry; None (its mistakes kept in ``reader``) when it has any."""
    table: dict[str, Any] | None = (
        {"game": raw}
        if isinstance(raw, str)
        else reader.read(lambda: reader.table(where, raw), None)
    )
    if table is None:
        return None
    before = len(reader.problems)
    reader.only(table, GAME_FIELDS, where)

    def game() -> Any:
        if "game" not in table:
            reader.fail(
                f"{where}.game", "nothing", "a game id (" + ", ".join(GAMES) + ")", raw=True
            )
        game_name = reader.text(f"{where}.game", table["game"])
        try:
            return find_game(game_name)
        except GameError:
            reader.fail(f"{where}.game", game_name, "a game id (" + ", ".join(GAMES) + ")")

    def player_count() -> int:
        players = table["players"]
        if type(players) is not int or players not in spec.player_counts:
            reader.fail(
                f"{where}.players",
                players,
                f"one of {', '.join(map(str, spec.player_counts))} for {spec.id}",
            )
        return players

    def option(key: str, value: object) -> Any:
        try:
            return spec.option(key).check(spec.id, value)
        except GameError as exc:
            reader.fail(f"{where}.options.{key}", value, str(exc).split(": ", 1)[-1])

    spec = reader.read(game, None)
    players = 0
    options = {}
    if spec is not None:
        players = reader.read(player_count, 0) if "players" in table else spec.default_players
        options_raw: dict[str, Any] = reader.read(
            lambda: reader.table(f"{where}.options", table.get("options", {})), {}
        )
        for key, value in options_raw.items():
            options[key] = reader.read(partial(option, key, value), None)
    label = spec.id if spec is not None else ""
    if "label" in table:
        label = reader.read(lambda: reader.name(f"{where}.label", table["label"]), label)
    deals = reader.read(
        lambda: reader.integer(
            f"{where}.deals", table.get("deals", default_deals), minimum=1, maximum=MAX_DEALS
        ),
        1,
    )
    max_tables = reader.read(
        lambda: reader.integer(
            f"{where}.max_tables",
            table.get("max_tables", DEFAULT_MAX_TABLES),
            minimum=1,
            maximum=MAX_TABLES,
        ),
        1,
    )
    if spec is None or len(reader.problems) > before:
        return None
    return GamePlan(
        label=label,
        game_id=spec.id,
        players=players,
        deals=deals,
        options=options,
        team_size=spec.team_size,
        max_tables=max_tables,
    )


def check_cluster_address(text: str, *, where: str) -> str:
    """``tcp://HOST:PORT`` (any Dask scheme, or none) or ``local:N``; ConfigError names ``where``."""
    address = text.strip()
    local = LOCAL_CLUSTER.match(address)
    if local and 1 <= int(local.group(1)) <= 256:
        return address
    if not local and CLUSTER_ADDRESS.match(address):
        return address
    raise ConfigError(f"{where}: found {_describe(text)}; expected {CLUSTER_EXPECTED}")


def check_cluster_tls(files: tuple[str, ...], *, where: str) -> tuple[str, str, str]:
    """A cluster's TLS files (CA, certificate, key), each a readable file; ConfigError names
    ``where``."""
    if len(files) != 3:
        raise ConfigError(
            f"{where}: found {len(files)} files; expected three: the CA, the certificate and its "
            "key (PEM files, as dask scheduler --tls-ca-file --tls-cert --tls-key takes)"
        )
    for name in files:
        if not os.path.isfile(name) or not os.access(name, os.R_OK):
            raise ConfigError(f"{where}: {name}: no such readable file")
    return files[0], files[1], files[2]


def _cluster(reader: _Reader, raw: object) -> tuple[str, int | None, tuple[str, str, str] | None]:
    """``cluster = "tls://..."`` or ``cluster = { address = "...", matches_per_worker = N,
    tls_ca_file = "...", tls_cert = "...", tls_key = "..." }``."""
    table = {"address": raw} if isinstance(raw, str) else reader.table("cluster", raw)
    reader.only(table, CLUSTER_FIELDS, "cluster")
    where = "cluster" if isinstance(raw, str) else "cluster.address"
    if not isinstance(table.get("address"), str):
        reader.fail(
            where, table.get("address", "nothing"), CLUSTER_EXPECTED, raw="address" not in table
        )
    address = check_cluster_address(table["address"], where=f"{reader.source}: {where}")
    per_worker = None
    if "matches_per_worker" in table:
        per_worker = reader.integer(
            "cluster.matches_per_worker", table["matches_per_worker"], minimum=1, maximum=256
        )
    tls = None
    given = [name for name in CLUSTER_TLS_FIELDS if name in table]
    if given:
        for name in given:
            if not isinstance(table[name], str):
                reader.fail(f"cluster.{name}", table[name], "a file's path")
        if len(given) < 3 or not address.startswith("tls://"):
            reader.fail(
                "cluster",
                f"{', '.join(given)} for {address}",
                'a "tls://HOST:PORT" address with all of tls_ca_file, tls_cert and tls_key',
                raw=True,
            )
        tls = check_cluster_tls(
            tuple(reader.place(table[name]) for name in CLUSTER_TLS_FIELDS),
            where=f"{reader.source}: cluster",
        )
    return address, per_worker, tls


def _time_control(reader: _Reader, raw: object) -> TimeControl:
    table: dict[str, Any] = reader.read(lambda: reader.table("time", raw), {})
    reader.only(table, TIME_FIELDS, "time")
    values: dict[str, Any] = {}
    for key in TIME_FIELDS:
        if key in table:
            minimum = 0 if key in ("increment_ms", "margin_ms") else 1
            value: int | None = reader.read(
                partial(reader.integer, f"time.{key}", table[key], minimum=minimum), None
            )
            if value is not None:
                values[key] = value
    return TimeControl(**values)


def _unique(reader: _Reader, where: str, names: Sequence[tuple[int, str]], what: str) -> None:
    """Each name once; ``names`` are (index in the file's list, name)."""
    seen: set[str] = set()
    hint = ' (give a game entry its own label = "...")' if what == "label" else ""
    for index, name in names:
        if name in seen:
            reader.problems.append(
                f"{reader.source}: {where}[{index}]: found {what} {name!r} a second time; "
                f"expected each {what} once{hint}"
            )
        seen.add(name)


def _paths(reader: _Reader, table: Mapping[str, Any], name: str) -> tuple[Path, Path, bool]:
    output = Path(
        reader.read(
            lambda: reader.place(reader.text("output", table.get("output", f"results/{name}"))),
            "results",
        )
    )
    results = (
        Path(reader.read(lambda: reader.place(reader.text("results", table["results"])), "x"))
        if "results" in table
        else output / "results.sqlite"
    )
    records = reader.read(lambda: reader.boolean("records", table.get("records", True)), True)
    return output, results, records


def load_config(path: str | Path, *, until_confident: bool = False) -> TournamentConfig:
    """Read and check a tournament file. Raises ConfigError (one line) on any mistake.
    ``until_confident`` (``--until-confident``) adds ``stop = {}`` (the defaults) if the file
    has no stop rule."""
    source = str(path)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"{source}: no such file (expected a tournament file, e.g. tournaments/demo.toml)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{source}: cannot read it: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from None
    if until_confident:
        data.setdefault("stop", {})
    return config_from_table(
        data, source=source, default_name=Path(path).stem, base=Path(path).parent
    )


def config_from_table(
    data: Mapping[str, Any],
    *,
    source: str,
    default_name: str = "tournament",
    base: Path | None = None,
) -> TournamentConfig:
    """The definition in ``data``; ConfigError lists every mistake, one line each.

    ``base``: the folder relative paths (cwd, output, results, bots_dir) are taken from; None
    takes them from the current folder."""
    reader = _Reader(source, base)
    read = reader.read
    reader.only(data, TOP_FIELDS, "")
    name = read(lambda: reader.name("name", data.get("name", default_name)), "tournament")
    seed = (
        read(lambda: reader.integer("seed", data["seed"], minimum=0, maximum=2**63 - 1), 0)
        if data.get("seed") is not None
        else None
    )
    stop = read(lambda: _stop(reader, data["stop"]), None) if "stop" in data else None
    no_set: tuple[tuple[int, ...], str] = ((), "")
    deal_set, deal_set_source = (
        read(lambda: _deal_set(reader, data["deals_from"]), no_set)
        if "deals_from" in data
        else no_set
    )
    default_deals = DEFAULT_DEALS if stop is None else stop.max_deals
    if deal_set:
        default_deals = min(default_deals, len(deal_set)) if stop else len(deal_set)
    deals = read(
        lambda: reader.integer(
            "deals", data.get("deals", default_deals), minimum=1, maximum=MAX_DEALS
        ),
        default_deals,
    )

    def seating_mode() -> str:
        seating = data.get("seating", "duplicate")
        if seating not in SEATINGS:
            reader.fail("seating", seating, " or ".join(f'"{s}"' for s in SEATINGS))
        return seating

    seating = read(seating_mode, "duplicate")
    concurrency = read(
        lambda: reader.integer(
            "concurrency", data.get("concurrency", os.cpu_count() or 1), minimum=1, maximum=256
        ),
        1,
    )
    workers = (
        read(lambda: reader.integer("workers", data["workers"], minimum=1, maximum=256), None)
        if "workers" in data
        else None
    )
    affinity = read(lambda: reader.boolean("affinity", data.get("affinity", True)), True)
    no_cluster: tuple[str | None, int | None, tuple[str, str, str] | None] = (None, None, None)
    cluster, matches_per_worker, cluster_tls = (
        read(lambda: _cluster(reader, data["cluster"]), no_cluster)
        if "cluster" in data
        else no_cluster
    )
    max_faults = read(
        lambda: reader.integer("max_faults", data.get("max_faults", DEFAULT_MAX_FAULTS), minimum=1),
        DEFAULT_MAX_FAULTS,
    )
    limit = read(
        lambda: reader.number(
            "match_time_limit", data.get("match_time_limit", DEFAULT_MATCH_TIME_LIMIT_S)
        ),
        DEFAULT_MATCH_TIME_LIMIT_S,
    )
    time_control = _time_control(reader, data.get("time", {}))

    known = len(reader.problems)
    dir_bots: tuple[BotSpec, ...] = (
        read(lambda: _bots_dir(reader, data["bots_dir"]), ()) if "bots_dir" in data else ()
    )
    dir_failed = len(reader.problems) > known  # then its bots are unknown: do not count them
    bots_raw = data.get("bots", [] if "bots_dir" in data else None)
    if not isinstance(bots_raw, list) or (len(dir_bots) + len(bots_raw) < 2 and not dir_failed):
        read(
            lambda: reader.fail(
                "bots",
                "nothing" if bots_raw is None else _describe(bots_raw),
                "at least two [[bots]] entries, counting the bots of bots_dir",
                raw=True,
            ),
            None,
        )
        bots_raw = bots_raw if isinstance(bots_raw, list) else []
    if len(dir_bots) + len(bots_raw) > MAX_BOTS:
        reader.note(
            "bots",
            f"{len(dir_bots) + len(bots_raw)} bots"
            + (f" ({len(dir_bots)} of bots_dir)" if dir_bots else ""),
            f"at most {MAX_BOTS} bots in one tournament",
            raw=True,
        )
        reader.done()  # now: checking and hashing each of them first would take minutes
    read_bots = [(i, _bot(reader, f"bots[{i}]", raw)) for i, raw in enumerate(bots_raw)]
    scopes = {i: found[0] for i, found in read_bots if found is not None}
    entries = [(i, None if found is None else found[1]) for i, found in read_bots]
    bots = dir_bots + tuple(bot for _, bot in entries if bot is not None)
    _unique(
        reader,
        "bots",
        [(-1, b.name) for b in dir_bots] + [(i, b.name) for i, b in entries if b is not None],
        "name",
    )

    games_raw = data.get("games", "all")
    if games_raw == "all":
        games_raw = list(GAMES)
    if not isinstance(games_raw, list) or not games_raw or len(games_raw) > MAX_GAMES:
        read(
            lambda: reader.fail(
                "games",
                f"{len(games_raw)} entries" if isinstance(games_raw, list) else games_raw,
                f'"all", a list of game ids or [[games]] entries (1 to {MAX_GAMES})',
                raw=isinstance(games_raw, list),
            ),
            None,
        )
        games_raw = []
    plans = [(i, _game(reader, f"games[{i}]", raw, deals)) for i, raw in enumerate(games_raw)]
    games = tuple(plan for _, plan in plans if plan is not None)
    if stop is not None:  # max_deals caps every game's deals
        games = tuple(replace(g, deals=min(g.deals, stop.max_deals)) for g in games)
    _unique(reader, "games", [(i, g.label) for i, g in plans if g is not None], "label")
    if deal_set:
        most = max((g.deals for g in games), default=0)
        if most > len(deal_set):
            reader.note(
                "deals_from",
                f"{len(deal_set)} deals",
                f"at least as many deals as a game plays ({most}); or fewer deals",
                raw=True,
            )
        games = tuple(replace(g, deal_seeds=deal_set) for g in games)
    no_gauntlet: tuple[str, ...] = ()
    gauntlet = read(lambda: _gauntlet(reader, data, [b.name for b in bots]), no_gauntlet)
    if gauntlet:
        games = tuple(replace(g, gauntlet=gauntlet) for g in games)

    output, results, records = _paths(reader, data, name)
    programs = _programs(
        reader,
        [("bots_dir", bot, True, BotScope()) for bot in dir_bots]
        + [(f"bots[{i}].argv", bot, False, scopes[i]) for i, bot in entries if bot is not None],
        [Path(source)] if os.path.isfile(source) else [],
    )
    reader.done()
    legacy = {bot.name: legacy_program_hashes(bot) for _, bot in entries if bot is not None}
    return TournamentConfig(
        name=name,
        seed=seed,
        public_seed=seed is not None,
        bots=bots,
        games=games,
        seating=seating,
        concurrency=concurrency,
        workers=workers,
        affinity=affinity,
        cluster=cluster,
        matches_per_worker=matches_per_worker,
        cluster_tls=cluster_tls,
        time_control=time_control,
        max_faults=max_faults,
        match_time_limit_s=limit,
        output=output,
        results=results,
        records=records,
        source=source,
        stop=stop,
        gauntlet=gauntlet,
        deal_set=deal_set,
        deal_set_source=deal_set_source,
        programs=programs,
        legacy_programs={**{b.name: programs.get(b.name, {}) for b in dir_bots}, **legacy},
    )


def _deal_set(reader: _Reader, raw: object) -> tuple[tuple[int, ...], str]:
    """``deals_from``: the seeds of a deal set, and where they came from (for messages)."""
    if isinstance(raw, str):
        path = Path(reader.place(raw))
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reader.fail("deals_from", raw, f"{DEAL_SET_EXPECTED} ({getattr(exc, 'strerror', exc)})")
        seeds = []
        for number, line in enumerate(text.splitlines(), 1):
            word = line.split("#", 1)[0].strip()
            if not word:
                continue
            if not word.isdigit() or int(word) >= 2**64:
                reader.fail(f"deals_from ({path} line {number})", word, DEAL_SET_EXPECTED)
            seeds.append(int(word))
        where = str(path)
    elif isinstance(raw, list):
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in raw):
            reader.fail("deals_from", raw, DEAL_SET_EXPECTED)
        seeds, where = list(raw), "the tournament file"
    else:
        reader.fail("deals_from", raw, DEAL_SET_EXPECTED)
    if not seeds or len(seeds) > MAX_DEAL_SET:
        reader.fail("deals_from", f"{len(seeds)} seeds", f"1 to {MAX_DEAL_SET} seeds", raw=True)
    return tuple(seeds), where


def _gauntlet(reader: _Reader, data: Mapping[str, Any], bots: Sequence[str]) -> tuple[str, ...]:
    """``format`` and ``gauntlet``: the bots whose tables a gauntlet plays (none: all)."""
    kind = data.get("format", "round-robin")
    if kind not in FORMATS:
        reader.fail("format", kind, " or ".join(f'"{f}"' for f in FORMATS))
    names = data.get("gauntlet")
    if kind == "round-robin":
        if names is not None:
            reader.fail("gauntlet", names, 'nothing, or format = "gauntlet" beside it')
        return ()
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        reader.fail(
            "gauntlet",
            "nothing" if names is None else names,
            'a list of the bots whose tables are played (format = "gauntlet")',
            raw=names is None,
        )
    unknown = [n for n in names if n not in bots]
    if unknown:
        reader.fail("gauntlet", unknown[0], f"one of the bots ({', '.join(bots)})")
    return tuple(dict.fromkeys(names))


def _stop(reader: _Reader, raw: object) -> StopRule:
    table = reader.table("stop", raw)
    reader.only(table, STOP_FIELDS, "stop")
    defaults = StopRule()
    confidence = table.get("confidence", defaults.confidence)
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        reader.fail("stop.confidence", confidence, "a number between 0.5 and 1 (e.g. 0.95)")
    if not 0.5 < confidence < 1:
        reader.fail("stop.confidence", confidence, "a number between 0.5 and 1 (e.g. 0.95)")
    min_deals = reader.integer(
        "stop.min_deals", table.get("min_deals", defaults.min_deals), minimum=2
    )
    max_deals = reader.integer(
        "stop.max_deals",
        table.get("max_deals", defaults.max_deals),
        minimum=min_deals,
        maximum=MAX_DEALS,
    )
    return StopRule(confidence=float(confidence), min_deals=min_deals, max_deals=max_deals)


def parse_bot_option(text: str) -> dict[str, Any]:
    """``NAME=COMMAND`` from ``--bot`` as a bots entry, run in the current directory (where the
    command line was typed); ConfigError names the option."""
    name, sep, cmd = text.partition("=")
    if not sep or not name.strip() or not cmd.strip():
        raise ConfigError(
            f"--bot {text}: found no NAME=COMMAND; expected e.g. "
            '--bot random="python3 sample_bots/python/random_bot.py"'
        )
    return {"name": name.strip(), "cmd": cmd.strip(), "cwd": "."}


def quick_config(
    bots: Sequence[str],
    *,
    games: str = "all",
    deals: int | None = DEFAULT_DEALS,
    seed: int | None = None,
    concurrency: int | None = None,
    results: str | None = None,
    until_confident: bool = False,
    players: Sequence[str] = (),
    options: Sequence[str] = (),
) -> TournamentConfig:
    """The tournament of ``arena tournament --bot NAME=CMD ...`` (no file): its results go to
    ``results/quick-<fingerprint>.sqlite`` unless given, so the same command resumes.
    ``until_confident`` adds the default stop rule; ``deals`` (None: max_deals) caps it.
    ``players`` (``GAME=N``) and ``options`` (``GAME.KEY=VALUE``) set a chosen game's seats and
    options; ConfigError lists every mistake in them."""
    data: dict[str, Any] = {
        "name": "quick",
        **({} if seed is None else {"seed": seed}),
        "bots": [parse_bot_option(b) for b in bots],
        "games": _quick_games(select_games(games, source="--games"), players, options),
    }
    if deals is not None or not until_confident:
        data["deals"] = DEFAULT_DEALS if deals is None else deals
    if until_confident:
        data["stop"] = {}
    if concurrency is not None:
        data["concurrency"] = concurrency
    config = config_from_table(data, source="--bot", default_name="quick")
    if results:
        return replace(config, output=Path(results).parent, results=Path(results))
    output = Path(f"results/quick-{config.fingerprint()[:10]}")
    return replace(config, output=output, results=output / "results.sqlite")


def _quick_games(
    game_ids: Sequence[str], players: Sequence[str], options: Sequence[str]
) -> list[dict[str, Any]]:
    """The quick form's [[games]] entries: each chosen game with its --players and --option."""
    entries: dict[str, dict[str, Any]] = {game_id: {"game": game_id} for game_id in game_ids}
    problems: list[str] = []

    def chosen(flag: str, text: str, name: str) -> GameSpec | None:
        try:
            spec = find_game(name)
        except GameError:
            problems.append(
                f"{flag} {text}: found game {name.strip()!r}; expected one of {', '.join(GAMES)}"
            )
            return None
        if spec.id not in entries:
            problems.append(
                f"{flag} {text}: {spec.id} is not among the games played "
                f"({', '.join(entries)}); add it to --games"
            )
            return None
        return spec

    for text in players:
        name, sep, count = text.partition("=")
        if not sep:
            problems.append(f"--players {text}: expected GAME=N, e.g. --players aon=3")
            continue
        spec = chosen("--players", text, name)
        if spec is None:
            continue
        try:
            seats = int(count)
        except ValueError:
            seats = 0
        if seats not in spec.player_counts:
            problems.append(
                f"--players {text}: expected one of {', '.join(map(str, spec.player_counts))} "
                f"players for {spec.id}"
            )
            continue
        entries[spec.id]["players"] = seats
    for text in options:
        head, sep, value = text.partition("=")
        name, dot, key = head.partition(".")
        if not sep or not dot or not key.strip():
            problems.append(
                f"--option {text}: expected GAME.KEY=VALUE, e.g. --option vingt-down.max_deals=20"
            )
            continue
        spec = chosen("--option", text, name)
        if spec is None:
            continue
        try:
            resolved = spec.option(key.strip()).check(spec.id, value)
        except GameError as exc:
            problems.append(f"--option {text}: {exc}")
            continue
        entries[spec.id].setdefault("options", {})[key.strip()] = resolved
    if problems:
        raise ConfigError(*problems)
    return list(entries.values())


def select_games(text: str, *, source: str) -> list[str]:
    """``all`` or comma-separated game ids/aliases, as game ids; ConfigError otherwise."""
    if text.strip().lower() == "all":
        return list(GAMES)
    chosen = []
    for part in text.split(","):
        try:
            chosen.append(find_game(part).id)
        except GameError:
            raise ConfigError(
                f'{source}: found {part.strip()!r}; expected "all" or game ids '
                f"separated by commas ({', '.join(GAMES)})"
            ) from None
    return chosen
