"""The organiser's bots directory: every submitted version of every bot; the tournament's view.

Layout (written only by ``arena submit``)::

    BOTS_DIR/<name>/<hash>/                         one version: the submitted folder, built
    BOTS_DIR/<name>/<hash>/.arena/submission.json   its install record (hash, time, checked or not)
    BOTS_DIR/.staging/                              submit's work space, never read as bots

``<hash>`` is the content hash of the submitted sources (:func:`arena.bots.manifest.content_hash`), so a
changed bot is a new folder beside the old one and an installed version is never overwritten.

A tournament that takes a bots directory plays the **latest** version of each bot: the one
submitted most recently (:func:`tournament_bots`), named ``name@version`` with
``version = "<manifest version>+<hash>"``, so results of different versions are never mixed.
Older versions stay installed beside it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from arena.bots.manifest import HASH_LENGTH, BotFolderError, Manifest, bot_label, load_manifest
from arena.referee.bot_spec import BotSpec

RECORD_PATH = ".arena/submission.json"
STAGING_DIR = ".staging"


class BotsDirError(Exception):
    """A bots directory (or one installed version in it) that cannot be read; names the path."""


@dataclass(frozen=True)
class InstalledBot:
    """One installed version of a bot."""

    manifest: Manifest
    content_hash: str
    submitted_at: str  # ISO 8601 UTC, for people
    submitted_ns: int  # nanoseconds since the epoch: orders versions of a name
    checked: bool  # False when submitted with --skip-check

    @property
    def folder(self) -> Path:
        return self.manifest.folder

    @property
    def spec(self) -> BotSpec:
        return self.manifest.bot_spec(self.content_hash)


def version_folder(bots_dir: Path | str, name: str, content_hash: str) -> Path:
    return Path(bots_dir) / name / content_hash


def write_record(folder: Path, *, content_hash: str, checked: bool) -> None:
    """Write the install record into a staged version folder (submit: just before the move)."""
    now_ns = time.time_ns()
    submitted_at = datetime.fromtimestamp(now_ns / 1e9, UTC)
    record = {
        "content_hash": content_hash,
        "checked": checked,
        "submitted_ns": now_ns,
        "submitted_at": submitted_at.isoformat(timespec="seconds"),
    }
    path = folder / RECORD_PATH
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def read_installed(folder: Path | str) -> InstalledBot:
    """The installed version in ``folder`` (``BOTS_DIR/<name>/<hash>``); BotsDirError if damaged."""
    folder = Path(folder).absolute()
    record_path = folder / RECORD_PATH
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BotsDirError(
            f"{record_path}: missing (expected the install record `arena submit` writes)"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BotsDirError(f"{record_path}: unreadable install record: {error}") from None
    if not isinstance(record, dict):
        raise BotsDirError(f"{record_path}: found {type(record).__name__}; expected a JSON object")

    def field(key: str, kinds: tuple[type, ...], expected: str) -> Any:
        value = record.get(key)
        # bool is an int in Python: accept it only where a boolean is expected
        if not isinstance(value, kinds) or isinstance(value, bool) != (bool in kinds):
            raise BotsDirError(f"{record_path}: {key}: found {value!r}; expected {expected}")
        return value

    content_hash = field("content_hash", (str,), f"{folder.name!r} (the folder's name)")
    if content_hash != folder.name or len(content_hash) != HASH_LENGTH:
        raise BotsDirError(
            f"{record_path}: content_hash: found {content_hash!r}; expected "
            f"{folder.name!r} (the folder's name, {HASH_LENGTH} hex digits)"
        )
    submitted_ns = field("submitted_ns", (int,), "an integer")
    submitted_at = field("submitted_at", (str,), "a date and time")
    checked = field("checked", (bool,), "true or false")
    try:
        manifest = load_manifest(folder)
    except BotFolderError as error:
        raise BotsDirError(str(error)) from None
    if manifest.name != folder.parent.name:
        raise BotsDirError(
            f"{manifest.path}: name: found {manifest.name!r}; expected "
            f"{folder.parent.name!r} (the folder it is installed under)"
        )
    return InstalledBot(manifest, content_hash, submitted_at, submitted_ns, checked)


def installed_versions(bots_dir: Path | str) -> dict[str, list[InstalledBot]]:
    """Every installed version, by bot name (sorted), oldest submission first.

    Entries starting with '.' (the staging area) and plain files are ignored; a damaged version
    raises BotsDirError rather than silently dropping a bot from a tournament.
    """
    bots_dir = Path(bots_dir)
    if not bots_dir.is_dir():
        raise BotsDirError(
            f"{bots_dir}: not a folder (expected a bots directory written by `arena submit`)"
        )
    versions: dict[str, list[InstalledBot]] = {}
    try:
        for name_dir in sorted(_folders(bots_dir)):
            found = [read_installed(child) for child in sorted(_folders(name_dir))]
            if found:
                found.sort(key=lambda bot: (bot.submitted_ns, bot.content_hash))
                versions[name_dir.name] = found
    except OSError as error:
        raise BotsDirError(f"{error.filename}: cannot be read: {error.strerror}") from None
    return versions


def _folders(parent: Path) -> list[Path]:
    """Sub-folders, without hidden ones (the staging area); plain files are the organiser's notes."""
    return [
        child for child in parent.iterdir() if child.is_dir() and not child.name.startswith(".")
    ]


def tournament_bots(bots_dir: Path | str) -> list[BotSpec]:
    """What a tournament's ``bots_dir = "..."`` adds: the latest version of each bot, by name.

    Each is named ``name@version`` (:func:`arena.bots.manifest.bot_label`), so standings and results
    files, which key on the name, never mix two versions of a bot. BotsDirError names what is wrong.
    """
    return [
        replace(versions[-1].spec, name=bot_label(versions[-1].spec))
        for versions in installed_versions(bots_dir).values()
    ]
