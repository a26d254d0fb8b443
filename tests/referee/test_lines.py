"""The bounded line reader: splitting, caps, skipping an over-long line without keeping it."""

import pytest
import trio

from arena.referee.lines import LineReader, LineTooLong


def feeder(chunks):
    chunks = list(chunks)
    largest = [0]

    async def receive_some(max_bytes):
        await trio.lowlevel.checkpoint()
        if not chunks:
            return b""
        chunk = chunks.pop(0)
        largest[0] = max(largest[0], len(chunk))
        return chunk

    return receive_some


async def test_lines_across_chunks_and_a_last_line_without_newline():
    reader = LineReader(feeder([b"ab", b"c\nde", b"f\n\ng"]))
    assert [await reader.read_line() for _ in range(5)] == [b"abc", b"def", b"", b"g", None]


async def test_an_over_long_line_raises_then_the_next_line_reads_fine():
    reader = LineReader(feeder([b"x" * 30, b"x" * 30, b"tail\nok\n"]), max_line_bytes=40)
    with pytest.raises(LineTooLong) as raised:
        await reader.read_line()
    assert raised.value.limit == 40 and raised.value.head.startswith(b"xxx")
    assert await reader.read_line() == b"ok"
    assert await reader.read_line() is None


async def test_an_endless_line_is_not_buffered():
    endless = (b"y" * 65536 for _ in range(200))  # 13 MB, never a newline

    async def receive_some(max_bytes):
        await trio.lowlevel.checkpoint()
        return next(endless, b"")

    reader = LineReader(receive_some, max_line_bytes=100_000)
    with pytest.raises(LineTooLong):
        await reader.read_line()
    assert len(reader._buffer) == 0
    assert await reader.read_line() is None  # the rest is dropped as it arrives
    assert len(reader._buffer) == 0


async def test_a_line_exactly_at_the_cap_is_accepted():
    reader = LineReader(feeder([b"z" * 40 + b"\n"]), max_line_bytes=40)
    assert await reader.read_line() == b"z" * 40


async def test_cancelling_a_read_keeps_what_was_received(autojump_clock):
    send, receive = trio.open_memory_channel(10)

    async def receive_some(max_bytes):
        try:
            return await receive.receive()
        except trio.EndOfChannel:
            return b""

    reader = LineReader(receive_some)
    await send.send(b"half a ")
    with trio.move_on_after(1):
        await reader.read_line()
    await send.send(b"line\n")
    assert await reader.read_line() == b"half a line"


async def test_line_now_gives_a_whole_line_at_hand_and_leaves_the_rest_to_read_line():
    """line_now() takes what the transport has at once (its receive_now: None = nothing yet);
    anything but exactly one whole line stays buffered for read_line(), nothing is lost."""
    ready = [b"one\n", b"tw", None, b"a\nb\n", b""]
    later = [b"o\nthree\n"]

    def receive_now(max_bytes, until=None, task=None):
        return ready.pop(0)

    reader = LineReader(feeder(later), receive_now=receive_now)
    assert reader.line_now() == b"one"
    assert reader.line_now() is None  # half a line: kept
    assert reader.line_now() is None  # something buffered: not even asked
    assert await reader.read_line() == b"two"
    assert await reader.read_line() == b"three"
    assert reader.line_now() is None  # nothing at hand (None): read_line() waits
    assert reader.line_now() is None  # two lines in one chunk: both kept, in order
    assert [await reader.read_line() for _ in range(2)] == [b"a", b"b"]
    assert reader.line_now() is None  # end of file (b"")
    assert await reader.read_line() is None
    assert LineReader(feeder([b"x\n"])).line_now() is None  # no receive_now: always None


async def test_a_short_line_now_keeps_a_longer_line_for_read_line():
    """line_now(until, max_bytes) reads at most max_bytes (the referee's first read of a reply
    is short): the start of a longer line is kept, and read_line() gives all of it."""
    pipe = b"x" * 10 + b"\n"
    asked = []

    def receive_now(max_bytes, until=None, task=None):
        asked.append(max_bytes)
        return pipe[:max_bytes]

    reader = LineReader(feeder([pipe[4:]]), receive_now=receive_now)
    assert reader.line_now(max_bytes=4) is None and asked == [4]
    assert await reader.read_line() == b"x" * 10


async def test_buffered_line_hands_out_whole_lines_already_read_and_never_reads():
    """buffered_line() gives the lines a read brought (split at once), in order, as read_line()
    would, then None until a read brings more; meanwhile line_now() reads nothing (their bytes
    stay buffered until the last is taken)."""
    asked = []

    def receive_now(max_bytes, until=None, task=None):
        asked.append(max_bytes)
        return b"a\n\nbb\nha" if len(asked) == 1 else b"one\n"

    reader = LineReader(feeder([b"lf\nc\n"]), receive_now=receive_now)
    assert reader.buffered_line() is None  # nothing read yet, and nothing is read here
    assert reader.line_now() is None  # three lines and a half: buffered
    assert reader.buffered_line() == b"a"
    assert reader.line_now() is None and len(asked) == 1  # lines left: no read
    assert [reader.buffered_line(), reader.buffered_line()] == [b"", b"bb"]
    assert reader.buffered_line() is None  # "ha" is half a line
    assert reader.line_now() is None and len(asked) == 1
    assert await reader.read_line() == b"half"
    assert reader.buffered_line() == b"c"
    assert reader.buffered_line() is None and len(reader._buffer) == 0
    assert reader.line_now() == b"one"  # nothing buffered: the quick read again


async def test_buffered_lines_keep_the_cap_and_the_skipping_of_an_over_long_line():
    reader = LineReader(feeder([b"x" * 50, b"tail\nok\n" + b"y" * 41 + b"\nlast\n"]), 40)
    with pytest.raises(LineTooLong):
        await reader.read_line()  # 50 bytes without a newline: reported, the rest skipped
    assert reader.buffered_line() is None
    assert await reader.read_line() == b"ok"  # the tail of the long line is dropped
    with pytest.raises(LineTooLong) as raised:
        reader.buffered_line()
    assert raised.value.head == b"y" * 41
    assert reader.buffered_line() == b"last"
    assert await reader.read_line() is None
