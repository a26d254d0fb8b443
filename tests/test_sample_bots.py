"""Every sample bot plays every registered game to the end through the real referee, as real
processes; the three random bots (Python, JavaScript, C) make the very same choices."""

from __future__ import annotations

import json

import pytest
from sample_bot_specs import SAMPLE_BOTS, sample_bot

from arena.games import GAMES
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.process import BotProcess

# Generous limits: these tests are about behaviour, never about speed.
CONTROL = TimeControl(decision_ms=20000, startup_ms=60000)


async def start_seats(kind: str, tmp_path, count: int, seed: int = 7) -> list[BotProcess]:
    return [
        await BotProcess.start(
            sample_bot(kind, tmp_path, f"{kind}-{n}", seed),
            time_control=CONTROL,
            log_dir=tmp_path / "logs",
        )
        for n in range(count)
    ]


@pytest.mark.parametrize("kind", SAMPLE_BOTS)
async def test_sample_bot_plays_every_game_to_the_end(kind, tmp_path):
    most = max(spec.default_players for spec in GAMES.values())
    seats = await start_seats(kind, tmp_path, most)
    try:
        for number, game in enumerate(GAMES.values()):
            players = game.default_players
            result = await run_match(
                game,
                seats[:players],
                seed=100 + number,
                match_id=f"{kind}-{game.id}",
                time_control=CONTROL,
            )
            assert result.termination == "completed"
            assert result.faults == (), [f.message for f in result.faults]
            assert result.forfeited == ()
            assert len(result.scores) == players
            assert all(len(times) > 0 for times in result.decision_ms), "every seat was asked"
            assert all(seat.alive for seat in seats[:players])
    finally:
        for seat in seats:
            await seat.close()


def actions_of(record) -> list[str]:
    return [
        json.loads(line)["action"]
        for line in record.read_text().splitlines()
        if json.loads(line)["type"] == "action"
    ]


async def test_random_bots_in_three_languages_choose_alike(tmp_path):
    """Same seed, same match: the Python, JavaScript and C random bots play identical matches."""
    outcomes = {}
    for kind in ("python", "javascript", "c"):
        for game in GAMES.values():
            seats = await start_seats(kind, tmp_path, game.default_players, seed=12345)
            record = tmp_path / f"{kind}-{game.id}.jsonl"
            try:
                result = await run_match(
                    game,
                    seats,
                    seed=99,
                    match_id=f"same-{game.id}",
                    time_control=CONTROL,
                    record_path=record,
                )
            finally:
                for seat in seats:
                    await seat.close()
            assert result.faults == ()
            outcomes.setdefault(game.id, {})[kind] = (result.scores, actions_of(record))
    for game_id, by_kind in outcomes.items():
        python = by_kind["python"]
        for kind, outcome in by_kind.items():
            assert outcome == python, (
                f"{game_id}: the {kind} random bot chose differently from Python"
            )


async def test_random_bot_seed_changes_its_choices(tmp_path):
    game = next(iter(GAMES.values()))
    actions = []
    for seed in (1, 2):
        seats = await start_seats("python", tmp_path, game.default_players, seed=seed)
        record = tmp_path / f"seed-{seed}.jsonl"
        try:
            await run_match(
                game, seats, seed=5, match_id="m", time_control=CONTROL, record_path=record
            )
        finally:
            for seat in seats:
                await seat.close()
        actions.append(actions_of(record))
    assert actions[0] != actions[1]
