"""Random playouts per second for each registered game, in-process (no referee, no pipes).

    python3 benchmarks/engine.py [--seconds 2] [--game ID]

Prints playouts/s and steps (decisions)/s per game and player count. With the optional
``open_spiel`` package installed, also OpenSpiel's oh_hell driven from Python, in the same run.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from arena.games import GAMES, find_game
from benchmarks import common


def measure(spec, players: int, seconds: float) -> tuple[float, float]:
    # The same chooser as the OpenSpiel run below, so both sides pay the same for choosing.
    chooser = random.Random(99)
    playouts = steps = 0
    start = time.perf_counter()
    seed = 0
    while time.perf_counter() - start < seconds:
        state = spec.new_match(players, {}, seed)
        seed += 1
        while not state.is_over:
            legal = state.legal_actions()
            state.apply(legal[chooser.randrange(len(legal))])
            steps += 1
        playouts += 1
    elapsed = time.perf_counter() - start
    return playouts / elapsed, steps / elapsed


def measure_open_spiel(seconds: float) -> tuple[float, float] | None:
    try:
        import pyspiel  # type: ignore
    except ImportError:
        return None
    game = pyspiel.load_game("oh_hell", {"players": 4})
    rng = random.Random(99)
    playouts = steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.randrange(len(legal))])
                steps += 1
        playouts += 1
    elapsed = time.perf_counter() - start
    return playouts / elapsed, steps / elapsed


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument("--game", help="only this game (id or alias)")
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="interleaved repeats for the OpenSpiel comparison (median is shown)",
    )
    args = common.parse(parser, smoke={"seconds": 0.05, "repeats": 1})
    specs = [find_game(args.game)] if args.game else list(GAMES.values())
    rows = []
    for spec in specs:
        for players in spec.player_counts:
            playouts, steps = measure(spec, players, args.seconds)
            rows.append((spec.id, players, f"{playouts:,.0f}", f"{steps:,.0f}"))
    print(f"random playouts in process, {args.seconds:g} s each; {common.load_note()}")
    common.table(["game", "players", "playouts/s", "steps/s"], rows)
    if measure_open_spiel(0.01) is None:
        print("skipped: the comparison with OpenSpiel's oh_hell needs the Python package "
              "open_spiel (pip install -e '.[bench]')")  # fmt: skip
        return
    # The machine is noisy: alternate short runs of both and compare medians of the same run.
    aon, ours, theirs = find_game("alles-oder-nichts"), [], []
    for _ in range(args.repeats):
        ours.append(measure(aon, 4, args.seconds)[1])
        theirs.append(measure_open_spiel(args.seconds)[1])
    ratios = [a / b for a, b in zip(ours, theirs)]
    print(f"interleaved, {args.repeats} x {args.seconds:g} s each, decisions/s, median "
          f"(lowest-highest); goal: ours/theirs >= 1.0")  # fmt: skip
    common.table(
        ["engine", "decisions/s", "ours/theirs"],
        [
            ("alles-oder-nichts 4p (pure Python)", common.median_spread(ours, 0),
             common.median_spread(ratios, 2)),
            ("open_spiel oh_hell 4p (C++ via pybind)", common.median_spread(theirs, 0), None),
        ],
    )  # fmt: skip


if __name__ == "__main__":
    main()
