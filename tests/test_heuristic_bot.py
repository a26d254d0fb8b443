"""The heuristic sample bot clearly beats the random sample bots, through the real referee.

Everything is seeded (the deals, the random bots via BOT_SEED and the match ids), so the figures
are the same on every run; the limits are generous so that speed never decides a decision.
Run with ``-s`` to see the standings.
"""

from __future__ import annotations

from sample_bot_specs import sample_bot

from arena.games import GAMES
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.process import BotProcess

CONTROL = TimeControl(decision_ms=20000, startup_ms=60000)
MATCHES_PER_GAME = 20


async def test_heuristic_outscores_random_bots_in_every_game(tmp_path):
    logs = tmp_path / "logs"
    heuristic = [
        await BotProcess.start(
            sample_bot("heuristic", tmp_path, f"heuristic-{n}"), time_control=CONTROL, log_dir=logs
        )
        for n in range(2)
    ]
    randoms = [
        await BotProcess.start(
            sample_bot("python", tmp_path, f"random-{n}", seed=n),
            time_control=CONTROL,
            log_dir=logs,
        )
        for n in range(3)
    ]
    lines = []
    try:
        for game in GAMES.values():
            players = game.default_players
            teams = game.teams(players)
            placing: dict[str, list[int]] = {"heuristic": [], "random": []}
            score: dict[str, list[int]] = {"heuristic": [], "random": []}
            firsts = 0
            for number in range(MATCHES_PER_GAME):
                seat = number % players
                # one heuristic seat, or a heuristic team (its partner is the second heuristic bot)
                mine = (
                    {seat}
                    if teams is None
                    else {s for s in range(players) if teams[s] == teams[seat]}
                )
                pool_h, pool_r = iter(heuristic), iter(randoms)
                seats = [next(pool_h) if s in mine else next(pool_r) for s in range(players)]
                result = await run_match(
                    game,
                    seats,
                    seed=1000 + number,
                    match_id=f"h-{game.id}-{number}",
                    time_control=CONTROL,
                )
                assert result.faults == (), [f.message for f in result.faults]
                for s in range(players):
                    side = "heuristic" if s in mine else "random"
                    placing[side].append(result.placings[s])
                    score[side].append(result.scores[s])
                firsts += result.placings[seat] == 1
            mean_h = sum(placing["heuristic"]) / len(placing["heuristic"])
            mean_r = sum(placing["random"]) / len(placing["random"])
            score_h = sum(score["heuristic"]) / len(score["heuristic"])
            score_r = sum(score["random"]) / len(score["random"])
            lines.append(
                f"{game.id:18} mean placing: heuristic {mean_h:.2f}, random {mean_r:.2f}; "
                f"mean score: heuristic {score_h:.1f}, random {score_r:.1f}; "
                f"heuristic first in {firsts}/{MATCHES_PER_GAME}"
            )
            # A real margin: first in at least 60 % of the matches, a full place better on
            # average (in the two-team game, where placings are only 1 and 2: 0.3, i.e. the
            # heuristic team wins at least 65 % of the matches).
            assert firsts >= 0.6 * MATCHES_PER_GAME, lines[-1]
            assert mean_r - mean_h >= (0.3 if teams is not None else 1.0), lines[-1]
    finally:
        for bot in heuristic + randoms:
            await bot.close()
        print("\n" + "\n".join(lines))
