"""Bots that travel: a bot's folder packed once, shipped, checked against its hash, unpacked.

A cluster worker need not share a file system with the ``arena`` process. Every bot with a
``cwd`` (a tournament bot with ``cwd = ...``, or a submitted bot, whose ``cwd`` is its installed
folder) is packed into a tar archive of its folder's entries
(:func:`arena.bots.manifest.folder_entries`: version-control folders and caches left out,
symlinks kept as links and only inside the folder). The archive is built the same way every
time from the same contents (sorted entries, fixed owner, modes and modification times kept), so
its SHA-256 is a content hash: the key of the worker's cache, ``<cache>/<sha256>/``.

On a worker, :func:`unpack` checks the bytes against the hash before anything is written,
unpacks into a temporary folder beside the cache entry and renames it into place, so an entry is
complete or absent, and workers sharing a cache never see half of one. The bot's ``cwd`` is then
the cache entry, and every argument or environment value naming a path inside the original folder
names the same path inside the entry (:func:`relocate`).

Bots without a ``cwd`` are not packed: their programs must exist on the workers (a worker that
lacks one reports it as a startup fault naming the worker).
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from arena.bots.manifest import BotFolderError, folder_entries
from arena.referee.bot_spec import BotSpec

CACHE_VARIABLE = "TRICK_ARENA_CACHE"  # the worker's bot cache folder, if not the default
MAX_PACKED_BYTES = 256 * 1024 * 1024  # a bot folder bigger than this is a mistake, not a bot
COMPLETE_MARK = ".arena-unpacked"  # written last into a cache entry's temporary folder


class PackError(Exception):
    """A bot folder that cannot be packed or an archive that cannot be unpacked (one line)."""


@dataclass(frozen=True)
class Package:
    """One packed folder: its archive, the archive's SHA-256, and where it came from."""

    sha256: str
    data: bytes
    folder: str  # the absolute folder on the arena's machine


@dataclass(frozen=True)
class Shipment:
    """What a worker needs to run one bot: the spec as the tournament has it, and the package of
    its folder (``None``: the bot is run as it is, its programs found on the worker)."""

    spec: BotSpec
    package: str | None = None  # the package's sha256
    folder: str | None = None  # the original absolute folder its paths are relative to


def pack_folder(folder: Path | str, *, leave_out: Sequence[Path] = ()) -> Package:
    """The archive of ``folder``'s entries, without anything under ``leave_out`` (e.g. the
    tournament's own output folder, when it lies inside a bot's ``cwd``)."""
    root = Path(folder).absolute()
    skipped = []
    for path in leave_out:
        try:
            skipped.append(Path(path).absolute().relative_to(root).as_posix())
        except ValueError:
            continue  # not inside this folder
    try:
        entries = folder_entries(root)
    except BotFolderError as exc:
        raise PackError(str(exc)) from None
    buffer = io.BytesIO()
    size = 0
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for entry in entries:
            if any(entry.path == s or entry.path.startswith(s + "/") for s in skipped):
                continue
            path = root / entry.path
            try:
                info = archive.gettarinfo(str(path), arcname=entry.path)
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                if info.isfile():
                    size += info.size
                    if size > MAX_PACKED_BYTES:
                        raise PackError(
                            f"{root}: holds more than {MAX_PACKED_BYTES >> 20} MB to ship to "
                            "the cluster (expected a bot folder: give the bot a cwd holding "
                            "only what it needs)"
                        )
                    with open(path, "rb") as file:
                        archive.addfile(info, file)
                else:
                    archive.addfile(info)
            except OSError as exc:
                raise PackError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    data = buffer.getvalue()
    return Package(hashlib.sha256(data).hexdigest(), data, str(root))


def pack_bots(
    specs: Iterable[BotSpec], *, leave_out: Sequence[Path] = ()
) -> tuple[list[Shipment], dict[str, Package]]:
    """A shipment per bot and the packages they need, each folder packed once (four bots sharing
    ``cwd = "."`` make one package). PackError names the bot."""
    by_folder: dict[str, Package] = {}
    shipments = []
    for spec in specs:
        if spec.cwd is None:
            shipments.append(Shipment(spec))
            continue
        folder = str(Path(spec.cwd).absolute())
        if folder not in by_folder:
            try:
                by_folder[folder] = pack_folder(folder, leave_out=leave_out)
            except PackError as exc:
                raise PackError(f"bot {spec.name}: {exc}") from None
        shipments.append(Shipment(spec, by_folder[folder].sha256, folder))
    return shipments, {p.sha256: p for p in by_folder.values()}


def unpack(cache: Path, sha256: str, data: bytes) -> Path:
    """The cache entry of a package, unpacked from ``data`` unless it is there already; the bytes
    must hash to ``sha256`` (PackError otherwise, and nothing is written)."""
    entry = cache / sha256
    if (entry / COMPLETE_MARK).is_file():
        return entry
    actual = hashlib.sha256(data).hexdigest()
    if actual != sha256:
        raise PackError(
            f"bot package {sha256[:12]}: the bytes received hash to {actual[:12]} "
            "(expected the package's own hash; damaged on the way)"
        )
    cache.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        passable_by_bots(cache)
    staging = Path(tempfile.mkdtemp(prefix=f".{sha256[:12]}-", dir=cache))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r") as archive:
            archive.extractall(staging, filter="tar")  # no absolute paths, no escapes
        if os.geteuid() == 0:
            readable_by_bots(staging)
        (staging / COMPLETE_MARK).write_text(sha256 + "\n")
        try:
            os.rename(staging, entry)
        except OSError:
            if not (entry / COMPLETE_MARK).is_file():  # not another worker's complete copy
                raise
    except (OSError, tarfile.TarError) as exc:
        raise PackError(f"bot package {sha256[:12]}: cannot unpack into {cache}: {exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return entry


def passable_by_bots(cache: Path) -> None:
    """As root, bots run as users of their own (SPEC.md section 7): they must pass through the
    cache to their entry (its parents too: root's default is /var/cache/trick-arena/bots), but
    may not list it (0711) to find other entries."""
    os.chmod(cache, 0o711)


def readable_by_bots(folder: Path) -> None:
    """An unpacked folder readable (and its programs runnable) by the bot's own user, which
    root's workers switch to, and writable by root alone."""
    for root, _, files in os.walk(folder):
        os.chmod(root, 0o755)
        for name in files:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                mode = os.stat(path).st_mode & 0o777
                os.chmod(path, 0o644 | (0o111 if mode & 0o100 else 0))


def relocate(shipment: Shipment, entry: Path | None) -> BotSpec:
    """The shipment's spec running from cache entry ``entry``: its cwd, and every argument and
    environment value naming a path inside the original folder, moved there."""
    spec = shipment.spec
    if entry is None or shipment.folder is None:
        return spec
    old = shipment.folder.rstrip("/")
    new = str(entry)

    def moved(value: str) -> str:
        if value == old:
            return new
        if value.startswith(old + "/"):
            return new + value[len(old) :]
        return value.replace(f":{old}/", f":{new}/").replace(f"={old}/", f"={new}/")

    return replace(
        spec,
        cwd=new,
        argv=tuple(moved(a) for a in spec.argv),
        env=tuple((k, moved(v)) for k, v in spec.env),
    )
