"""Match records (SPEC.md section 8): lines in the order things happened, reply lines that say
what the bot wrote and what it was charged, autopilot decisions, and replay labels."""

from __future__ import annotations

import io
import json
import math
import re

import pytest
import trio
from rich.console import Console

from arena.games import find_game
from arena.games.cards import Rng
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.record import RecordingDealer, ReplayError, replay_record
from arena.referee.testing import FakeBot, connect_fake
from arena.render.replay import render_replay

AON = find_game("alles-oder-nichts")
ALL_FOURS = find_game("all-fours")
VINGT = find_game("vingt-down")


async def play(
    game, bots, path, *, seed=3, options=None, control=TimeControl(), specs=None, max_faults=3
):
    async with trio.open_nursery() as nursery:
        procs = [
            await connect_fake(
                nursery, bot, time_control=control, spec=None if specs is None else specs[i]
            )
            for i, bot in enumerate(bots)
        ]
        try:
            result = await run_match(
                game,
                procs,
                seed=seed,
                options=options,
                match_id="m",
                time_control=control,
                record_path=path,
                max_faults=max_faults,
            )
        finally:
            for proc in procs:
                await proc.close()
    return result, [json.loads(line) for line in path.read_text().splitlines()]


class Scripted(FakeBot):
    """Answers request number k (1-based, this bot's own count) with ``replies[k](request)``."""

    def __init__(self, name, replies):
        super().__init__(name)
        self.replies = replies
        self.asked = 0

    async def on_request(self, request):
        self.asked += 1
        reply = self.replies.get(self.asked)
        if reply is None:
            await super().on_request(request)
        else:
            await reply(self, request)


def send(**fields):
    async def reply(bot, request):
        await bot.send({"type": "action", "id": request["id"], **fields})

    return reply


@pytest.mark.parametrize(
    "reply, kind",
    [
        (send(action="99Z"), "illegal"),
        (send(index=99), "illegal"),
        (send(action="bid:0", index=0), "malformed"),  # both: malformed, and the reply says so
        (send(), "malformed"),
    ],
)
async def test_the_reply_line_comes_before_its_fault_and_has_the_faults_kind(
    autojump_clock, tmp_path, reply, kind
):
    _, entries = await play(
        AON, [Scripted("x", {1: reply}), FakeBot("b"), FakeBot("c")], tmp_path / "m.jsonl"
    )
    kinds = [e["type"] for e in entries]
    fault_at = kinds.index("fault")
    assert entries[fault_at]["kind"] == kind
    assert entries[fault_at - 1]["type"] == "reply"
    assert entries[fault_at - 1]["verdict"] == kind


@pytest.mark.parametrize(
    "game, seed, options",
    [
        (AON, 3, None),
        (ALL_FOURS, 5, None),
        (VINGT, 2, {"drop_out": True}),
        (find_game("eight-rounds"), 4, None),
    ],
)
async def test_each_shuffle_is_written_just_before_the_events_it_led_to(
    autojump_clock, tmp_path, game, seed, options
):
    players = game.default_players
    _, entries = await play(
        game,
        [FakeBot(f"p{i}") for i in range(players)],
        tmp_path / "m.jsonl",
        seed=seed,
        options=options,
    )
    # The rules' own account: how many events had happened at each shuffle.
    dealer = RecordingDealer(Rng(seed))
    state = game.new_match(players, options, seed, dealer)
    dealer.watch(state.events)
    for entry in entries:
        if entry["type"] == "action":
            state.apply(entry["action"])
    shuffles_seen = 0
    events_before = 0
    for entry in entries:
        if entry["type"] == "event":
            events_before += 1
        elif entry["type"] == "shuffle":
            shuffles_seen += 1
            assert entry["n"] == shuffles_seen
            assert events_before == dealer.marks[entry["n"] - 1], entry["n"]
    assert shuffles_seen == len(dealer.decks) > 1
    replay_record(tmp_path / "m.jsonl")


async def test_aon_second_round_shuffle_precedes_its_deal_and_trump(autojump_clock, tmp_path):
    _, entries = await play(AON, [FakeBot("a"), FakeBot("b"), FakeBot("c")], tmp_path / "m.jsonl")
    second = next(i for i, e in enumerate(entries) if e["type"] == "shuffle" and e["n"] == 2)
    after = [e["data"]["type"] for e in entries[second + 1 :] if e["type"] == "event"][:5]
    assert after == ["round_start", "deal", "deal", "deal", "trump"]
    before = [e["data"]["type"] for e in entries[:second] if e["type"] == "event"]
    assert before[-1] == "round_end" and before.count("round_start") == 1


