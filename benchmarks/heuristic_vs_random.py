"""How much better the heuristic sample bot plays than random, measured in-process (no pipes).

    python3 benchmarks/heuristic_vs_random.py [GAME ...] [--matches N]

One heuristic seat against random seats; the heuristic seat rotates over the seats and the seeds
are fixed, so the figures are repeatable. Prints mean score and mean placing per game, and how
often the heuristic seat finished first.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from benchmarks import common

sys.path.insert(0, str(common.ROOT / "sample_bots" / "heuristic"))
import tactics

from arena.games import GAMES, find_game


def play_match(spec, players: int, seed: int, heuristic_seats: set[int]):
    state = spec.new_match(players, {}, seed)
    rng = random.Random(seed)
    seen = [0] * players  # how many events each seat has been shown
    events: list[list[dict]] = [[] for _ in range(players)]
    while not state.is_over:
        seat = state.seat_to_move
        for event in state.events[seen[seat] :]:
            if event.visible_to(seat):
                events[seat].append(event.data)
        seen[seat] = len(state.events)
        legal = state.legal_actions()
        if seat in heuristic_seats:
            action = tactics.choose(state.view(seat), list(legal), events[seat], rng)
            assert action in legal, (spec.id, action, legal)
        else:
            action = rng.choice(legal)
        state.apply(action)
    return state.result()


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("games", nargs="*", default=list(GAMES))
    parser.add_argument("--matches", type=int, default=40)
    args = common.parse(parser, smoke={"matches": 4})
    rows = []
    for name in args.games:
        spec = find_game(name)
        players = spec.default_players
        teams = spec.teams(players)
        scores, places, wins, others = [], [], 0, []
        for seed in range(args.matches):
            seat = seed % players
            mine = (
                {seat} if teams is None else {s for s in range(players) if teams[s] == teams[seat]}
            )
            result = play_match(spec, players, seed, mine)
            scores.append(result.scores[seat])
            places.append(result.placings[seat])
            wins += result.placings[seat] == 1
            others.extend(result.scores[s] for s in range(players) if s not in mine)
        n = len(scores)
        rows.append(
            (
                spec.id,
                n,
                players,
                f"{sum(scores) / n:.1f}",
                f"{sum(others) / len(others):.1f}",
                f"{sum(places) / n:.2f}",
                f"{wins}/{n}",
            )
        )
    print("one heuristic seat (rotating) against random seats, fixed seeds")
    common.table(
        ["game", "matches", "players", "heuristic score", "random score", "heuristic placing",
         "first"],
        rows,
    )  # fmt: skip


if __name__ == "__main__":
    main()
