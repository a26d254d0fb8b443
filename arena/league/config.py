"""The league file (``LEAGUE.toml``): games, house bots, time control, limits, the sandbox and
the organiser's settings. Every mistake is reported at once, one line each, naming the field.

Its games, time control and house bots are read as a tournament file reads them, with the
tournament file's public readers (arena.tournament.config: FieldReader, read_game, read_bot,
read_time_control), so the two files mean the same by the same words and say a mistake alike.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.tournament.config import (
    DEFAULT_MATCH_TIME_LIMIT_S,
    ConfigError,
    FieldReader,
    read_bot,
    read_game,
    read_time_control,
)
from arena.tournament.schedule import GamePlan

TOP_FIELDS = (
    "name",
    "seed",
    "folder",
    "sandbox",
    "max_faults",
    "match_time_limit",
    "concurrency",
    "time",
    "games",
    "bots",
    "organiser",
    "limits",
)
ORGANISER_FIELDS = (
    "registration",
    "active_versions",
    "submissions_per_hour",
    "registrations_per_hour",
)
LIMIT_FIELDS = ("upload_mb", "unpacked_mb", "files", "build_timeout_s")
REGISTRATIONS = ("closed", "open")
SANDBOXES = ("bwrap", "none")
HOUSE_AUTHOR = "house"
NAME_RE_TEXT = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$"  # an author's name (no '.': labels use it)  # the author of the league file's own bots


@dataclass(frozen=True)
class Limits:
    """What an upload may be: the archive's size, its unpacked size and file count, and how long
    its build may take."""

    upload_mb: int = 20
    unpacked_mb: int = 100
    files: int = 2000
    build_timeout_s: float = 120.0


@dataclass(frozen=True)
class Organiser:
    """Who may submit and how much: ``registration`` "closed" (the organiser adds authors) or
    "open" (anyone may register a name); versions each author keeps playing at once; uploads an
    author may make in an hour; open registrations one client address may make in an hour."""

    registration: str = "closed"
    active_versions: int = 2
    submissions_per_hour: int = 6
    registrations_per_hour: int = 5


@dataclass(frozen=True)
class LeagueConfig:
    name: str
    seed: int | None  # None: drawn once and kept in the league's store
    folder: Path  # league.sqlite, bots/, records/, logs/
    games: tuple[GamePlan, ...]
    house_bots: tuple[BotSpec, ...] = ()
    sandbox: str | None = None  # "bwrap": bots and builds in bubblewrap; None: as the machine seals
    time_control: TimeControl = TimeControl()
    max_faults: int = 3
    match_time_limit_s: float = DEFAULT_MATCH_TIME_LIMIT_S
    concurrency: int = 1  # deal-sets played at once
    organiser: Organiser = Organiser()
    limits: Limits = Limits()
    source: str = "<league file>"

    @property
    def store_path(self) -> Path:
        return self.folder / "league.sqlite"

    @property
    def bots_dir(self) -> Path:
        return self.folder / "bots"

    @property
    def records_dir(self) -> Path:
        return self.folder / "records"

    @property
    def logs_dir(self) -> Path:
        return self.folder / "logs"

    @property
    def uploads_dir(self) -> Path:
        return self.folder / "uploads"


def load_league(path: str | Path) -> LeagueConfig:
    """Read and check ``path``; ConfigError lists every mistake."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file (expected a league file, LEAGUE.toml)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    return league_from_table(data, source=str(path), base=path.absolute().parent)


