"""The referee with in-memory fake bots under trio's autojump clock: the normal path and each fault."""

from __future__ import annotations

import json

import pytest
import trio

from arena.games import find_game
from arena.games.cards import Rng, derive_seed
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.process import BotStartupError
from arena.referee.record import replay_record
from arena.referee.results import FaultKind
from arena.referee.testing import FakeBot, connect_fake

AON = find_game("alles-oder-nichts")


def first_legal_playout(seed: int, players: int = 3):
    state = AON.new_match(players, {}, seed)
    while not state.is_over:
        state.apply(state.legal_actions()[0])
    return state.result()


async def play(bots, seed=11, **kwargs):
    """Connect the fake bots, play one match, close them; returns (result, BotProcesses)."""
    control = kwargs.pop("time_control", TimeControl())
    async with trio.open_nursery() as nursery:
        procs = [
            await connect_fake(
                nursery,
                bot,
                time_control=control,
                max_line_bytes=kwargs.pop("max_line_bytes", 1 << 20),
            )
            for bot in bots
        ]
        try:
            result = await run_match(
                AON, procs, seed=seed, match_id="m1", time_control=control, **kwargs
            )
        finally:
            for proc in procs:
                await proc.close()
    return result, procs


class IndexBot(FakeBot):
    """Answers by index: always the last legal action."""

    async def on_request(self, request):
        await self.send({"type": "action", "id": request["id"], "index": len(request["legal"]) - 1})


class FaultyBot(FakeBot):
    """Well behaved, except on the requests listed in ``bad`` where it sends ``reply(request)``."""

    def __init__(self, name, reply, bad=(1,)):
        super().__init__(name)
        self.reply = reply
        self.bad = set(bad)
        self.asked = 0

    async def on_request(self, request):
        self.asked += 1
        if self.asked in self.bad:
            await self.reply(self, request)
        else:
            await super().on_request(request)


async def test_normal_match_matches_the_rules(autojump_clock, tmp_path):
    bots = [FakeBot("a"), FakeBot("b"), FakeBot("c")]
    result, procs = await play(bots, seed=11, record_path=tmp_path / "m.jsonl")
    expected = first_legal_playout(11)
    assert result.scores == expected.scores
    assert result.placings == expected.placings
    assert result.faults == () and result.forfeited == ()
    assert result.bots == ("a", "b", "c")
    assert len(result.referee_us) == sum(len(times) for times in result.decision_ms)
    for seat, bot in enumerate(bots):
        kinds = [m["type"] for m in bot.received]
        assert kinds[0] == "hello" and kinds[1] == "match_start" and kinds[-1] == "bye"
        assert kinds[-2] == "match_end"
        start = bot.received[1]
        assert start["seat"] == seat and start["players"] == 3
        assert [s["name"] for s in start["seats"]] == ["a", "b", "c"]
        end = bot.received[-2]
        assert end["scores"] == list(expected.scores) and end["placings"] == list(expected.placings)
    assert replay_record(tmp_path / "m.jsonl").state.result() == expected


async def test_answers_by_index(autojump_clock):
    result, _ = await play([IndexBot("a"), IndexBot("b"), IndexBot("c")], seed=3)
    state = AON.new_match(3, {}, 3)
    while not state.is_over:
        state.apply(state.legal_actions()[-1])
    assert result.scores == state.result().scores and result.faults == ()


async def test_request_ids_grow_across_matches_and_time_left_is_sent(autojump_clock):
    bot = FakeBot("a")
    control = TimeControl(decision_ms=700)
    async with trio.open_nursery() as nursery:
        procs = [
            await connect_fake(nursery, b, time_control=control)
            for b in (bot, FakeBot("b"), FakeBot("c"))
        ]
        await run_match(AON, procs, seed=1, match_id="m1", time_control=control)
        await run_match(AON, procs, seed=2, match_id="m2", time_control=control)
        for proc in procs:
            await proc.close()
    ids = [m["id"] for m in bot.messages("request")]
    assert ids == sorted(set(ids)) and ids[0] == 1
    assert {m["time_left_ms"] for m in bot.messages("request")} == {700}
    assert [m["match_id"] for m in bot.messages("match_start")] == ["m1", "m2"]


async def never_answer(bot, request):
    await trio.sleep_forever()


