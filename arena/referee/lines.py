"""A bounded line reader: trio streams have no readline, and a bot's output is not to be trusted.

``LineReader.read_line()`` returns one line (without its ``\\n``) or None at end of file. A line
longer than ``max_line_bytes`` raises :class:`LineTooLong` as soon as the cap is passed; the rest of
that line is then skipped by later reads without being kept, so an endless line costs a bounded
amount of memory. Cancelling a read loses nothing: bytes already received stay buffered.
``buffered_line()`` returns the next line only if a read already brought all of it (None
otherwise, and it reads nothing): what a bot wrote in bulk is taken without a coroutine per line.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

DEFAULT_MAX_LINE_BYTES = 1 << 20
CHUNK_BYTES = 1 << 16
# A read of at most this many bytes makes its bytes object with Python's small-object allocator
# (objects up to 512 bytes, the header included): a 64 KiB one costs about 700 instructions
# more (malloc, then the shrink to what came). What a line the usual reply needs, with room.
SHORT_READ_BYTES = 448
NEWLINE = ord("\n")


class LineTooLong(Exception):
    def __init__(self, limit: int, head: bytes) -> None:
        self.limit = limit
        self.head = head  # the first bytes of the line, for the fault message
        super().__init__(f"line longer than {limit} bytes")


class LineReader:
    """Reads lines from ``receive_some(max_bytes)`` (which returns b"" at end of file)."""

    def __init__(
        self,
        receive_some: Callable[[int], Awaitable[bytes]],
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        receive_now: Callable[[int, float, Any], bytes | None] | None = None,
    ) -> None:
        self._receive_some = receive_some
        self._receive_now = receive_now  # what has come already, or None (see line_now)
        self.max_line_bytes = max_line_bytes
        self._buffer = bytearray()
        self._scanned = 0  # bytes of _buffer already known to hold no newline
        # The whole lines at the start of _buffer, split off at once and handed out one by one
        # (last first: pop()), and where they end in it. They stay in _buffer until the last is
        # handed out, so _buffer is never empty while one is left (what line_now looks at).
        self._lines: list[bytes] = []
        self._lines_end = 0
        self._skipping = False  # inside an over-long line: drop bytes up to its newline
        self.at_eof = False

    def line_now(
        self, until: float = math.inf, max_bytes: int = CHUNK_BYTES, task: Any = None
    ) -> bytes | None:
        """The next line if it is at hand without waiting (``receive_now`` brought exactly one
        whole line, reading at most ``max_bytes``; it may wait up to ``until``, in
        time.perf_counter()'s time), else None: then ``await read_line()``, which keeps what was
        read. Saves the usual reply two coroutines. ``task``: the trio task reading, when the
        caller knows it (passed on to ``receive_now``; None: it finds it)."""
        receive_now = self._receive_now
        if receive_now is None or self._buffer or self._skipping or self.at_eof:
            return None
        chunk = receive_now(max_bytes, until, task)
        if chunk:
            line = chunk[:-1]
            # One whole line: a newline at the end and none before. (Tested thus, not with
            # chunk.find(b"\n"): a byte's index and `in` cost about half of that method call.)
            if chunk[-1] == NEWLINE and NEWLINE not in line and len(chunk) <= self.max_line_bytes:
                return line
            self._buffer += chunk
        elif chunk is not None:
            self.at_eof = True  # read_line() then answers None
        return None

    def buffered_line(self) -> bytes | None:
        """The next line if a whole one is buffered already (nothing is read), else None; raises
        LineTooLong as read_line() does. A reader of many lines takes them thus without a
        coroutine each (``await read_line()`` when this gives None)."""
        lines = self._lines
        while True:
            if not lines:
                buffer = self._buffer
                end = buffer.rfind(b"\n", self._scanned)
                if end < 0:
                    self._scanned = len(buffer)
                    return None
                # Every whole line at once: one split costs far less than a slice (and a shift
                # of the rest) per line, which a bot writing many short lines would make us pay.
                lines.extend(bytes(buffer[:end]).split(b"\n"))
                lines.reverse()
                self._lines_end = end + 1
            line = lines.pop()
            if not lines:
                del self._buffer[: self._lines_end]
                self._scanned = len(self._buffer)  # (what is left holds no newline)
            if self._skipping:
                self._skipping = False  # the tail of an over-long line: already reported
                continue
            if len(line) > self.max_line_bytes:
                raise LineTooLong(self.max_line_bytes, line[:200])
            return line

    async def read_line(self) -> bytes | None:
        if not self._buffer and not self._skipping and not self.at_eof:
            # The usual case: nothing buffered, and the bot's next write is one whole line.
            chunk = await self._receive_some(CHUNK_BYTES)
            if not chunk:
                self.at_eof = True
            elif chunk.find(b"\n") == len(chunk) - 1 and len(chunk) <= self.max_line_bytes:
                return chunk[:-1]
            else:
                self._buffer += chunk
        while True:
            line = self.buffered_line()
            if line is not None:
                return line
            if self._skipping:
                self._buffer.clear()
                self._scanned = 0
            elif len(self._buffer) > self.max_line_bytes:
                head = bytes(self._buffer[:200])
                self._buffer.clear()
                self._scanned = 0
                self._skipping = True
                raise LineTooLong(self.max_line_bytes, head)
            if self.at_eof:
                if self._buffer and not self._skipping:
                    line = bytes(self._buffer)  # a last line without its newline still counts
                    self._buffer.clear()
                    return line
                return None
            chunk = await self._receive_some(CHUNK_BYTES)
            if not chunk:
                self.at_eof = True
            else:
                self._buffer += chunk


# What a terminal acts on instead of showing: C0 and C1 control characters (escape sequences,
# carriage return, backspace: clear the screen, set the window title, overwrite a line) and the
# bidirectional overrides that reorder what is shown. Tab is kept.
_UNPRINTABLE = {
    code: f"\\x{code:02x}" for code in (*range(0x09), *range(0x0A, 0x20), *range(0x7F, 0xA0))
} | {
    code: f"\\u{code:04x}"
    for code in (0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
}


def printable(text: str) -> str:
    """``text`` safe to show on the organiser's terminal: what a terminal would act on is shown
    escaped (ESC as ``\\x1b``, a right-to-left override as ``\\u202e``), the rest as it is.
    Applying it twice changes nothing more."""
    return text.translate(_UNPRINTABLE)


def shorten(data: bytes | str, limit: int = 120) -> str:
    """A line as it may appear in a one-line message: repr, cut to ``limit`` characters."""
    if isinstance(data, bytes):
        data = data.decode("utf-8", errors="replace")
    text = repr(data[:limit])
    return text + (f"... ({len(data)} characters)" if len(data) > limit else "")