def league_from_table(data: dict[str, Any], *, source: str, base: Path) -> LeagueConfig:
    reader = FieldReader(source, base)
    read = reader.read
    reader.only(data, TOP_FIELDS, "")
    name = read(lambda: reader.name("name", data.get("name", "league")), "league")
    seed = (
        read(lambda: reader.integer("seed", data["seed"], minimum=0, maximum=2**63 - 1), 0)
        if data.get("seed") is not None
        else None
    )
    folder = Path(
        read(lambda: reader.place(reader.text("folder", data.get("folder", "league"))), ".")
    )

    def sandbox() -> str | None:
        value = data.get("sandbox")
        if value is None:
            return None
        if value not in SANDBOXES:
            reader.fail("sandbox", value, '"bwrap" or "none"')
        return None if value == "none" else value

    games_raw = data.get("games")
    games: list[GamePlan] = []
    if not isinstance(games_raw, list) or not games_raw:
        reader.note("games", games_raw if games_raw is not None else "nothing", "a [[games]] list")
    else:
        for index, raw in enumerate(games_raw):
            for unused in ("deals", "max_tables"):
                if isinstance(raw, dict) and unused in raw:
                    reader.note(
                        f"games[{index}].{unused}",
                        "a value",
                        "nothing (a league plays deal-sets for as long as it runs)",
                        raw=True,
                    )
            plan = read_game(reader, f"games[{index}]", raw, 1)
            if plan is not None:
                games.append(plan)
    labels = [plan.label for plan in games]
    for label in {label for label in labels if labels.count(label) > 1}:
        reader.note("games", f"the label {label!r} twice", "each game once (give a label)")
    house: list[BotSpec] = []
    bots_raw = data.get("bots", [])
    if not isinstance(bots_raw, list):
        reader.note("bots", bots_raw, "a [[bots]] list of house bots")
    else:
        for index, raw in enumerate(bots_raw):
            found = read_bot(reader, f"bots[{index}]", raw)  # (the league hashes no scope)
            if found is not None:
                house.append(found[1])
    organiser = read(lambda: _organiser(reader, data.get("organiser", {})), Organiser())
    limits = read(lambda: _limits(reader, data.get("limits", {})), Limits())
    config = LeagueConfig(
        name=name,
        seed=seed,
        folder=folder,
        games=tuple(games),
        house_bots=tuple(house),
        sandbox=read(sandbox, None),
        time_control=read(lambda: read_time_control(reader, data.get("time", {})), TimeControl()),
        max_faults=read(
            lambda: reader.integer("max_faults", data.get("max_faults", 3), minimum=1), 3
        ),
        match_time_limit_s=read(
            lambda: reader.number(
                "match_time_limit", data.get("match_time_limit", DEFAULT_MATCH_TIME_LIMIT_S)
            ),
            DEFAULT_MATCH_TIME_LIMIT_S,
        ),
        concurrency=read(
            lambda: reader.integer(
                "concurrency", data.get("concurrency", 1), minimum=1, maximum=64
            ),
            1,
        ),
        organiser=organiser,
        limits=limits,
        source=source,
    )
    reader.done()
    return config


def _organiser(reader: FieldReader, raw: object) -> Organiser:
    table = reader.table("organiser", raw)
    reader.only(table, ORGANISER_FIELDS, "organiser")
    registration = table.get("registration", "closed")
    if registration not in REGISTRATIONS:
        reader.fail("organiser.registration", registration, '"closed" or "open"')
    return Organiser(
        registration=registration,
        active_versions=reader.integer(
            "organiser.active_versions", table.get("active_versions", 2), minimum=1, maximum=100
        ),
        submissions_per_hour=reader.integer(
            "organiser.submissions_per_hour",
            table.get("submissions_per_hour", 6),
            minimum=1,
            maximum=10_000,
        ),
        registrations_per_hour=reader.integer(
            "organiser.registrations_per_hour",
            table.get("registrations_per_hour", Organiser.registrations_per_hour),
            minimum=1,
            maximum=10_000,
        ),
    )


def _limits(reader: FieldReader, raw: object) -> Limits:
    table = reader.table("limits", raw)
    reader.only(table, LIMIT_FIELDS, "limits")
    defaults = Limits()
    return Limits(
        upload_mb=reader.integer(
            "limits.upload_mb", table.get("upload_mb", defaults.upload_mb), minimum=1, maximum=1024
        ),
        unpacked_mb=reader.integer(
            "limits.unpacked_mb",
            table.get("unpacked_mb", defaults.unpacked_mb),
            minimum=1,
            maximum=4096,
        ),
        files=reader.integer(
            "limits.files", table.get("files", defaults.files), minimum=1, maximum=100_000
        ),
        build_timeout_s=reader.number(
            "limits.build_timeout_s", table.get("build_timeout_s", defaults.build_timeout_s)
        ),
    )