async def test_timeout_then_autopilot_then_forfeit(autojump_clock):
    class Mute(FakeBot):
        async def on_request(self, request):
            await trio.sleep(10)  # far beyond the limit; the late answers are stale

            await self.send({"type": "action", "id": request["id"], "action": request["legal"][0]})

    mute = Mute("mute")
    before = trio.current_time()
    result, procs = await play(
        [mute, FakeBot("b"), FakeBot("c")],
        seed=5,
        time_control=TimeControl(decision_ms=200, margin_ms=20),
    )
    kinds = [f.kind for f in result.faults]
    assert kinds == [FaultKind.TIMEOUT] * 3
    assert all(f.seat == 0 and f.bot == "mute" for f in result.faults)
    assert "within 200 ms (+20 ms margin)" in result.faults[0].message
    assert result.forfeited == (0,)
    assert result.placings[0] == 3  # placed last whatever it scored
    assert not procs[0].alive
    faults = mute.transport.written_messages("fault")
    assert [m["kind"] for m in faults] == ["timeout"] * 3 and faults[-1]["forfeited"] is True
    assert trio.current_time() - before < 100  # the match went on without the mute seat


async def test_a_late_answer_is_discarded_and_never_applied_to_a_newer_request(
    autojump_clock, tmp_path
):
    class LateOnce(FakeBot):
        asked = 0

        async def on_request(self, request):
            self.asked += 1
            if self.asked == 1:
                await trio.sleep(1.5)  # misses its first decision...
                # ...then answers it late with the *last* legal action, which must not be used.
                await self.send(
                    {"type": "action", "id": request["id"], "action": request["legal"][-1]}
                )
                return
            await super().on_request(request)

    late = LateOnce("late")
    result, procs = await play(
        [late, FakeBot("b"), FakeBot("c")],
        seed=8,
        time_control=TimeControl(decision_ms=1000, margin_ms=50),
        record_path=tmp_path / "m.jsonl",
    )
    assert [f.kind for f in result.faults] == [FaultKind.TIMEOUT]
    assert result.forfeited == ()
    entries = [json.loads(line) for line in (tmp_path / "m.jsonl").read_text().splitlines()]
    stale = [e for e in entries if e["type"] == "reply" and e["verdict"] == "stale"]
    assert len(stale) == 1 and stale[0]["id"] == 1
    first_action = next(e for e in entries if e["type"] == "action" and e["seat"] == 0)
    assert first_action["by"] == "autopilot"
    # The autopilot's move comes from the match seed, not from the late answer.
    first_request = next(e for e in entries if e["type"] == "request" and e["seat"] == 0)
    legal = first_request["legal"]
    assert first_action["action"] == legal[Rng(derive_seed(8, "autopilot")).below(len(legal))]
    replay_record(tmp_path / "m.jsonl")


async def test_stale_ids_are_skipped_and_future_ids_are_malformed(autojump_clock):
    async def stale_then_right(bot, request):
        await bot.send({"type": "action", "id": request["id"] - 1, "action": request["legal"][0]})
        await bot.send({"type": "action", "id": request["id"], "action": request["legal"][0]})

    async def future(bot, request):
        await bot.send({"type": "action", "id": request["id"] + 5, "action": request["legal"][0]})

    result, _ = await play(
        [FaultyBot("s", stale_then_right, bad={2, 3}), FaultyBot("f", future), FakeBot("c")], seed=4
    )
    assert [(f.bot, f.kind) for f in result.faults] == [("f", FaultKind.MALFORMED)]
    assert (
        "answered request" in result.faults[0].message and "never sent" in result.faults[0].message
    )


