"""Search bot variants against the heuristic bot, in process, on a CPU-time budget.

    python3 benchmarks/search_duel.py GAME [--deals N] [--seed S] [--budget-ms MS] [--workers W]
        [--variant NAME:KEY=VALUE,KEY=VALUE ...]

Each deal is played in the four rotations of [search, heuristic, random, random] (duplicate
seating; the same match seed in every rotation), with the search module (sample_bots/search/
search.py) and the heuristic bot's tactics imported here, no bot processes. The search thinks for
``--budget-ms`` of *CPU time* (time.process_time), so its strength does not depend on how busy the
machine is: variants measured under different loads compare fairly. A variant sets module globals
of search.py (``base:`` sets none; ``z2:PRIOR_Z=2``; ``PRIOR_GAMES=`` takes a '+'-separated list),
and every variant plays the same deals with the same random bots' seeds.

Prints, per variant, the mean duplicate difference search - heuristic per deal (positive is better
for search; Vingt-down's low scores flipped) with a 95% t-interval over deals (arena.stats), the
worlds per decision and the CPU seconds; then, per variant after the first, its paired difference
from the first variant over the same deals (the deals' own luck cancels there).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from benchmarks import common

sys.path.insert(0, str(common.ROOT / "sample_bots" / "search"))
sys.path.insert(0, str(common.ROOT / "sample_bots" / "heuristic"))
import search
import tactics

from arena.games import find_game
from arena.stats.moments import estimate_values


def parse_variant(text: str) -> tuple[str, dict[str, Any]]:
    """``NAME:KEY=VALUE,...`` -> (NAME, {KEY: value typed like search.KEY})."""
    name, _, settings = text.partition(":")
    values: dict[str, Any] = {}
    for item in filter(None, settings.split(",")):
        key, _, raw = item.partition("=")
        if not hasattr(search, key):
            raise SystemExit(f"variant {name}: search.py has no setting {key!r}")
        current = getattr(search, key)
        if isinstance(current, bool):
            values[key] = raw in ("1", "true", "yes")
        elif isinstance(current, (set, frozenset)):
            values[key] = set(filter(None, raw.split("+")))
        else:
            values[key] = type(current)(raw)
    return name, values


def play_deal(
    game: str, deal: int, seed: int, budget_s: float, settings: dict[str, Any]
) -> tuple[float, int, int, float]:
    """One deal in the four rotations: (mean diff search - heuristic, worlds, decisions, CPU s)."""
    for key, value in settings.items():
        setattr(search, key, value)
    search.CLOCK = time.process_time
    spec = find_game(game)
    sign = -1 if game == "vingt-down" else 1
    diffs: list[float] = []
    worlds = decisions = 0
    cpu = time.process_time()
    for rotation in range(4):
        roles = ["search", "heuristic", "random", "random"]
        roles = roles[rotation:] + roles[:rotation]
        state = spec.new_match(4, {}, seed * 1000 + deal)
        rng = random.Random(f"{seed}:{deal}:{rotation}")
        while not state.is_over:
            seat = state.seat_to_move
            legal = list(state.legal_actions())
            role = roles[seat]
            if len(legal) == 1 or role == "random":
                action = rng.choice(legal)
            else:
                view = state.view(seat)
                events = [e.data for e in state.events if e.visible_to(seat)]
                if role == "heuristic":
                    action = tactics.choose(view, legal, events, rng)
                else:
                    prior = None
                    if game in search.PRIOR_GAMES:
                        prior = tactics.choose(view, legal, events, rng)
                    stats: dict[str, Any] = {}
                    action = search.choose(
                        view, legal, events, state.options, budget_s, rng, stats, prior=prior
                    )
                    worlds += stats.get("worlds", 0)
                    decisions += 1
            state.apply(action)
        scores = state.result().scores
        diffs.append(sign * (scores[roles.index("search")] - scores[roles.index("heuristic")]))
    return statistics.fmean(diffs), worlds, decisions, time.process_time() - cpu


def describe(values: list[float]) -> tuple[str, str]:
    """The mean and its 95% t-interval over deals (arena.stats)."""
    found = estimate_values(values, 0.95)
    if found.low is None or found.high is None:
        return f"{found.mean:+.2f}", "n/a"
    return f"{found.mean:+.2f}", f"[{found.low:+.2f}, {found.high:+.2f}]"


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("game", nargs="?", help="the game (id or alias)")
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--budget-ms", type=float, default=60.0, help="CPU ms per decision")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--variant", action="append", default=[], help="NAME:KEY=VALUE,...")
    args = common.parse(
        parser,
        smoke={"game": "alles-oder-nichts", "deals": 1, "budget_ms": 1.0, "workers": 1,
               "variant": ["base:", "z2:PRIOR_Z=2"]},
    )  # fmt: skip
    if args.game is None:
        parser.error("the game is required (e.g. vingt-down)")
    game = find_game(args.game).id
    variants = [parse_variant(v) for v in args.variant or ["base:"]]
    started = time.time()
    with ProcessPoolExecutor(args.workers) as pool:
        futures = {
            (name, deal): pool.submit(
                play_deal, game, deal, args.seed, args.budget_ms / 1000, settings
            )
            for deal in range(args.deals)
            for name, settings in variants
        }
        results: dict[tuple[str, int], tuple[float, int, int, float]] = {}
        for deal in range(args.deals):  # in order, with a progress line every 10 deals
            for name, _ in variants:
                results[(name, deal)] = futures[(name, deal)].result()
            if (deal + 1) % 10 == 0 and deal + 1 < args.deals:
                report(game, variants, results, deal + 1, args, started, final=False)
    report(game, variants, results, args.deals, args, started, final=True)


def report(
    game: str,
    variants: list[tuple[str, dict[str, Any]]],
    results: dict[tuple[str, int], tuple[float, int, int, float]],
    deals: int,
    args: argparse.Namespace,
    started: float,
    final: bool,
) -> None:
    """The figures over the first ``deals`` deals."""
    print(
        f"{game}: {deals} deals x 4 rotations, seed {args.seed}, search budget "
        f"{args.budget_ms:.0f} ms CPU a decision, {time.time() - started:.0f} s wall"
        + ("" if final else f" (so far, of {args.deals})"),
        flush=True,
    )
    first = variants[0][0]
    rows = []
    for name, settings in variants:
        played = [results[(name, d)] for d in range(deals)]
        worlds = sum(r[1] for r in played) / max(1, sum(r[2] for r in played))
        cpu = sum(r[3] for r in played)
        mean, interval = describe([r[0] for r in played])
        rows.append((name, mean, interval, f"{worlds:.0f}", f"{cpu:.0f}", settings or None))
    for name, _ in variants[1:]:
        paired = [results[(name, d)][0] - results[(first, d)][0] for d in range(deals)]
        mean, interval = describe(paired)
        rows.append((f"{name} minus {first}", mean, interval, None, None, "paired, same deals"))
    common.table(
        ["variant", "search-heuristic", "95% interval", "worlds/decision", "CPU s", "settings"],
        rows,
    )


if __name__ == "__main__":
    main()
