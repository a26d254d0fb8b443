"""The shortcuts of the referee's per-decision path (benchmarks/limit.py) change no byte and no rule.

- event and request lines are built from per-match prefixes: byte for byte what the protocol
  encoder writes;
- the match's cancel scope keeps a deadline from an earlier request when it is at most
  DEADLINE_SLACK_S later than this one's: never early, so a reply just inside the limit is in time,
  and one just outside it is still a timeout;
- ProcessTransport writes and reads the raw pipe fds: a write larger than the pipe waits for the
  bot to read it, and once the transport is closed writes fail and reads see end of file;
- the quick read (a reply taken in one poll, without a scheduler pass) is taken only when no
  other task is ready and gives way as soon as anything trio watches is ready; it changes no
  move of a real match.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time

import msgspec
import pytest
import trio
import trio.testing

from arena.bots.check import option_sets
from arena.games import GAMES, find_game
from arena.games.cards import Rng, derive_seed
from arena.referee import trio_fast
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.match import DEADLINE_SLACK_S, run_match, view_struct
from arena.referee.process import BotProcess, ProcessTransport
from arena.referee.record import read_record
from arena.referee.results import FaultKind
from arena.referee.testing import FakeBot, connect_fake
from arena.referee.trio_fast import QuickRead, quick_reads_taken
from protocol.codec import encode_line
from protocol.messages import Event, Request

READ_ALL_THEN_COUNT = (
    "import sys; data = sys.stdin.buffer.read(1 << 20); "
    "sys.stdout.write(str(len(data)) + '\\n'); sys.stdout.flush(); "
    "sys.stdin.buffer.read()"
)


async def test_event_lines_are_exactly_what_the_protocol_encoder_writes(autojump_clock):
    bots = [FakeBot(name) for name in "abcd"]
    async with trio.open_nursery() as nursery:
        procs = [await connect_fake(nursery, bot) for bot in bots]
        await run_match(find_game("aon"), procs, seed=3, match_id='t/\u00e9v"nt 1')
        for proc in procs:
            await proc.close()
    lines = [line for bot in bots for line in bot.raw if json.loads(line)["type"] == "event"]
    assert len(lines) > 100
    for line in lines:
        message = json.loads(line)
        expected = encode_line(Event(match_id=message["match_id"], event=message["event"]))
        assert line + b"\n" == expected


async def test_request_lines_are_exactly_what_the_protocol_encoder_writes(autojump_clock):
    bots = [FakeBot(name) for name in "abcd"]
    async with trio.open_nursery() as nursery:
        procs = [await connect_fake(nursery, bot) for bot in bots]
        for game in ("vingt-down", "all-fours"):
            await run_match(find_game(game), procs, seed=5, match_id='t/r\u00e9q"uest 1')
        for proc in procs:
            await proc.close()
    lines = [line for bot in bots for line in bot.raw if json.loads(line)["type"] == "request"]
    assert len(lines) > 100
    for line in lines:
        fields = json.loads(line)
        del fields["type"]
        assert line + b"\n" == encode_line(Request(**fields))


# Every game, player count and option set arena check plays, and Vingt-down's short matches.
VIEW_CASES = [
    (spec, players, more)
    for spec in GAMES.values()
    for players in spec.player_counts
    for options in option_sets(spec)
    for more in [options, *([{**options, "max_deals": 3}] if spec.id == "vingt-down" else [])]
]


@pytest.mark.parametrize(
    ("spec", "players", "options"),
    VIEW_CASES,
    ids=[f"{spec.id}-{players}p-{options or 'defaults'}" for spec, players, options in VIEW_CASES],
)
def test_a_seat_view_from_its_values_is_the_view_byte_for_byte(spec, players, options):
    """What requests carry (the game's view_values encoded in view_struct) is msgspec's encoding of
    view(seat), for every seat after every step of whole matches, whichever is asked first; the
    four games take the shortcut at every decision, and it changes nothing the state shows."""
    encode = msgspec.json.Encoder().encode
    struct = view_struct(spec.new_match(players, options, 0))
    assert struct is not None
    for seed in range(8):
        state = spec.new_match(players, options, seed)
        chooser = Rng(derive_seed(seed, "view values"))
        step = 0
        while True:
            for seat in range(players):
                values = state.view_values(seat)
                if values is None:
                    assert state.is_over  # (then the referee encodes view() itself)
                    continue
                if (step + seat) % 2:
                    fast, plain = encode(struct(*values)), encode(state.view(seat))
                else:
                    plain, fast = encode(state.view(seat)), encode(struct(*state.view_values(seat)))
                assert fast == plain, f"seed {seed}, step {step}, seat {seat}"
            if state.is_over:
                break
            legal = state.legal_actions()
            state.apply(legal[chooser.below(len(legal))])
            step += 1
        replayed = spec.new_match(players, options, seed)
        for action in state.actions:
            replayed.apply(action)
        assert replayed.view(None) == state.view(None)


async def test_requests_carry_the_seats_views(autojump_clock):
    """Each request's view is the seat's view(seat) at that decision (replayed here: FakeBot plays
    the first legal action), in every game."""
    encode = msgspec.json.Encoder().encode
    for game in GAMES.values():
        bots = [FakeBot(name) for name in "abcd"]
        async with trio.open_nursery() as nursery:
            procs = [await connect_fake(nursery, bot) for bot in bots]
            await run_match(game, procs, seed=7, match_id="views")
            for proc in procs:
                await proc.close()
        requests = [
            iter(line for line in bot.raw if json.loads(line)["type"] == "request") for bot in bots
        ]
        state = game.new_match(4, {}, 7)
        decisions = 0
        while not state.is_over:
            seat = state.mover
            line = next(requests[seat])
            assert b'"view":' + encode(state.view(seat)) + b',"legal":' in line
            state.apply(state.legal_actions()[0])
            decisions += 1
        assert decisions > 100
        assert all(next(rest, None) is None for rest in requests)


async def test_a_write_larger_than_the_pipe_waits_for_the_reader(tmp_path):
    process = await trio.lowlevel.open_process(
        [sys.executable, "-c", READ_ALL_THEN_COUNT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    private = tmp_path / "private"
    private.mkdir()
    transport = ProcessTransport(process, tmp_path / "bot.stderr.log", str(private))
    try:
        with trio.fail_after(30):
            await transport.send_all(b"x" * (1 << 20))  # 16 times a Linux pipe's buffer
            reply = b""
            while not reply.endswith(b"\n"):
                chunk = await transport.receive_some(1024)
                assert chunk, "end of file before the reply"
                reply += chunk
        assert reply == b"1048576\n"
    finally:
        await transport.terminate(1.0)
    with pytest.raises(trio.ClosedResourceError):
        await transport.send_all(b"late\n")
    assert await transport.receive_some(1024) == b""


class ThinksFor(FakeBot):
    """Answers every request after exactly ``seconds`` (virtual time under autojump_clock)."""

    def __init__(self, name: str, seconds: float) -> None:
        super().__init__(name)
        self.seconds = seconds

    async def on_request(self, request):
        await trio.sleep(self.seconds)
        await super().on_request(request)


@pytest.mark.parametrize(
    "offset_s, in_time", [(-DEADLINE_SLACK_S / 4, True), (DEADLINE_SLACK_S / 4, False)]
)
async def test_reused_deadlines_are_never_early(autojump_clock, offset_s, in_time):
    control = TimeControl(decision_ms=100, margin_ms=10)
    limit_s = (control.decision_ms + control.margin_ms) / 1000
    # Quick seats make the referee reuse deadlines set less than DEADLINE_SLACK_S before; the seat
    # before the edge one thinks longer, so reusing its deadline for the edge seat would be early.
    bots = [
        ThinksFor("edge", limit_s + offset_s),
        ThinksFor("b", 0.0002),
        ThinksFor("c", 0.0002),
        ThinksFor("d", DEADLINE_SLACK_S * 1.5),
    ]
    async with trio.open_nursery() as nursery:
        procs = [await connect_fake(nursery, bot, time_control=control) for bot in bots]
        result = await run_match(
            find_game("aon"), procs, seed=4, match_id="m", max_faults=1000, time_control=control
        )
        for proc in procs:
            await proc.close()
    if in_time:
        assert result.faults == ()
    else:
        assert result.faults and {f.kind for f in result.faults} == {FaultKind.TIMEOUT}
        assert {f.seat for f in result.faults} == {0}


@pytest.fixture
def pipes():
    """(ours: read end, write end), (another task's: read end, write end), non-blocking reads."""
    ours, other = os.pipe(), os.pipe()
    for fd in (ours[0], other[0]):
        os.set_blocking(fd, False)
    yield ours, other
    for fd in (*ours, *other):
        os.close(fd)


async def test_the_quick_read_takes_a_ready_reply_without_a_scheduler_pass(pipes):
    (ours, ours_w), _ = pipes
    quick = QuickRead(ours)
    assert trio_fast.usable(), "the installed trio no longer offers what the quick read uses"
    with trio.move_on_after(0.2):
        os.write(ours_w, b"reply\n")
        assert quick.read(100) == b"reply\n"
        # Nothing comes: the poll ends at trio's next deadline (this scope's, 0.2 s), not later
        # (less a millisecond at most; the rest is how late a loaded machine wakes it).
        start = trio.current_time()
        assert quick.read(100) is None
        assert trio.current_time() < start + 0.2 + 2
    with trio.move_on_after(0.0005):
        # A deadline under a millisecond away: trio's path at once, even with the reply there.
        os.write(ours_w, b"late\n")
        assert quick.read(100) is None
    assert os.read(ours, 100) == b"late\n"


async def test_the_quick_read_never_outlasts_trios_next_timer(pipes):
    """A timer elsewhere (another task's sleep) bounds the wait: it fires on time, not late."""
    (ours, _), _ = pipes
    quick = QuickRead(ours)
    woke: list[float] = []

    async def sleeper() -> None:
        await trio.sleep(0.05)
        woke.append(trio.current_time())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(sleeper)
        await trio.sleep(0)  # the sleeper is now waiting on its timer
        due = trio.current_time() + 0.05
        with trio.move_on_after(20):  # the match's own deadline, far away
            assert quick.read(100) is None  # nothing came before the sleeper's timer
            # Bounded by the sleeper's timer, not the 20 s deadline; the slack is for a loaded
            # machine (a stalled process wakes late whatever the timeout it asked for).
            assert trio.current_time() < due + 2
    assert woke and woke[0] < due + 2


async def test_the_quick_read_gives_way_to_a_task_of_the_same_scheduler_batch(pipes):
    """trio runs a batch of runnable tasks one after the other: a task after this one in the
    batch is in no run queue, yet it must not wait for the quick read (here: 5 s)."""
    (ours, _), _ = pipes
    quick = QuickRead(ours)
    stop = False

    async def busy() -> None:  # always runnable: in the run queue or in the current batch
        while not stop:
            await trio.sleep(0)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(busy)
        with trio.move_on_after(5):
            for _ in range(20):  # each pass puts the other task before or after this one
                await trio.sleep(0)
                start = time.perf_counter()
                assert quick.read(100) is None
                assert time.perf_counter() - start < 2.5  # not the 5 s of the guard
        stop = True


async def test_the_quick_read_gives_way_to_any_other_task(pipes):
    (ours, ours_w), (other, other_w) = pipes
    quick = QuickRead(ours)
    got = []

    async def other_task() -> None:
        await trio.lowlevel.wait_readable(other)
        got.append(os.read(other, 10))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(other_task)
        with trio.move_on_after(20):  # a deadline that lets the quick wait last 20 s
            # Another task is ready to run: no quick read, even with the reply there.
            os.write(ours_w, b"reply\n")
            assert quick.read(100) is None
            assert os.read(ours, 100) == b"reply\n"
            await trio.testing.wait_all_tasks_blocked()  # the other waits in trio's epoll
            # What it waits for arrives: the quick wait ends at once and trio's path follows.
            os.write(other_w, b"o")
            start = time.perf_counter()
            assert quick.read(100) is None
            assert time.perf_counter() - start < 10  # not the 20 s the quick wait allows
    assert got == [b"o"]


class RecordingPoller:
    def __init__(self) -> None:
        self.timeouts: list[int | None] = []

    def poll(self, timeout: int | None = None) -> list:
        self.timeouts.append(timeout)
        return []


async def test_the_quick_read_waits_at_most_until_the_bound_it_is_given(pipes):
    (ours, _), _ = pipes
    quick = QuickRead(ours)
    poller = RecordingPoller()
    quick.read(100, 0.0)  # (attached: its poll is then replaced)
    quick.poll = poller.poll
    with trio.move_on_after(20):  # trio's next deadline, far away
        assert quick.read(100, time.perf_counter() + 0.05) is None
        assert quick.read(100, time.perf_counter() + 0.0005) is None  # under 1 ms: no poll
        assert quick.read(100) is None  # no bound of its own: trio's deadline
    with trio.move_on_after(0.03):
        assert quick.read(100, time.perf_counter() + 5) is None  # trio's is sooner
    assert quick.read(100, time.perf_counter() + 0.04) is None  # no deadline in trio
    first, unbounded, sooner, alone = poller.timeouts
    assert first is not None and first <= 50
    assert unbounded is not None and 50 < unbounded <= 20_000
    assert sooner is not None and sooner <= 30
    assert alone is not None and alone <= 40


async def test_no_quick_read_under_a_mock_clock(pipes, autojump_clock):
    (ours, ours_w), _ = pipes
    os.write(ours_w, b"reply\n")
    assert QuickRead(ours).read(100) is None  # trio's path, even with the reply there
    assert os.read(ours, 100) == b"reply\n"


async def test_no_quick_read_once_closed(pipes):
    """Its fd's number may be reused once closed: the quick read never polls it again."""
    (ours, ours_w), _ = pipes
    quick = QuickRead(ours)
    os.write(ours_w, b"one\n")
    assert quick.read(100) == b"one\n"
    os.write(ours_w, b"two\n")
    quick.close()
    assert quick.read(100) is None
    assert os.read(ours, 100) == b"two\n"


def test_the_quick_read_serves_each_trio_run_it_is_read_in(pipes):
    """One per bot output for its whole life: a bot may play in one trio run after another."""
    (ours, ours_w), _ = pipes
    quick = QuickRead(ours)

    async def read_one() -> bytes | None:
        await trio.testing.wait_all_tasks_blocked()  # (none of trio's waits behind the read)
        os.write(ours_w, b"reply\n")
        with trio.move_on_after(5):
            return quick.read(100)
        return None

    assert trio.run(read_one) == b"reply\n"
    assert trio.run(read_one) == b"reply\n"


async def test_real_bots_take_the_quick_read_and_play_the_same_match(tmp_path, monkeypatch):
    """The same match (a deterministic bot) with and without the quick read: the same record,
    times aside; and the quick read was taken, in the task it was told it is read in (the
    referee's reads pass theirs)."""
    bot = tmp_path / "first_legal.py"
    bot.write_text(FIRST_LEGAL_BOT)
    bot.chmod(0o755)
    records = []
    told = []
    read = QuickRead.read

    def told_read(self, max_bytes, until=math.inf, task=None):
        assert task is None or task is trio.lowlevel.current_task()
        told.append(task is not None)
        return read(self, max_bytes, until, task)

    for quick in (True, False):
        if quick:
            monkeypatch.setattr(QuickRead, "read", told_read)
        else:
            monkeypatch.setattr(
                QuickRead, "read", lambda self, max_bytes, until=0.0, task=None: None
            )
        taken = quick_reads_taken()
        control = TimeControl(decision_ms=5000)
        procs = [
            await BotProcess.start(
                BotSpec(f"b{i}", (sys.executable, str(bot)), user="@arena"),
                time_control=control,
                log_dir=tmp_path / "logs",
            )
            for i in range(4)
        ]
        try:
            path = tmp_path / f"m-{quick}.jsonl"
            await run_match(
                find_game("aon"),
                procs,
                seed=8,
                match_id="q",
                time_control=control,
                record_path=path,
            )
        finally:
            for proc in procs:
                await proc.close()
        assert (quick_reads_taken() > taken) == quick
        records.append([_timeless(entry) for entry in read_record(path)])
    assert records[0] == records[1]
    assert sum(told) > 50


FIRST_LEGAL_BOT = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "first", "version": "1"}), flush=True)
    elif message["type"] == "request":
        print(json.dumps({"type": "action", "id": message["id"], "index": 0}), flush=True)
"""


def _timeless(entry: dict) -> dict:
    return {
        key: value
        for key, value in entry.items()
        if key not in ("ms", "started", "duration_s", "referee_ms", "load_per_core", "_line")
    }
