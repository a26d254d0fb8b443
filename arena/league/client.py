"""``arena submit FOLDER --to URL --token T``: pack a bot folder and upload it to a league.

The folder is packed as ``arena submit`` would copy it (:func:`arena.bots.manifest.folder_entries`:
version-control folders and caches left out) into a tar.gz, checked against ``bot.toml`` first,
and sent to ``URL/api/submit`` with the author's token as a bearer token.
"""

from __future__ import annotations

import io
import json
import tarfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.bots.manifest import BotFolderError, folder_entries, load_manifest

UPLOAD_TIMEOUT_S = 1800.0  # the league builds and checks before it answers


class UploadError(Exception):
    """The upload could not be made or was refused; one line (or the league's log) saying why."""


@dataclass(frozen=True)
class Uploaded:
    accepted: bool
    version: dict[str, Any]  # as the league shows it to its author (label, status, log, ...)


def is_league_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def submit_url(url: str) -> str:
    return url if url.rstrip("/").endswith("/api/submit") else url.rstrip("/") + "/api/submit"


def pack(folder: Path) -> bytes:
    """The tar.gz of the bot folder's entries; BotFolderError for a link (a league takes plain
    files and folders only) or a folder that is no bot."""
    load_manifest(folder)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for entry in folder_entries(folder):
            if entry.kind == "link":
                raise BotFolderError(
                    f"{folder / entry.path}: a symbolic link (a league takes plain files and "
                    "folders only: copy the file it points to)"
                )
            info = archive.gettarinfo(str(folder / entry.path), arcname=entry.path)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if info.isfile():
                with open(folder / entry.path, "rb") as file:
                    archive.addfile(info, file)
            else:
                archive.addfile(info)
    return buffer.getvalue()


def upload(folder: Path, url: str, token: str) -> Uploaded:
    data = pack(folder)
    request = urllib.request.Request(
        submit_url(url),
        data=data,
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/gzip"},
    )
    try:
        with urllib.request.urlopen(request, timeout=UPLOAD_TIMEOUT_S) as response:
            return Uploaded(True, json.loads(response.read()))
    except urllib.error.HTTPError as error:
        body = error.read()
        try:
            answer = json.loads(body)
        except ValueError:
            answer = {"error": body.decode(errors="replace")[:300]}
        if error.code == 422 and isinstance(answer, dict) and "label" in answer:
            return Uploaded(False, answer)
        raise UploadError(f"{url}: refused ({error.code}): {answer.get('error', answer)}") from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise UploadError(f"{url}: cannot upload: {reason}") from None
