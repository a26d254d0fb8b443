"""Every message a seat receives holds only what that seat's view and events allow.

The match is replayed from its record; for each seat, the exact stream of messages it was sent is
rebuilt from the rules (match_start, the events visible to it in order, requests carrying its own
view) and compared with what it received, byte-level JSON equal. Hidden cards are checked too.
"""

import json
import random

import pytest
import trio

from arena.games import GAMES
from arena.referee.match import run_match
from arena.referee.record import replay_record
from arena.referee.testing import FakeBot, connect_fake


class RandomFake(FakeBot):
    def __init__(self, name, seed):
        super().__init__(name)
        self.rng = random.Random(seed)

    async def on_request(self, request):
        if self.rng.random() < 0.05:  # now and then an illegal answer: fault messages too
            await self.send({"type": "action", "id": request["id"], "action": "nope"})
        else:
            await self.send(
                {"type": "action", "id": request["id"], "action": self.rng.choice(request["legal"])}
            )


@pytest.mark.parametrize("game_id", sorted(GAMES))
@pytest.mark.parametrize("seed", [1, 2])
async def test_each_seat_receives_exactly_what_it_may_see(autojump_clock, tmp_path, game_id, seed):
    spec = GAMES[game_id]
    players = spec.default_players
    bots = [RandomFake(f"bot{i}", seed * 10 + i) for i in range(players)]
    async with trio.open_nursery() as nursery:
        procs = [await connect_fake(nursery, bot) for bot in bots]
        await run_match(
            spec,
            procs,
            seed=seed,
            match_id="vis",
            max_faults=1000,
            record_path=tmp_path / "m.jsonl",
        )
        for proc in procs:
            await proc.close()

    replay = replay_record(tmp_path / "m.jsonl")
    state = spec.new_match(players, replay.header["options"], seed)
    sent = [bot.transport.written_messages() for bot in bots]
    cursor = [2] * players  # after hello and match_start
    seen_events = [0] * players
    for seat in range(players):
        assert sent[seat][0]["type"] == "hello" and sent[seat][1]["type"] == "match_start"
        assert sent[seat][1]["seat"] == seat

    def expect_events(seat):
        visible = [e.data for e in state.events if e.visible_to(seat)]
        while seen_events[seat] < len(visible):
            message = sent[seat][cursor[seat]]
            if message["type"] == "fault":  # fault notices go only to the faulting seat
                assert any(f.seat == seat and f.request_id == message["id"] for f in replay.faults)
                cursor[seat] += 1
                continue
            assert message == {
                "type": "event",
                "match_id": "vis",
                "event": json.loads(json.dumps(visible[seen_events[seat]])),
            }
            cursor[seat] += 1
            seen_events[seat] += 1

    for entry in replay.entries:
        if entry["type"] == "request":
            seat = entry["seat"]
            expect_events(seat)
            while sent[seat][cursor[seat]]["type"] == "fault":
                cursor[seat] += 1
            message = sent[seat][cursor[seat]]
            cursor[seat] += 1
            assert message["type"] == "request" and message["id"] == entry["id"]
            assert message["view"] == json.loads(json.dumps(state.view(seat)))
            assert message["legal"] == state.legal_actions()
            hidden = state.hidden_from(seat)
            text = json.dumps(message)
            assert not any(f'"{card}"' in text for card in hidden)
        elif entry["type"] == "action":
            state.apply(entry["action"])
    for seat in range(players):
        expect_events(seat)
        rest = [m["type"] for m in sent[seat][cursor[seat] :]]
        assert rest in (["match_end", "bye"], ["fault", "match_end", "bye"])