@pytest.mark.parametrize(
    "line, expected",
    [
        (b"this is not json\n", "not a valid message"),
        (b'{"type": "action"}\n', "not a valid message"),
        (b'{"type": "action", "id": ID, "action": "x", "extra": 1}\n', "not a valid message"),
        (b'{"type": "ready", "name": "again"}\n', "an action message was expected"),
        (b'{"type": "action", "id": ID}\n', "exactly one of"),
        (b'{"type": "action", "id": ID, "action": "x", "index": 0}\n', "exactly one of"),
        (b"\n", "not a valid message"),
        # null is not a value of action or index: exactly one of them is given, the other left out
        (b'{"type": "action", "id": ID, "action": null, "index": 0}\n', "got `null`"),
        (b'{"type": "action", "id": ID, "index": null}\n', "got `null`"),
        # a key given twice is not "last one wins"
        (
            b'{"type": "action", "id": ID, "index": 5, "index": 0}\n',
            "'index' is given more than once",
        ),
        (
            b'{"type": "action", "id": ID, "id": ID, "action": "bid:0"}\n',
            "'id' is given more than once",
        ),
    ],
)
async def test_malformed_replies(autojump_clock, line, expected):
    async def garbage(bot, request):
        await bot.send(line.replace(b"ID", str(request["id"]).encode()))

    bot = FaultyBot("g", garbage)
    result, _ = await play([bot, FakeBot("b"), FakeBot("c")], seed=2)
    assert [f.kind for f in result.faults] == [FaultKind.MALFORMED]
    assert expected in result.faults[0].message
    assert "bot g (seat 0), request 1:" in result.faults[0].message
    assert bot.messages("fault")[0]["id"] == 1 and bot.messages("fault")[0]["kind"] == "malformed"
    assert result.forfeited == ()


async def test_an_over_long_line_is_malformed_and_the_bot_goes_on(autojump_clock):
    async def long_line(bot, request):
        await bot.send(b'{"type": "action", "junk": "' + b"x" * 5000 + b'"}\n')

    result, _ = await play(
        [FaultyBot("long", long_line), FakeBot("b"), FakeBot("c")], seed=2, max_line_bytes=1000
    )
    assert [f.kind for f in result.faults] == [FaultKind.MALFORMED]
    assert "longer than 1000 bytes" in result.faults[0].message
    assert result.forfeited == ()


@pytest.mark.parametrize(
    "reply, expected",
    [
        ({"action": "99Z"}, "'99Z'"),
        ({"index": 99}, "answered index 99"),
        ({"index": -1}, "answered index -1"),
    ],
)
async def test_illegal_answers(autojump_clock, reply, expected):
    async def illegal(bot, request):
        await bot.send({"type": "action", "id": request["id"], **reply})

    result, _ = await play([FaultyBot("ill", illegal), FakeBot("b"), FakeBot("c")], seed=2)
    assert [f.kind for f in result.faults] == [FaultKind.ILLEGAL]
    assert expected in result.faults[0].message
    assert "bid:0" in result.faults[0].message  # names what was allowed


async def test_max_faults_forfeits_and_the_seat_is_not_asked_again(autojump_clock):
    async def illegal(bot, request):
        await bot.send({"type": "action", "id": request["id"], "action": "nonsense"})

    bot = FaultyBot("ill", illegal, bad=range(1, 1000))
    result, procs = await play([bot, FakeBot("b"), FakeBot("c")], seed=6, max_faults=2)
    assert [f.kind for f in result.faults] == [FaultKind.ILLEGAL] * 2
    assert bot.asked == 2 and result.forfeited == (0,) and result.placings[0] == 3
    assert bot.received[-2]["type"] == "match_end" and bot.received[-2]["forfeited"] == [0]
    assert not procs[0].alive


async def test_crash_forfeits_at_once(autojump_clock):
    async def crash(bot, request):
        bot.exit(3)

    bot = FaultyBot("crash", crash, bad={4})
    result, procs = await play([FakeBot("a"), bot, FakeBot("c")], seed=9)
    assert [(f.seat, f.kind) for f in result.faults] == [(1, FaultKind.CRASH)]
    assert "exited with status 3" in result.faults[0].message
    assert result.forfeited == (1,) and result.placings[1] == 3
    assert not procs[1].alive
    assert bot.received[-1]["type"] == "request"  # nothing more was written to it


async def test_autopilot_is_deterministic(autojump_clock):
    async def illegal(bot, request):
        await bot.send({"type": "action", "id": request["id"], "action": "nonsense"})

    first, _ = await play(
        [FaultyBot("x", illegal, bad=range(1, 99)), FakeBot("b"), FakeBot("c")], seed=21
    )
    second, _ = await play(
        [FaultyBot("x", illegal, bad=range(1, 99)), FakeBot("b"), FakeBot("c")], seed=21
    )
    assert first.scores == second.scores and first.forfeited == (0,)


