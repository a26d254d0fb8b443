"""An uploaded bot archive (tar.gz or zip holding a bot folder), unpacked safely.

Refused, with one line saying why, before anything is written: an archive of another kind, a
name that is absolute or climbs out (``..``), a symbolic or hard link, a device or pipe, more
files than the league allows, more unpacked bytes than it allows (sizes as declared, and the
bytes actually written are counted too, so a lying zip header gains nothing), and an archive
without ``bot.toml`` at its top or in its one top folder.
"""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"
MANIFEST = "bot.toml"
CHUNK = 64 * 1024


class ArchiveError(Exception):
    """An archive refused; the message is one line naming what is wrong and what was expected."""


@dataclass(frozen=True)
class ArchiveLimits:
    max_bytes: int  # unpacked, all files together
    max_files: int  # entries (files and folders)


def unpack_archive(data: bytes, into: Path, limits: ArchiveLimits) -> Path:
    """Unpack ``data`` into the empty folder ``into``; the bot folder inside it (the one holding
    ``bot.toml``). ArchiveError when refused; ``into`` may then hold a part, for the caller to
    remove."""
    if data.startswith(GZIP_MAGIC):
        _unpack_tar(data, into, limits)
    elif data.startswith(ZIP_MAGIC):
        _unpack_zip(data, into, limits)
    else:
        raise ArchiveError(
            "the upload is not a tar.gz or zip archive (expected a bot folder packed with "
            "`tar czf bot.tar.gz FOLDER` or zip)"
        )
    return _bot_folder(into)


def _checked_name(name: str) -> str:
    path = PurePosixPath(name)
    if path.is_absolute():
        raise ArchiveError(f"{name!r}: an absolute path (expected paths inside the bot folder)")
    if any(part == ".." for part in path.parts) or "\\" in name or "\0" in name:
        raise ArchiveError(f"{name!r}: a path leaving the bot folder (expected no '..')")
    return name


def _count(files: int, size: int, limits: ArchiveLimits) -> None:
    if files > limits.max_files:
        raise ArchiveError(
            f"more than {limits.max_files} files (the league's limits.files; expected a bot "
            "folder, not a whole project)"
        )
    if size > limits.max_bytes:
        raise ArchiveError(
            f"unpacks to more than {limits.max_bytes >> 20} MB (the league's limits.unpacked_mb)"
        )


def _unpack_tar(data: bytes, into: Path, limits: ArchiveLimits) -> None:
    files = size = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            members = []
            for member in archive:  # one at a time: a bomb of headers is cut at the count
                files += 1
                _count(files, size + member.size, limits)
                name = _checked_name(member.name)
                if member.issym() or member.islnk():
                    raise ArchiveError(
                        f"{name!r}: a link (expected plain files and folders: a link could "
                        "point out of the bot folder)"
                    )
                if not (member.isfile() or member.isdir()):
                    raise ArchiveError(f"{name!r}: a device or pipe (expected files and folders)")
                size += member.size
                members.append(member)
            archive.extractall(into, members=members, filter="data")
    except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
        if isinstance(exc, ArchiveError):
            raise
        raise ArchiveError(f"a damaged tar.gz archive ({exc})") from None


def _unpack_zip(data: bytes, into: Path, limits: ArchiveLimits) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = archive.infolist()
            _count(len(entries), sum(entry.file_size for entry in entries), limits)
            for entry in entries:
                _checked_name(entry.filename)
                mode = entry.external_attr >> 16
                if stat.S_ISLNK(mode):
                    raise ArchiveError(
                        f"{entry.filename!r}: a link (expected plain files and folders: a link "
                        "could point out of the bot folder)"
                    )
            written = 0
            for entry in entries:
                target = into / entry.filename
                if entry.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(entry) as source, open(target, "wb") as out:
                    # count what is written, not what the header says (a zip bomb lies)
                    while chunk := source.read(CHUNK):
                        written += len(chunk)
                        _count(0, written, limits)
                        out.write(chunk)
                mode = (entry.external_attr >> 16) & 0o777
                target.chmod(0o755 if mode & 0o100 else 0o644)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError) as exc:
        raise ArchiveError(f"a damaged zip archive ({exc})") from None
    except NotImplementedError as exc:
        raise ArchiveError(f"a zip archive this server cannot read ({exc})") from None


def _bot_folder(into: Path) -> Path:
    if (into / MANIFEST).is_file():
        return into
    tops = list(into.iterdir())
    if len(tops) == 1 and tops[0].is_dir() and (tops[0] / MANIFEST).is_file():
        return tops[0]
    raise ArchiveError(
        f"no {MANIFEST} at the archive's top or in its one top folder (expected a bot folder "
        "as `arena submit` takes)"
    )
