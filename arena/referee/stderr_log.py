"""A bot process's standard error log, bounded, and never a reason for the arena to stop.

Each process of a bot writes ``<log dir>/<bot>-<pid>.stderr.log`` (0600), opened at its first
stderr byte. Two bounds (SPEC.md section 7): a process's log holds at most ``PROCESS_CAP_BYTES``
of its stderr, and all the logs of one bot in one log folder at most ``BOT_CAP_BYTES``, over
every process of it, in every arena process writing there (worker processes too): a crashing
bot restarted for every match cannot fill the disk. The bytes a bot's logs hold are kept in
``<log dir>/<bot>.stderr-total``, read and updated under an exclusive lock when a log is
opened (a share is reserved) and closed (the unused part given back).

A log that cannot be written (a full disk, a folder removed) stops being written; the draining
goes on and the arena says so once per process on its standard error, naming the folder.
"""

from __future__ import annotations

import errno
import fcntl
import os
import sys
import time
from pathlib import Path

PROCESS_CAP_BYTES = 1 << 20  # of one process's stderr, in its log
BOT_CAP_BYTES = 16 << 20  # of all a bot's logs in one log folder
NOTE_ROOM = 256  # reserved in each log for its closing note
LEDGER_SUFFIX = ".stderr-total"
LOCK_TRIES = 50  # the ledger's lock is tried this often, LOCK_WAIT_S apart, then logging stops
LOCK_WAIT_S = 0.002
_said: set[str] = set()  # the folders whose trouble this process has reported


def say_once(folder: Path, error: OSError) -> None:
    """Tell the organiser, once per folder and process, that logs there are no longer written."""
    key = str(folder)
    if key in _said:
        return
    _said.add(key)
    why = error.strerror or str(error)
    try:
        sys.stderr.write(
            f"arena: bot stderr logs in {folder} are no longer written ({why}); "
            "the matches go on without them\n"
        )
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def open_log(path: Path) -> int:
    """Open a new log for appending, readable by the arena's user only (a seam for tests)."""
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)


class Ledger:
    """The bytes a bot's logs hold in one folder, shared by every process writing there."""

    def __init__(self, path: Path, cap: int | None = None) -> None:
        self.path = path
        self.cap = BOT_CAP_BYTES if cap is None else cap

    def _update(self, change) -> int:
        """Apply ``change(used) -> (new used, result)`` under the lock; returns the result.
        OSError when the ledger cannot be read or written (BlockingIOError: held too long)."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            for _ in range(LOCK_TRIES):
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    time.sleep(LOCK_WAIT_S)  # another process's update: microseconds
            else:
                raise BlockingIOError(errno.EWOULDBLOCK, "its ledger stayed locked")
            text = os.pread(fd, 32, 0).strip()
            used = int(text) if text.isdigit() else 0
            new, result = change(used)
            data = str(new).encode()
            os.pwrite(fd, data.ljust(20), 0)
            return result
        finally:
            os.close(fd)  # (drops the lock)

    def reserve(self, wanted: int) -> int:
        """Up to ``wanted`` bytes of what is left under the cap, reserved now."""
        return self._update(lambda used: _grant(used, wanted, self.cap))

    def give_back(self, unused: int) -> None:
        if unused > 0:
            self._update(lambda used: (max(0, used - unused), 0))


def _grant(used: int, wanted: int, cap: int) -> tuple[int, int]:
    granted = max(0, min(wanted, cap - used))
    return used + granted, granted


class StderrLog:
    """One process's log: ``write`` what the bot wrote (and the markers before it), ``close``
    at the end. Never raises."""

    def __init__(self, path: Path, bot_key: str, *, process_cap: int | None = None) -> None:
        self.path = path
        self.ledger = Ledger(path.parent / f"{bot_key}{LEDGER_SUFFIX}")
        self.process_cap = PROCESS_CAP_BYTES if process_cap is None else process_cap
        self._fd: int | None = None
        self._opened = False  # tried to open it (once: a failure is not retried)
        self._room = 0  # bytes of stderr (and markers) it may still take
        self._granted = 0
        self._written = 0
        self.dropped = 0  # stderr bytes not written (over a bound, or not writable)
        self._bot_bound = False  # the bot's logs reached BOT_CAP_BYTES

    def _open(self) -> None:
        self._opened = True
        wanted = self.process_cap + NOTE_ROOM
        try:
            self._granted = self.ledger.reserve(wanted)
            self._bot_bound = self._granted < wanted
            if self._granted <= NOTE_ROOM:
                self.ledger.give_back(self._granted)
                self._granted = 0
                return  # nothing left for this bot here: no file at all
            self._fd = open_log(self.path)
        except OSError as error:
            self._fail(error)
            return
        self._room = self._granted - NOTE_ROOM

    def _fail(self, error: OSError) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None
        self._room = 0
        say_once(self.path.parent, error)

    def write(self, chunk: bytes, marker: bytes = b"") -> None:
        """Append ``marker`` (only if there is room for some of ``chunk`` too) and ``chunk``,
        as far as the bounds allow."""
        if not self._opened:
            self._open()
        if self._fd is None or self._room <= len(marker):
            self.dropped += len(chunk)
            return
        data = marker + chunk[: self._room - len(marker)]
        self.dropped += len(marker) + len(chunk) - len(data)
        try:
            written = 0
            while written < len(data):
                written += os.write(self._fd, data[written:])
        except OSError as error:
            self._written += written
            self._fail(error)
            return
        self._written += len(data)
        self._room -= len(data)

    def close(self) -> None:
        """Write the closing note if stderr was dropped, close, give back the unused share."""
        fd, self._fd = self._fd, None
        if fd is not None:
            if self.dropped:
                why = (
                    f"this bot's stderr logs in this folder reached {self.ledger.cap} bytes"
                    if self._bot_bound
                    else f"stderr capped at {self.process_cap} bytes"
                )
                note = f"\n[arena: {why}; {self.dropped} more bytes dropped]\n".encode()
                try:
                    os.write(fd, note[:NOTE_ROOM])
                    self._written += min(len(note), NOTE_ROOM)
                except OSError as error:
                    say_once(self.path.parent, error)
            try:
                os.close(fd)
            except OSError:
                pass
        if self._granted:
            try:
                self.ledger.give_back(self._granted - self._written)
            except OSError as error:
                say_once(self.path.parent, error)
            self._granted = 0