async def test_team_partners_of_a_forfeiting_seat_are_placed_last_too(autojump_clock):
    from arena.referee.match import _Match
    from arena.referee.record import RecordWriter

    async with trio.open_nursery() as nursery:
        procs = [await connect_fake(nursery, FakeBot(n)) for n in "abcd"]
        match = _Match(AON, procs, 1, None, "m", TimeControl(), 3, RecordWriter(None))
        match.teams = (0, 1, 0, 1)
        match.seats[2].forfeited = True
        final, forfeited = match.final_placings((1, 2, 1, 2))  # partners share placings
        assert forfeited == (2,)
        assert final == (2, 1, 2, 1)  # teams are placed among teams (SPEC section 9)
        for proc in procs:
            await proc.close()


async def test_bank_and_increment_reach_the_bot(autojump_clock):
    class Slow(FakeBot):
        async def on_request(self, request):
            await trio.sleep(0.3)
            await super().on_request(request)

    slow = Slow("slow")
    control = TimeControl(decision_ms=1000, bank_ms=2000, increment_ms=100, margin_ms=0)
    result, _ = await play([slow, FakeBot("b"), FakeBot("c")], seed=1, time_control=control)
    left = [m["time_left_ms"] for m in slow.messages("request")]
    # Each answer takes 300 ms and earns 100: the bank shrinks by 200 per decision.
    assert left[:9] == [min(1000, 2000 - 200 * i) for i in range(9)]
    assert any(f.kind is FaultKind.TIMEOUT for f in result.faults)  # the bank runs dry


async def test_startup_failures(autojump_clock):
    class Silent(FakeBot):
        async def handle(self, message):
            await trio.sleep_forever()

    class Rude(FakeBot):
        async def handle(self, message):
            await self.send(b"hello yourself\n")

    class Quitter(FakeBot):
        async def handle(self, message):
            self.exit(1)

    async with trio.open_nursery() as nursery:
        with pytest.raises(BotStartupError, match=r"bot silent: no ready message within 500 ms"):
            await connect_fake(nursery, Silent("silent"), time_control=TimeControl(startup_ms=500))
        with pytest.raises(BotStartupError, match=r"bot rude: expected a ready message, got"):
            await connect_fake(nursery, Rude("rude"))
        with pytest.raises(
            BotStartupError, match=r"bot quitter: ended before saying ready: exited"
        ):
            await connect_fake(nursery, Quitter("quitter"))


async def test_cancelled_match_marks_the_bots_unusable(autojump_clock):
    async with trio.open_nursery() as nursery:
        procs = [
            await connect_fake(nursery, b)
            for b in (FaultyBot("mute", never_answer), FakeBot("b"), FakeBot("c"))
        ]
        with trio.move_on_after(0.5):
            await run_match(AON, procs, seed=1, match_id="m")
        assert all(not proc.alive for proc in procs)
        for proc in procs:
            await proc.close()


async def test_a_bot_that_dies_while_its_output_stays_open_is_a_crash(autojump_clock):
    async def die_silently(bot, request):
        bot.transport.status = "killed by SIGSEGV"  # its output channel stays open

    result, _ = await play(
        [FaultyBot("segv", die_silently), FakeBot("b"), FakeBot("c")],
        seed=2,
        time_control=TimeControl(decision_ms=300),
    )
    assert [f.kind for f in result.faults] == [FaultKind.CRASH]
    assert "killed by SIGSEGV" in result.faults[0].message and result.forfeited == (0,)


async def test_bad_options_fail_before_a_record_is_written(autojump_clock, tmp_path):
    from arena.games import OptionError

    async with trio.open_nursery() as nursery:
        procs = [await connect_fake(nursery, FakeBot(n)) for n in "abc"]
        with pytest.raises(OptionError, match="unknown option"):
            await run_match(
                AON,
                procs,
                seed=1,
                match_id="m",
                options={"nope": 1},
                record_path=tmp_path / "m.jsonl",
            )
        assert not (tmp_path / "m.jsonl").exists()
        assert all(proc.alive for proc in procs)
        for proc in procs:
            await proc.close()


async def test_garbage_is_charged_to_the_bank(autojump_clock):
    class SlowGarbage(FakeBot):
        async def on_request(self, request):
            await trio.sleep(0.4)
            await self.send(b"garbage\n")

    bot = SlowGarbage("sg")
    control = TimeControl(decision_ms=1000, bank_ms=1000, margin_ms=0)
    result, _ = await play(
        [bot, FakeBot("b"), FakeBot("c")], seed=1, time_control=control, max_faults=10
    )
    left = [m["time_left_ms"] for m in bot.messages("request")]
    assert left[:3] == [1000, 600, 200]
    assert [f.kind for f in result.faults][:3] == [
        FaultKind.MALFORMED,
        FaultKind.MALFORMED,
        FaultKind.TIMEOUT,
    ]


