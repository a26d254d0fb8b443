"""`arena replay` shows every card, in every game: each card played (to a trick, or onto Eight
Rounds' patience table, which no trick line shows) and, with `--deal`, the cards dealt to each
seat in every deal of the match, not only the first."""

from __future__ import annotations

import io
import json
import random
import re
from types import SimpleNamespace

import pytest
import trio
from rich.console import Console

from arena.games import GAMES
from arena.referee.match import run_match
from arena.referee.record import replay_record
from arena.referee.testing import FakeBot, connect_fake
from arena.render.replay import render_deal, render_replay

DEAL_STARTS = ("round_start", "deal_start", "hand_start", "redeal")


class RandomBot(FakeBot):
    """A fake bot that picks a seeded random legal action (a varied match, in process)."""

    def __init__(self, name: str, seed: int) -> None:
        super().__init__(name)
        self.rng = random.Random(seed)

    async def on_request(self, request):
        legal = request["legal"]
        await self.send(
            {"type": "action", "id": request["id"], "index": self.rng.randrange(len(legal))}
        )


async def record_match(game_id: str, path, seed: int = 7) -> list[dict]:
    """Play a match of fake bots into the record ``path``; its full lines."""
    game = GAMES[game_id]
    async with trio.open_nursery() as nursery:
        bots = [
            await connect_fake(nursery, RandomBot(f"p{n}", seed + n))
            for n in range(game.default_players)
        ]
        try:
            await run_match(game, bots, seed=seed, match_id="m", record_path=path)
        finally:
            for bot in bots:
                await bot.close()
    return [json.loads(line) for line in path.read_text().splitlines()]


def events_of(entries: list[dict]) -> list[dict]:
    return [entry["data"] for entry in entries if entry["type"] == "event"]


def rendered(renderable) -> str:
    console = Console(file=io.StringIO(), width=2000, record=True)
    console.print(renderable)
    return console.export_text()


def cards_shown(text: str) -> list[tuple[int, str]]:
    """(seat, card) of every card the replay shows played: in trick lines and play lines."""
    shown: list[tuple[int, str]] = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("trick: "):
            shown += [(int(seat), card) for card, seat in re.findall(r"(\S+) \(seat (\d+)\)", line)]
        elif line.startswith("play: "):
            found = re.fullmatch(r"play: seat=(\d+), card=(\S+)", line)
            assert found, line
            shown.append((int(found[1]), found[2]))
    return shown


@pytest.mark.parametrize("game", sorted(GAMES))
async def test_every_card_played_is_shown_in_order(autojump_clock, tmp_path, game):
    path = tmp_path / "m.jsonl"
    entries = await record_match(game, path)
    played = [(e["seat"], e["card"]) for e in events_of(entries) if e["type"] == "play"]
    assert cards_shown(rendered(render_replay(replay_record(path), None))) == played
    # Every card played is public: each seat's view shows them all too.
    assert cards_shown(rendered(render_replay(replay_record(path), 1))) == played


async def test_eight_rounds_shows_the_patience_round_play_by_play(autojump_clock, tmp_path):
    path = tmp_path / "m.jsonl"
    entries = await record_match("eight-rounds", path)
    events = events_of(entries)
    start = next(
        i for i, e in enumerate(events) if e.get("round") == 8 and e["type"] == "round_start"
    )
    expected = [
        f"play: seat={e['seat']}, card={e['card']}"
        if e["type"] == "play"
        else f"pass: seat={e['seat']}"
        for e in events[start:]
        if e["type"] in ("play", "pass")
    ]
    assert any(line.startswith("pass") for line in expected)
    lines = [
        line.strip() for line in rendered(render_replay(replay_record(path), None)).splitlines()
    ]
    patience = lines[lines.index(next(line for line in lines if "round_start: round=8" in line)) :]
    assert [line for line in patience if line.startswith(("play: ", "pass: "))] == expected


@pytest.mark.parametrize("game", sorted(GAMES))
async def test_the_deal_view_shows_every_deal_of_the_match(autojump_clock, tmp_path, game):
    path = tmp_path / "m.jsonl"
    entries = await record_match(game, path)
    players = entries[0]["players"]
    deals: list[dict[int, list[str]]] = []  # per deal: each seat's cards, as the events deal them
    for event in events_of(entries):
        if event["type"] in DEAL_STARTS:
            deals.append({})
        elif event["type"] == "deal":
            deals[-1].setdefault(event["seat"], []).extend(event["cards"])
    assert len(deals) > 1
    rotation = SimpleNamespace(
        match_id="m", rotation=0, bots=[f"p{n}" for n in range(players)],
        scores=[0] * players, placings=[1] * players, forfeited=(),
    )  # fmt: skip
    text = rendered(render_deal(replay_record(path), [rotation])).splitlines()
    cut = next(line.index("r0*") for line in text if "r0*" in line)  # the rotation's column
    lines = [line[:cut].strip() for line in text]
    for seat in range(players):
        first = next(i for i, line in enumerate(lines) if line.startswith(f"{seat}: "))
        cell = [lines[first].removeprefix(f"{seat}: ")] + lines[first + 1 : first + len(deals)]
        for number, (line, dealt) in enumerate(zip(cell, deals, strict=True)):
            name, _, cards = line.partition(": ")
            assert name.split()[0] in ("round", "deal", "hand", "redeal"), line
            assert sorted(cards.replace("+", " ").split()) == sorted(dealt.get(seat, [])), (
                f"seat {seat}, deal {number + 1}: {line}"
            )
