"""A real league for the tests: ``arena league serve`` in a process of its own, three house bots
(the Python sample), a league file written per test, and plain HTTP to talk to it."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
import tarfile
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.league.store import LeagueStore
from arena.web.access import SECRET_ENV
from tests.waiting import WAIT_S
from tests.web.conftest import ROOT, arena_env

ORGANISER = "the-organisers-secret-of-the-league-tests"
RANDOM_BOT = ROOT / "sample_bots" / "python"


def league_toml(folder: Path, *, extra: str = "", house: int = 3) -> Path:
    bots = "".join(
        f"""
[[bots]]
name = "house{i}"
argv = ["{sys.executable}", "{RANDOM_BOT / "random_bot.py"}", "{i}"]
"""
        for i in range(1, house + 1)
    )
    path = folder / "league.toml"
    path.write_text(
        f"""
name = "testleague"
folder = "data"
match_time_limit = 120
{extra}
[time]
decision_ms = 2000
startup_ms = 20000

[[games]]
game = "eight-rounds"
players = 3
{bots}"""
    )
    return path


def arena(
    *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args],
        cwd=cwd,
        env={**arena_env(), **(env or {})},
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )


def add_author(toml: Path, name: str) -> str:
    done = arena("league", "author", "add", name, "--league", str(toml))
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@dataclass
class Server:
    url: str
    process: subprocess.Popen[str]
    toml: Path

    def get(self, path: str, token: str | None = None) -> tuple[int, Any]:
        return http(self.url + path.lstrip("/"), token=token)

    def post(
        self,
        path: str,
        body: bytes,
        token: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        return http(self.url + path.lstrip("/"), body, token=token, headers=headers)


def http(
    url: str,
    body: bytes | None = None,
    *,
    token: str | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    sent = dict(headers or {})
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        url, data=body, headers=sent, method="POST" if body is not None else "GET"
    )
    try:
        with urllib.request.urlopen(request, timeout=WAIT_S) as response:
            raw = response.read()
            status = response.status
    except urllib.error.HTTPError as error:
        raw = error.read()
        status = error.code
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode(errors="replace")


@contextlib.contextmanager
def serving(toml: Path, *options: str) -> Iterator[Server]:
    """``arena league serve TOML [OPTIONS]`` on a free port; killed (SIGKILL) when the block
    ends."""
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "league", "serve", str(toml), "--port", "0", *options],
        cwd=ROOT,
        env={**arena_env(), SECRET_ENV: ORGANISER},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = None
        seen = []
        for line in process.stdout:
            seen.append(line)
            found = re.search(r"league \S+ at (http://\S+)", line)
            if found:
                url = found[1]
                break
        assert url, "arena league serve printed no URL:\n" + "".join(seen)
        threading.Thread(target=process.stdout.read, daemon=True).start()
        yield Server(url, process, toml)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def open_store(toml: Path) -> LeagueStore:
    return LeagueStore.open(toml.parent / "data" / "league.sqlite", name="testleague")


def stored_rows(toml: Path) -> list[tuple[int, int, str]]:
    store = open_store(toml)
    try:
        return list(store.iter_match_rows())
    finally:
        store.close()


def targz(files: dict[str, bytes | str], *, links: dict[str, str] | None = None) -> bytes:
    """A tar.gz of ``files`` (name -> content) and symbolic ``links`` (name -> target)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755 if name.endswith((".py", ".sh")) else 0o644
            archive.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            archive.addfile(info)
    return buffer.getvalue()


def bot_files(name: str = "mybot", *, build: str | None = None) -> dict[str, bytes | str]:
    """The Python sample bot under another name (and a build command, if given)."""
    manifest = (
        f'name = "{name}"\nauthor = "Test"\nversion = "1.0"\nrun = ["python3", "random_bot.py"]\n'
    )
    if build is not None:
        manifest += f"build = {json.dumps(build)}\nbuild_timeout_s = 30\n"
    return {
        "bot.toml": manifest,
        "random_bot.py": (RANDOM_BOT / "random_bot.py").read_bytes(),
    }
