"""Random playouts per second for each registered game, in-process (no referee, no pipes).

    python benchmarks/engine.py [--seconds 2] [--game ID]

Prints playouts/s and steps (decisions)/s per game and player count. With the optional
``open_spiel`` package installed, also OpenSpiel's oh_hell driven from Python, in the same run.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.games import GAMES, find_game


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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument("--game", help="only this game (id or alias)")
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="interleaved repeats for the OpenSpiel comparison (median is shown)",
    )
    args = parser.parse_args()
    specs = [find_game(args.game)] if args.game else list(GAMES.values())
    print(f"{'game':<22} {'players':>7} {'playouts/s':>12} {'steps/s':>12}")
    for spec in specs:
        for players in spec.player_counts:
            playouts, steps = measure(spec, players, args.seconds)
            print(f"{spec.id:<22} {players:>7} {playouts:>12,.0f} {steps:>12,.0f}")
    if measure_open_spiel(0.01) is None:
        print("open_spiel: not installed (pip install open_spiel) - oh_hell comparison skipped")
        return
    # The machine is noisy: alternate short runs of both and compare medians of the same run.
    aon, ours, theirs = find_game("alles-oder-nichts"), [], []
    for _ in range(args.repeats):
        ours.append(measure(aon, 4, args.seconds)[1])
        theirs.append(measure_open_spiel(args.seconds)[1])
    ours_median, theirs_median = statistics.median(ours), statistics.median(theirs)
    print(f"\ninterleaved, {args.repeats} x {args.seconds}s each, decisions/s (median):")
    print(f"  alles-oder-nichts 4p (pure Python)       {ours_median:>10,.0f}")
    print(f"  open_spiel oh_hell 4p (C++ via pybind)   {theirs_median:>10,.0f}")
    print(
        f"  ratio ours/theirs                        {ours_median / theirs_median:>10.2f}"
        "   (goal >= 1.0)"
    )


if __name__ == "__main__":
    main()
