"""`arena replay` re-derives a whole record (SPEC 8): a corpus of single mutations of real records
of all four games (each played by the referee against in-memory fake bots, one of which faults
three ways and forfeits) must each be caught with one line naming the line, never a traceback."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
import trio
import trio.testing

from arena.games import find_game
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.record import ReplayError, replay_record
from arena.referee.testing import FakeBot, connect_fake

CONTROL = TimeControl(decision_ms=100, margin_ms=10)
GAMES = {"alles-oder-nichts": 3, "vingt-down": 4, "eight-rounds": 3, "all-fours": 4}


class Troublesome(FakeBot):
    """Faults three ways, then forfeits (max_faults 3): garbage, a late answer, an illegal one."""

    def __init__(self, name):
        super().__init__(name)
        self.asked = 0

    async def on_request(self, request):
        self.asked += 1
        if self.asked == 1:
            await self.send(b"this is not json\n")
        elif self.asked == 2:
            await trio.sleep(0.15)  # past its 110 ms: a timeout, then a stale answer
            await self.send({"type": "action", "id": request["id"], "action": request["legal"][0]})
        elif self.asked == 3:
            await self.send({"type": "action", "id": request["id"], "action": "no-such-card"})
        else:
            await super().on_request(request)


async def _play(game_id: str, players: int, path: Path) -> None:
    game = find_game(game_id)
    async with trio.open_nursery() as nursery:
        bots = [Troublesome("trouble") if s == 1 else FakeBot(f"fake{s}") for s in range(players)]
        procs = [await connect_fake(nursery, bot, time_control=CONTROL) for bot in bots]
        try:
            await run_match(
                game,
                procs,
                seed=7,
                match_id=f"{game_id}/t0/d0/r0",
                time_control=CONTROL,
                record_path=path,
            )
        finally:
            for proc in procs:
                await proc.close()


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> dict[str, list[dict]]:
    folder = tmp_path_factory.mktemp("records")
    out = {}
    for game_id, players in GAMES.items():
        path = folder / f"{game_id}.jsonl"
        trio.run(_play, game_id, players, path, clock=trio.testing.MockClock(autojump_threshold=0))
        replay_record(path)  # the real record passes
        out[game_id] = [json.loads(line) for line in path.read_text().splitlines()]
    return out


Entries = list[dict]


def _index(entries: Entries, kind: str, which: int = 0, **fields) -> int:
    found = [
        i
        for i, e in enumerate(entries)
        if e["type"] == kind and all(e.get(k) == v for k, v in fields.items())
    ]
    return found[which]


def _set(kind, field, value, which=0, **match):
    def mutate(entries):
        i = _index(entries, kind, which, **match)
        entries[i][field] = value(entries[i][field]) if callable(value) else value

    return mutate


def _delete(kind, which=0, **match):
    def mutate(entries):
        del entries[_index(entries, kind, which, **match)]

    return mutate


def _other_placings(placings):
    return [p % len(placings) + 1 for p in placings]


def _autopilot_made_request(entries):
    i = _index(entries, "autopilot")
    entries[i] = {**entries[i], "type": "request", "id": 99, "time_left_ms": 100}


def _duplicate_event(entries):
    i = _index(entries, "event", 5)
    entries.insert(i + 1, copy.deepcopy(entries[i]))


def _other_bot_action(entries):
    i = _index(entries, "action", 0, by="bot", seat=0)
    request = max(j for j in range(i) if entries[j]["type"] == "request")
    legal = entries[request]["legal"]
    if len(legal) < 2:
        i = _index(entries, "action", 1, by="bot", seat=0)
        request = max(j for j in range(i) if entries[j]["type"] == "request")
        legal = entries[request]["legal"]
    entries[i]["action"] = next(a for a in legal if a != entries[i]["action"])


def _swap_hands(entries):
    view = entries[_index(entries, "deal")]["view"]
    view["hands"][0], view["hands"][1] = view["hands"][1], view["hands"][0]


MUTATIONS: dict[str, Callable[[Entries], None]] = {
    "result placings": _set("result", "placings", _other_placings),
    "result forfeited": _set("result", "forfeited", []),
    "result fault count": _set("result", "faults", lambda n: n + 1),
    "result scores": _set("result", "scores", lambda s: [s[0] + 1, *s[1:]]),
    "result teams": _set("result", "teams", [0, 0, 1, 1]),
    "result deleted": _delete("result"),
    "a line after the result": lambda e: e.append({"type": "event", "n": 10**6}),
    "fault deleted": _delete("fault"),
    "fault kind": _set("fault", "kind", "crash", 0),
    "fault forfeited flag": _set("fault", "forfeited", True, 0),
    "last fault not forfeited": _set("fault", "forfeited", False, -1),
    "request deleted": _delete("request", 3),
    "reply deleted": _delete("reply"),
    "reply verdict": _set("reply", "verdict", "malformed", 0, verdict="ok"),
    "shuffle deleted": _delete("shuffle", -1),
    "shuffle cards": _set("shuffle", "cards", lambda c: [*c[1:], c[0]]),
    "autopilot made a request": _autopilot_made_request,
    "last autopilot action relabelled bot": _set("action", "by", "bot", -1, by="autopilot"),
    "event duplicated": _duplicate_event,
    "event audience": _set("event", "audience", [0], 2),
    "event data": _set("event", "data", {"type": "nothing"}, 3),
    "another bot action": _other_bot_action,
    "action id": _set("action", "id", 12345, 0, by="bot"),
    "request legal reversed": _set("request", "legal", lambda legal: [*legal, "XX"], 2),
    "deal hands swapped": _swap_hands,
    "header seed": _set("header", "seed", lambda s: s + 1),
    "header max_faults": _set("header", "max_faults", 10),
    "header seat renamed": _set(  # seat 1's fault lines name its bot
        "header", "seats", lambda s: [s[0], {**s[1], "bot": "x"}, *s[2:]]
    ),
    "type: legal a string": _set("request", "legal", "AS", 1),
    "type: seats a string": _set("header", "seats", "everyone"),
    "type: event n a string": _set("event", "n", "3", 4),
    "type: players a string": _set("header", "players", "4"),
    "type: sent_match_id a number": _set("header", "sent_match_id", 7),
    "type: a seat's sent_name null": _set(
        "header", "seats", lambda s: [{**s[0], "sent_name": None}, *s[1:]]
    ),
    "type: action a list": _set("action", "action", ["AS"], 2),
    "type: fault seat null": _set("fault", "seat", None, 1),
}


@pytest.mark.parametrize("game_id", list(GAMES))
def test_every_single_mutation_is_caught_with_one_line(records, game_id, tmp_path):
    missed, caught = [], 0
    for name, mutate in MUTATIONS.items():
        entries = copy.deepcopy(records[game_id])
        mutate(entries)
        path = tmp_path / "mutated.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in entries))
        try:
            replay_record(path)
        except ReplayError as error:
            message = str(error)
            assert "\n" not in message and message.startswith(f"{path} "), (name, message)
            caught += 1
        else:
            missed.append(name)
    assert missed == [], f"{game_id}: passed the check: {missed}"
    assert caught == len(MUTATIONS) >= 30


def test_the_corpus_covers_every_kind_of_line(records):
    kinds = {e["type"] for entries in records.values() for e in entries}
    assert kinds == {
        "header",
        "shuffle",
        "deal",
        "event",
        "request",
        "reply",
        "fault",
        "autopilot",
        "action",
        "result",
    }
    faults = {f["kind"] for entries in records.values() for f in entries if f["type"] == "fault"}
    assert faults == {"malformed", "timeout", "illegal"}
    verdicts = {r["verdict"] for e in records.values() for r in e if r["type"] == "reply"}
    assert {"ok", "malformed", "stale"} <= verdicts


def test_replay_check_exits_non_zero_naming_the_line(records, tmp_path):
    import subprocess
    import sys

    entries = copy.deepcopy(records["all-fours"])
    path = tmp_path / "good.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    root = Path(__file__).resolve().parents[2]

    def replay(file):
        return subprocess.run(
            [sys.executable, "-m", "arena", "replay", "--check", str(file)],
            cwd=root,
            capture_output=True,
            text=True,
        )

    good = replay(path)
    assert good.returncode == 0 and good.stdout.startswith("record checked: every line agrees")
    line = 1 + _index(entries, "action", -1, by="autopilot")
    MUTATIONS["last autopilot action relabelled bot"](entries)
    bad_path = tmp_path / "bad.jsonl"
    bad_path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    bad = replay(bad_path)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert bad.stderr.startswith(f"Error: replay failed: {bad_path} line {line}: ")
    assert bad.stderr.count("\n") == 1
