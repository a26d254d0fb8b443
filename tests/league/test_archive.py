"""The safe unpacking of an uploaded archive, case by case (the server's answers to the same
archives: test_uploads.py)."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from arena.league.archive import ArchiveError, ArchiveLimits, unpack_archive
from tests.league.conftest import bot_files, targz

LIMITS = ArchiveLimits(max_bytes=1 << 20, max_files=20)


def test_a_tar_gz_with_one_top_folder_unpacks_to_it(tmp_path: Path) -> None:
    data = targz({f"mybot/{name}": content for name, content in bot_files().items()})
    folder = unpack_archive(data, tmp_path / "in", LIMITS)
    assert folder == tmp_path / "in" / "mybot"
    assert (folder / "bot.toml").is_file()
    assert (folder / "random_bot.py").stat().st_mode & 0o100


def test_a_zip_unpacks_and_keeps_the_executable_bit(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in bot_files().items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o755 if name.endswith(".py") else 0o644) << 16
            archive.writestr(info, content)
    folder = unpack_archive(buffer.getvalue(), tmp_path / "in", LIMITS)
    assert (folder / "random_bot.py").stat().st_mode & 0o100
    assert not (folder / "bot.toml").stat().st_mode & 0o100


def test_a_hard_link_is_refused(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo("bot.toml")
        info.type = tarfile.LNKTYPE
        info.linkname = "/etc/passwd"
        archive.addfile(info)
    with pytest.raises(ArchiveError, match="a link"):
        unpack_archive(buffer.getvalue(), tmp_path / "in", LIMITS)
    assert not (tmp_path / "in" / "bot.toml").exists()


def test_a_zip_whose_header_lies_about_its_size_is_cut_at_the_limit(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bot.toml", "")
        archive.writestr("zeros", bytes(3 << 20))
    data = bytearray(buffer.getvalue())
    # shrink the declared size in the central directory to 10 bytes
    at = data.rfind(b"PK\x01\x02")
    while at >= 0:
        name_length = int.from_bytes(data[at + 28 : at + 30], "little")
        if data[at + 46 : at + 46 + name_length] == b"zeros":
            data[at + 24 : at + 28] = (10).to_bytes(4, "little")
        at = data.rfind(b"PK\x01\x02", 0, at)
    with pytest.raises(ArchiveError):
        unpack_archive(bytes(data), tmp_path / "in", LIMITS)
    zeros = tmp_path / "in" / "zeros"
    assert not zeros.exists() or zeros.stat().st_size <= (1 << 20) + 65536