async def test_late_and_never_sent_ids_in_reply_lines(autojump_clock, tmp_path):
    async def late(bot, request):
        await trio.sleep(1.5)  # request 1 times out (1000 + 50 ms); answered during request 2
        await bot.send({"type": "action", "id": request["id"], "action": request["legal"][0]})

    control = TimeControl(decision_ms=1000, margin_ms=50)
    _, entries = await play(
        AON,
        [Scripted("x", {1: late}), FakeBot("b"), FakeBot("c")],
        tmp_path / "m.jsonl",
        control=control,
    )
    replies = [e for e in entries if e["type"] == "reply" and e["seat"] == 0]
    stale = next(r for r in replies if r["verdict"] == "stale")
    # id: what the bot wrote; ms: from the request it names (written 1500 ms before the line).
    assert stale["id"] == 1 and stale["pending"] == 2
    assert stale["ms"] == pytest.approx(1500, abs=1) and stale["charged_ms"] is None
    requests = [e["id"] for e in entries if e["type"] == "request" and e["seat"] == 0]
    stale_at = entries.index(stale)
    assert (
        entries.index(
            next(e for e in entries if e["type"] == "request" and e["id"] == 2 and e["seat"] == 0)
        )
        < stale_at
    )
    assert requests[:2] == [1, 2]

    async def future(bot, request):
        await trio.sleep(0.25)
        await bot.send({"type": "action", "id": request["id"] + 7, "action": request["legal"][0]})

    _, entries = await play(
        AON,
        [Scripted("y", {1: future}), FakeBot("b"), FakeBot("c")],
        tmp_path / "n.jsonl",
        control=control,
    )
    reply = next(e for e in entries if e["type"] == "reply" and e["seat"] == 0)
    assert reply["verdict"] == "malformed"
    assert reply["id"] == 8 and reply["pending"] == 1 and reply["ms"] is None


async def test_garbage_has_no_id_and_no_ms(autojump_clock, tmp_path):
    async def garbage(bot, request):
        await bot.send(b"hello\n")

    _, entries = await play(
        AON, [Scripted("x", {1: garbage}), FakeBot("b"), FakeBot("c")], tmp_path / "m.jsonl"
    )
    reply = next(e for e in entries if e["type"] == "reply" and e["seat"] == 0)
    assert (reply["id"], reply["ms"], reply["pending"], reply["verdict"]) == (
        None,
        None,
        1,
        "malformed",
    )


async def test_the_bank_is_reproducible_from_the_record(autojump_clock, tmp_path):
    class Slow(FakeBot):
        async def on_request(self, request):
            await trio.sleep(0.0305)  # 30.5 ms: charged 31
            await super().on_request(request)

    control = TimeControl(decision_ms=1000, bank_ms=400, increment_ms=2, margin_ms=0)
    _, entries = await play(
        AON, [Slow("slow"), FakeBot("b"), FakeBot("c")], tmp_path / "m.jsonl", control=control
    )
    bank = entries[0]["time_control"]["bank_ms"]
    decision, increment = control.decision_ms, control.increment_ms
    checked = 0
    pending = None
    for entry in entries:
        if entry.get("seat") != 0:
            continue
        if entry["type"] == "request":
            assert entry["time_left_ms"] == min(decision, bank)
            pending = entry
            checked += 1
        elif entry["type"] == "reply" and entry["verdict"] == "ok":
            assert entry["charged_ms"] == min(pending["time_left_ms"], math.ceil(entry["ms"]))
            bank = bank - entry["charged_ms"] + increment
        elif entry["type"] == "fault" and entry["kind"] == "timeout":
            bank = bank - pending["time_left_ms"] + increment
    assert checked > 12
    oks = [e for e in entries if e["type"] == "reply" and e["seat"] == 0 and e["verdict"] == "ok"]
    assert {e["charged_ms"] for e in oks} == {31}


async def test_ready_name_is_in_the_header(autojump_clock, tmp_path):
    specs = [BotSpec("cli-name", ("x",)), BotSpec("b", ("x",)), BotSpec("c", ("x",))]
    _, entries = await play(
        AON,
        [FakeBot("what-it-calls-itself"), FakeBot("b"), FakeBot("c")],
        tmp_path / "m.jsonl",
        specs=specs,
    )
    seat = entries[0]["seats"][0]
    assert seat["bot"] == "cli-name" and seat["ready_name"] == "what-it-calls-itself"


async def test_autopilot_decisions_of_a_forfeited_seat_are_recorded_and_checked(
    autojump_clock, tmp_path
):
    async def quit_(bot, request):
        bot.exit(1)

    path = tmp_path / "m.jsonl"
    _, entries = await play(AON, [Scripted("x", {2: quit_}), FakeBot("b"), FakeBot("c")], path)
    autopilot = [i for i, e in enumerate(entries) if e["type"] == "autopilot"]
    assert len(autopilot) > 10
    for i in autopilot:
        line, action = entries[i], entries[i + 1]
        assert line["seat"] == 0 and line["legal"]
        assert action["type"] == "action" and action["by"] == "autopilot"
        assert action["seat"] == 0 and action["action"] in line["legal"]
    replay_record(path)
    # A wrong autopilot pick (legal, but not what the generator gives) is caught by the replay.
    lines = path.read_text().splitlines()
    i = next(i for i in autopilot if len(entries[i]["legal"]) > 1)
    legal = entries[i]["legal"]
    tampered = dict(entries[i + 1], action=next(a for a in legal if a != entries[i + 1]["action"]))
    lines[i + 1] = json.dumps(tampered)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ReplayError, match="autopilot"):
        replay_record(path)