async def test_one_process_cannot_sit_in_two_seats(autojump_clock):
    async with trio.open_nursery() as nursery:
        a, b = [await connect_fake(nursery, FakeBot(n)) for n in "ab"]
        with pytest.raises(ValueError, match="one BotProcess in two seats"):
            await run_match(AON, [a, b, a], seed=1, match_id="m")
        for proc in (a, b):
            await proc.close()


async def test_a_seat_whose_bot_did_not_start_forfeits_and_the_match_goes_on(
    tmp_path, autojump_clock
):
    from arena.referee.bot_spec import BotSpec
    from arena.referee.process import BotProcess

    control = TimeControl()
    record = tmp_path / "absent.jsonl"
    async with trio.open_nursery() as nursery:
        honest = [
            await connect_fake(nursery, IndexBot(name), time_control=control) for name in ("a", "b")
        ]
        absent = BotProcess.absent(BotSpec("quitter", ("none",)), "ended before saying ready")
        try:
            result = await run_match(
                AON,
                [honest[0], absent, honest[1]],
                seed=5,
                match_id="m1",
                time_control=control,
                record_path=record,
            )
        finally:
            for proc in (*honest, absent):
                await proc.close()
    assert result.termination == "completed" and result.forfeited == (1,)
    (fault,) = result.faults
    assert (fault.seat, fault.kind, fault.request_id) == (1, FaultKind.STARTUP, None)
    assert "bot quitter (seat 1)" in fault.message and "ended before saying ready" in fault.message
    assert result.placings[1] == 3, "the forfeiting seat is placed last"
    assert all(bot.stats.matches == 1 for bot in honest)
    assert replay_record(record).state.result().scores == result.scores


async def test_bots_are_sent_the_opaque_id_and_the_shared_name(autojump_clock, tmp_path):
    """SPEC 4.1: every message carries the id the bots are sent; a bot with a sent name is
    announced by it (hello, match_start, its fault notices); the result, the faults and the
    record name the match and the bot as organisers know them, and the header keeps both."""

    async def illegal(bot, request):
        await bot.send({"type": "action", "id": request["id"], "action": "nonsense"})

    bots = [FaultyBot("a", illegal), FakeBot("b"), FakeBot("c")]
    async with trio.open_nursery() as nursery:
        specs = [BotSpec("a", ("fake",), sent_name="candidate"), None, None]
        procs = [await connect_fake(nursery, bot, spec=spec) for bot, spec in zip(bots, specs)]
        result = await run_match(
            AON,
            procs,
            seed=4,
            match_id="cup/t3/d1/r2",
            sent_id="0123456789abcdef",
            record_path=tmp_path / "m.jsonl",
        )
        for proc in procs:
            await proc.close()
    for bot in bots:
        ids = {m["match_id"] for m in bot.received if "match_id" in m}
        assert ids == {"0123456789abcdef"}
        start = bot.messages("match_start")[0]
        assert [s["name"] for s in start["seats"]] == ["candidate", "b", "c"]
    assert bots[0].messages("hello")[0]["name"] == "candidate"
    assert bots[1].messages("hello")[0]["name"] == "b"
    notice = bots[0].messages("fault")[0]["message"]
    assert notice.startswith("bot candidate (seat 0), request 1: ")
    assert result.match_id == "cup/t3/d1/r2"
    assert result.bots == ("a", "b", "c") and result.faults[0].bot == "a"
    assert result.faults[0].message == "bot a " + notice.removeprefix("bot candidate ")
    header = json.loads((tmp_path / "m.jsonl").read_text().splitlines()[0])
    assert header["match_id"] == "cup/t3/d1/r2" and header["sent_match_id"] == "0123456789abcdef"
    assert [(s["bot"], s["sent_name"]) for s in header["seats"]] == [
        ("a", "candidate"),
        ("b", "b"),
        ("c", "c"),
    ]
    assert replay_record(tmp_path / "m.jsonl").result is not None
