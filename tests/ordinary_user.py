"""Running the arena as an ordinary user in a test, from a suite run as root (as CI runs it).

The account is ``arena-tester``, made by the test that first needs it (``useradd``, as root)
and kept. A suite run by an ordinary user runs such tests as itself.

Root's Python often lives where no other user may enter (pyenv under ``/root``): the child is
started in a mount namespace of its own where each folder the arena needs (this Python, its
virtual environment, this checkout) is reachable. Outside that namespace nothing changes.
"""

from __future__ import annotations

import ctypes
import functools
import os
import pwd
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

TEST_USER = "arena-tester"
ROOT = Path(__file__).resolve().parents[1]
CLONE_NEWNS = 0x00020000
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 0x40000
O_PATH = getattr(os, "O_PATH", 0o10000000)


@functools.cache
def ordinary_user() -> tuple[int, int] | str | None:
    """(uid, gid) of the account to run as; None: this suite runs as an ordinary user already
    (run as yourself); a string: why there is none."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(TEST_USER)
    except KeyError:
        made = subprocess.run(
            [
                "useradd",
                "--system",
                "--user-group",
                "--no-create-home",
                "--home-dir",
                "/nonexistent",
                "--shell",
                "/usr/sbin/nologin",
                TEST_USER,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        try:
            entry = pwd.getpwnam(TEST_USER)  # (made by this call or by a parallel one)
        except KeyError:
            said = (made.stderr or made.stdout).strip().splitlines()
            return f"cannot make the account {TEST_USER}: " + (said[-1] if said else "useradd")
    return entry.pw_uid, entry.pw_gid


def _blocked(path: Path) -> Path | None:
    """The topmost folder above ``path`` that other users may not pass through, if any."""
    for folder in reversed(path.parents):
        if folder != Path("/") and not os.stat(folder).st_mode & 0o001:
            return folder
    return None


def _needed() -> list[Path]:
    return [Path(p).resolve() for p in (sys.base_prefix, sys.prefix, ROOT)]


def as_user(account: tuple[int, int] | None) -> Callable[[], None] | None:
    """A preexec_fn that makes the folders the arena needs reachable by other users (in a
    mount namespace of the child's own: root's bots, of users of their own, find them too),
    then becomes ``account`` if given. None when there is nothing to do."""
    if os.geteuid() != 0:
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    blocked = [(path, top) for path in _needed() if (top := _blocked(path)) is not None]

    def check(result: int, step: str) -> None:
        if result != 0:
            raise OSError(ctypes.get_errno(), step)

    def preexec() -> None:
        if blocked:
            check(libc.unshare(CLONE_NEWNS), "unshare")
            check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "private /")
            kept = [(path, os.open(path, O_PATH)) for path, _ in blocked]
            for top in dict.fromkeys(top for _, top in blocked):
                check(libc.mount(b"tmpfs", bytes(top), b"tmpfs", 0, b"mode=755"), str(top))
            for path, fd in kept:
                os.makedirs(path, exist_ok=True)
                source = f"/proc/self/fd/{fd}".encode()
                check(libc.mount(source, bytes(path), None, MS_BIND | MS_REC, None), str(path))
        if account is not None:
            os.setgroups([])
            os.setgid(account[1])
            os.setuid(account[0])

    return preexec


def run_arena(
    args: Sequence[str],
    account: tuple[int, int] | None,
    *,
    env: dict[str, str],
    cwd: Path,
    timeout: float,
) -> subprocess.CompletedProcess:
    """``python -m arena ARGS`` as ``account`` (None: as this process's user)."""
    return subprocess.run(
        [sys.executable, "-m", "arena", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=as_user(account),
        check=False,
    )