def rendered(path, seat=None) -> str:
    console = Console(file=io.StringIO(), width=300, record=True)
    console.print(render_replay(replay_record(path), seat))
    return console.export_text()


@pytest.mark.parametrize(
    "game, seed, options",
    [
        (ALL_FOURS, 5, None),  # anticlockwise
        (VINGT, 2, {"drop_out": True}),  # seats drop out
        (AON, 3, None),
    ],
)
async def test_replay_labels_each_card_with_the_seat_that_played_it(
    autojump_clock, tmp_path, game, seed, options
):
    class Dropper(FakeBot):  # seat 2 drops out of every Vingt-down deal it may leave
        async def on_request(self, request):
            drop = request["decision"] == "drop" and self.name == "p2"
            await self.send(
                {
                    "type": "action",
                    "id": request["id"],
                    "index": len(request["legal"]) - 1 if drop else 0,
                }
            )

    players = game.default_players
    path = tmp_path / "m.jsonl"
    _, entries = await play(
        game, [Dropper(f"p{i}") for i in range(players)], path, seed=seed, options=options
    )
    expected = []
    plays: list[str] = []
    for entry in entries:
        if entry["type"] != "event":
            continue
        data = entry["data"]
        if data["type"] == "play":
            plays.append(f"{data['card']} (seat {data['seat']})")
        elif data["type"] == "trick":
            expected.append(f"trick: {', '.join(plays)} -> seat {data['winner']}")
            plays = []
    if game is VINGT:
        assert any(len(line.split(", ")) < 4 for line in expected), "no deal with a dropped seat"
    shown = [
        line.strip() for line in rendered(path).splitlines() if line.strip().startswith("trick:")
    ]
    assert shown == expected
    shown_to_1 = [
        line.strip() for line in rendered(path, 1).splitlines() if line.strip().startswith("trick:")
    ]
    assert shown_to_1 == expected
    assert re.search(r"\(seat \d\)", shown[0])


async def test_a_forfeit_in_all_fours_places_teams_among_teams(autojump_clock, tmp_path):
    async def quit_(bot, request):
        bot.exit(1)

    bots = [Scripted("a", {1: quit_}), FakeBot("b"), FakeBot("c"), FakeBot("d")]
    result, entries = await play(ALL_FOURS, bots, tmp_path / "m.jsonl", seed=5)
    assert result.forfeited == (0,)
    assert result.placings == (2, 1, 2, 1)
    assert entries[-1]["placings"] == [2, 1, 2, 1]
    end = bots[1].messages("match_end")[0]
    assert end["placings"] == [2, 1, 2, 1] and end["forfeited"] == [0]


async def test_a_stale_reply_is_timed_from_the_request_it_names_in_a_later_match_too(
    autojump_clock, tmp_path
):
    """Reply times come from when each request was written (kept per seat and match): a bot's
    ids go on from one match to the next, and a reply naming a request of the match before
    has no time."""

    class Slow(FakeBot):
        """Answers after 100 ms; in its second match, its third request first gets two stale
        answers: to its first request of this match, and to its last of the match before."""

        def __init__(self, name):
            super().__init__(name)
            self.first = {}  # match id -> its first request id

        async def on_request(self, request):
            await trio.sleep(0.1)
            first = self.first.setdefault(request["match_id"], request["id"])
            if request["match_id"] == "m2" and request["id"] == first + 2:
                for named in (first, first - 1):
                    await self.send({"type": "action", "id": named, "index": 0})
            await super().on_request(request)

    slow = Slow("x")
    async with trio.open_nursery() as nursery:
        procs = [await connect_fake(nursery, b) for b in (slow, FakeBot("b"), FakeBot("c"))]
        for match_id in ("m0", "m2"):
            path = tmp_path / f"{match_id}.jsonl"
            await run_match(AON, procs, seed=3, match_id=match_id, record_path=path)
        for proc in procs:
            await proc.close()
    entries = [json.loads(line) for line in (tmp_path / "m2.jsonl").read_text().splitlines()]
    stale = [e for e in entries if e["type"] == "reply" and e["verdict"] == "stale"]
    first = next(e["id"] for e in entries if e["type"] == "request" and e["seat"] == 0)
    assert first > 1  # its ids went on from the first match
    assert [(e["id"], e["pending"]) for e in stale] == [(first, first + 2), (first - 1, first + 2)]
    # Only seat 0 takes time (100 ms a decision): three of its decisions since request `first`.
    assert stale[0]["ms"] == pytest.approx(300, abs=1)
    assert stale[1]["ms"] is None  # a request of the match before
    replay_record(tmp_path / "m2.jsonl")
