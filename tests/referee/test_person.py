"""A person's seat (arena.referee.person): a seat like a bot's, told exactly what a bot in that seat
is told, under the referee's clock; stopped from outside, its record says so. Fake bots and a
scripted person, under trio's autojump clock."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio

from arena.games import GAMES
from arena.referee.clock import TimeControl
from arena.referee.match import MatchStop, MatchStopped, run_match
from arena.referee.person import PERSON_NO_LIMIT_MS, seat_person
from arena.referee.record import read_record, replay_record
from arena.referee.results import FaultKind
from arena.referee.testing import FakeBot, connect_fake


class ScriptedPerson:
    """Keeps every message it is shown; answers with ``legal[-1]`` after ``think_s``."""

    def __init__(self, think_s: float = 0.0) -> None:
        self.shown: list[dict[str, Any]] = []
        self.think_s = think_s
        self.asked = trio.Event()

    async def show(self, message: dict[str, Any]) -> None:
        self.shown.append(message)

    async def choose(self, request: dict[str, Any]) -> str:
        self.asked.set()
        await trio.sleep(self.think_s)
        return request["legal"][-1]


class LastLegalBot(FakeBot):
    """What the scripted person does, as a bot: ``legal[-1]`` at once."""

    async def on_request(self, request: dict[str, Any]) -> None:
        await self.send({"type": "action", "id": request["id"], "action": request["legal"][-1]})


async def _match(game, first_seat, seed, record, *, control=TimeControl(), **kwargs):
    """One match: ``first_seat`` connected (a coroutine giving a BotProcess), fakes elsewhere;
    its result, or the MatchStopped it raised."""
    players = game.default_players
    async with trio.open_nursery() as nursery:
        seats = [await first_seat(nursery)]
        seats += [await connect_fake(nursery, FakeBot(f"b{i}")) for i in range(1, players)]
        try:
            return await run_match(
                game,
                seats,
                seed=seed,
                match_id="m",
                time_control=control,
                record_path=record,
                **kwargs,
            )
        except MatchStopped as stopped:
            return stopped
        finally:
            for seat in seats:
                await seat.close()
            nursery.cancel_scope.cancel()


@pytest.mark.parametrize("game_id", sorted(GAMES))
async def test_a_person_is_told_exactly_what_a_bot_in_that_seat_is_told(
    game_id, autojump_clock, tmp_path
):
    game = GAMES[game_id]
    person = ScriptedPerson()
    bot = LastLegalBot("human")

    async def person_seat(nursery):
        return await seat_person(nursery, person, "human", TimeControl())

    async def bot_seat(nursery):
        return await connect_fake(nursery, bot)

    by_person = await _match(game, person_seat, 5, tmp_path / "person.jsonl")
    by_bot = await _match(game, bot_seat, 5, tmp_path / "bot.jsonl")
    told_bot = [m for m in bot.received if m["type"] not in ("hello", "bye")]
    assert person.shown == told_bot  # the same messages, the same views, in the same order
    assert by_person.scores == by_bot.scores
    assert person.shown[-1]["type"] == "match_end"
    assert replay_record(tmp_path / "person.jsonl").result is not None


async def test_the_person_sees_each_event_as_it_happens(autojump_clock):
    """Events reach the person's seat when they happen, not with its next request: while it
    thinks about its first request nothing is pending, and the other seats' moves after its
    own arrive before its next request is written."""
    game = GAMES["alles-oder-nichts"]
    person = ScriptedPerson()
    got: list[tuple[str, int]] = []  # (message type, requests seen so far) as they arrive
    shown = person.show

    async def show(message):
        got.append((message["type"], sum(1 for m in person.shown if m["type"] == "request")))
        await shown(message)

    person.show = show  # type: ignore[method-assign]

    async def person_seat(nursery):
        return await seat_person(nursery, person, "human", TimeControl())

    await _match(game, person_seat, 3, None)
    # after its first action, the events of the others' bids came before its next request
    first = next(i for i, (kind, _) in enumerate(got) if kind == "request")
    after = got[first + 1 :]
    second = next(i for i, (kind, _) in enumerate(after) if kind == "request")
    assert any(kind == "event" for kind, _ in after[:second])


async def test_the_persons_own_limit_times_out_like_a_bots(autojump_clock, tmp_path):
    """With a limit of its own, a person who does not answer gets a timeout fault and the
    autopilot moves; the bots keep theirs. The header names the person's limit; the record
    checks."""
    game = GAMES["alles-oder-nichts"]
    person = ScriptedPerson(think_s=5.0)
    control = TimeControl(decision_ms=1000)

    async def person_seat(nursery):
        return await seat_person(nursery, person, "human", TimeControl(decision_ms=2000))

    result = await _match(
        game,
        person_seat,
        3,
        tmp_path / "r.jsonl",
        control=control,
        seat_decision_ms={0: 2000},
        max_faults=1000,
    )
    assert result.faults and all(f.kind is FaultKind.TIMEOUT for f in result.faults)
    assert all(f.seat == 0 for f in result.faults)
    requests = [m for m in person.shown if m["type"] == "request"]
    assert {m["time_left_ms"] for m in requests} == {2000}
    header = read_record(tmp_path / "r.jsonl")[0]
    assert header["seats"][0]["decision_ms"] == 2000
    assert "decision_ms" not in header["seats"][1]
    replay = replay_record(tmp_path / "r.jsonl")
    assert replay.result is not None and replay.result["faults"] == len(result.faults)


async def test_a_stopped_match_ends_its_record_with_the_reason(autojump_clock, tmp_path):
    game = GAMES["vingt-down"]
    person = ScriptedPerson(think_s=PERSON_NO_LIMIT_MS / 1000)
    stop = MatchStop()

    async def person_seat(nursery):
        async def stop_when_asked():
            await person.asked.wait()
            stop.stop("stopped by the person at seat 0 (Ctrl-C)")

        nursery.start_soon(stop_when_asked)
        return await seat_person(
            nursery, person, "human", TimeControl(decision_ms=PERSON_NO_LIMIT_MS)
        )

    stopped = await _match(
        game,
        person_seat,
        3,
        tmp_path / "r.jsonl.gz",
        seat_decision_ms={0: PERSON_NO_LIMIT_MS},
        stop=stop,
    )
    assert isinstance(stopped, MatchStopped)
    assert stopped.reason == "stopped by the person at seat 0 (Ctrl-C)"
    entries = read_record(tmp_path / "r.jsonl.gz")
    assert entries[-1]["type"] == "stopped" and entries[-1]["reason"] == stopped.reason
    assert entries[-2]["type"] == "request" and entries[-2]["seat"] == 0
    replay = replay_record(tmp_path / "r.jsonl.gz")
    assert replay.stopped == stopped.reason and replay.result is None


def test_a_stopped_line_anywhere_else_is_refused(tmp_path):
    """A stopped line must end the record: one after it is named."""
    from arena.referee.record import ReplayError

    path = tmp_path / "r.jsonl"
    lines = [json.loads(line) for line in (_stopped_record(tmp_path)).read_text().splitlines()]
    lines.append({"type": "result"})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(ReplayError, match="a 'result' line after the stopped line"):
        replay_record(path)


def _stopped_record(tmp_path):
    path = tmp_path / "stopped.jsonl"

    async def main():
        person = ScriptedPerson(think_s=100.0)
        stop = MatchStop()

        async def person_seat(nursery):
            async def stop_when_asked():
                await person.asked.wait()
                stop.stop("stopped")

            nursery.start_soon(stop_when_asked)
            return await seat_person(nursery, person, "human", TimeControl(decision_ms=200_000))

        stopped = await _match(
            GAMES["all-fours"], person_seat, 1, path, seat_decision_ms={0: 200_000}, stop=stop
        )
        assert isinstance(stopped, MatchStopped)

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return path
