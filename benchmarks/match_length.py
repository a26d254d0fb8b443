"""How long a match runs with random players: deals per match and decisions per match.

    python3 benchmarks/match_length.py [--game ID] [--seeds 2000] [--option NAME=VALUE ...]

For each game (or just --game) it plays ``--seeds`` seeded random matches (seeds 0..N-1, the
random player of arena.games.playthrough) and prints deals per match (mean, median, p90, max) and
decisions per match (mean, max), and how many matches ran to the game's ``max_deals`` option
when it has one ("at cap"). A "deal" is a public ``deal_start``, ``round_start`` or
``hand_start`` event. Without --option it measures the default options and then each boolean
option switched on alone (e.g. Vingt-down with and without ``drop_out``); with --option it
measures exactly those options.
"""

from __future__ import annotations

import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from arena.games import GAMES, GameSpec, OptionError, find_game
from arena.games.playthrough import random_playout
from benchmarks import common

DEAL_EVENTS = ("deal_start", "round_start", "hand_start")


def variants(spec: GameSpec, given: dict[str, str]) -> list[dict]:
    """The option sets to measure: ``given``, else the defaults and each boolean switched on."""
    if given:
        return [given]
    return [{}] + [{o.name: True} for o in spec.options if o.default is False]


def lengths(
    spec: GameSpec, players: int, seeds: int, options: dict
) -> tuple[list[int], list[int], int | None]:
    """Deals and decisions per match, and the ``max_deals`` cap in force (None without one)."""
    deals, steps = [], []
    cap = spec.resolve_options(options).get("max_deals")
    for seed in range(seeds):
        state = random_playout(spec, players, seed, options)
        deals.append(
            sum(1 for e in state.events if e.audience is None and e.data.get("type") in DEAL_EVENTS)
        )
        steps.append(len(state.actions))
    return deals, steps, cap


def percentile(values: list[int], fraction: float) -> int:
    """Nearest-rank percentile: the smallest value with at least ``fraction`` of values <= it."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(len(ordered) * fraction)) - 1]


def parse_options(pairs: list[str]) -> dict[str, str]:
    options = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise SystemExit(f"--option {pair!r}: expected NAME=VALUE")
        options[name.strip()] = value
    return options


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--game", help="only this game (id or alias)")
    parser.add_argument("--seeds", type=int, default=2000, help="matches per measurement")
    parser.add_argument("--players", type=int, help="player count (default: the game's default)")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a game option (repeatable); measures only this option set",
    )
    args = common.parse(parser, smoke={"seeds": 20})
    if args.seeds < 1:
        raise SystemExit(f"--seeds {args.seeds}: expected at least 1")
    given = parse_options(args.option)
    try:
        specs = [find_game(args.game)] if args.game else list(GAMES.values())
        for spec in specs:
            spec.resolve_options(given)
            spec.check_players(args.players or spec.default_players)
    except OptionError as error:
        raise SystemExit(f"error: {error}") from None
    rows = []
    for spec in specs:
        players = args.players or spec.default_players
        for options in variants(spec, given):
            deals, steps, cap = lengths(spec, players, args.seeds, options)
            at_cap = None if cap is None else sum(d >= cap for d in deals)
            shown = ",".join(f"{k}={v}" for k, v in options.items()) or "defaults"
            rows.append(
                (
                    spec.id,
                    players,
                    shown,
                    f"{statistics.mean(deals):.1f}",
                    f"{statistics.median(deals):g}",
                    percentile(deals, 0.9),
                    max(deals),
                    at_cap,
                    f"{statistics.mean(steps):.1f}",
                    max(steps),
                )
            )
    print(f"random players, {args.seeds} seeds each")
    common.table(
        ["game", "players", "options", "deals: mean", "median", "p90", "max", "at cap",
         "decisions: mean", "max"],
        rows,
        left=1,
    )  # fmt: skip


if __name__ == "__main__":
    main()
