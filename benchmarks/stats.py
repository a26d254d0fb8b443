"""The verdicts' error rates, by simulation, with Monte Carlo standard errors; and how many deals
the statistics need with the sample bots (real processes, the real CLI).

    python3 benchmarks/stats.py [--runs 2000] [--stop-runs 300] [--stop-max 1024] [--tree PATH]
    python3 benchmarks/stats.py --real [--games aon,...] [--seeds 3] [--demo] [--demo-max N]

**Simulations** (the arena's own rules on synthetic data; tests/stats/test_verdicts.py runs a
small form of each):

1. ``arena compare``'s test on one game, for each shape of per-deal differences of
   tests/stats/simulation.py (mean 0, sd 1): the false "better" rate (no true difference), the
   power (the "better" rate at +0.2 sd), the mean deals of each, and how often the interval
   printed at the stop holds the true mean (at +0.2 sd); then a gain of 1.2 sd (about the
   heuristic bot against random ones).
2. ``--until-confident``'s false "settled" rate: one table, three bots, the stop rule with
   confidence 0.95, min 8 deals and at most ``--stop-max``; one clearly better bot and two
   equal ones (the partial null), and three equal bots.
3. The ``=`` marks of the standings: four equal bots, 12 deals; how often the game's table, and
   the overall one, show a pair of neighbours as separated.

``--tree PATH`` runs them on another checkout's statistics (the figures before a change); a
checkout from before arena.stats.sequential is judged by the rules it had (the normalized SPRT
looking every 2 deals up to 1024 with its t-interval; P(better) >= 95% for the marks and at
every round).

**Real play** (``--real``): ``arena compare`` of the heuristic bot (NEW) against the Python
random bot (OLD), with three more random bots as the field, one game at a time, default test:
the deals per table it needed, the matches that took, and the verdict, for each seed and their
median. ``--demo``: the stopping rule (``--until-confident``) on tournaments/demo.toml's four
bots (dealt from a secret seed, SPEC 10.3: the deals, so the figures, differ from run to run):
the deals per table it played, why it stopped, and the matches. ``--demo-max N`` first writes a
copy of the file with ``stop = { max_deals = N }`` instead of its ``deals``. Every run writes to
a fresh temporary results file; figures are counts, not times (times are printed for
information only: the machine is shared).
"""

from __future__ import annotations

import importlib.util
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from benchmarks import common

ROOT = common.ROOT
HEURISTIC = ROOT / "sample_bots" / "heuristic" / "heuristic_bot.py"
RANDOM = ROOT / "sample_bots" / "python" / "random_bot.py"
GAMES = ("alles-oder-nichts", "vingt-down", "eight-rounds", "all-fours")


# -- simulations ----------------------------------------------------------------------------------


def simulation() -> ModuleType:
    """tests/stats/simulation.py of this checkout (loaded by path: with --tree, ``tests`` is
    the other checkout's), on the statistics importable now."""
    spec = importlib.util.spec_from_file_location(
        "verdict_simulation", ROOT / "tests" / "stats" / "simulation.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def rules(sim: ModuleType) -> tuple[str, list[int], Any, Any]:
    """(name, looks, decide, settled) of the statistics importable now (see --tree)."""
    try:
        from arena.stats.sequential import TestSettings, judge, looks
        from arena.tournament.runner import separated_at_look
    except ImportError:
        return rules_before(sim)
    settings = TestSettings()

    def decide(moments):
        found = judge(moments, settings)
        return sim.Decision(str(found.verdict), found.low, found.high)

    def settled(standings, count):
        return separated_at_look(standings, [sim.GAME[0]], count).settled(sim.GAME[0])

    return "sequential, t >= 5, always-valid interval", looks(2048), decide, settled


def rules_before(sim: ModuleType) -> tuple[str, list[int], Any, Any]:
    """The rules of a checkout from before arena.stats.sequential (main before issue 37)."""
    from arena.stats.moments import estimate
    from arena.stats.sprt import BETTER, NOT_BETTER, SprtSettings, llr, verdict

    settings = SprtSettings()

    def decide(moments):
        found = verdict(llr({"g": moments}, settings), settings)
        interval = estimate(moments)
        name = {BETTER: "better", NOT_BETTER: "not better"}.get(found, "undecided")
        return sim.Decision(name, interval.low, interval.high)

    def settled(standings, _count):
        return standings.settled(sim.GAME[0])

    return "SPRT every 2 deals, t-interval", list(range(2, 1025, 2)), decide, settled


def simulate(runs: int, stop_runs: int, stop_max: int) -> None:
    import arena
    from arena.tournament.config import StopRule

    sim = simulation()
    name, looks, decide, settled = rules(sim)
    print(f"statistics of {Path(arena.__file__).parent.parent}: {name}; {common.load_note()}")
    print(
        f"\n1. arena compare, one game, alpha = beta = 0.05, e1 = 0.2 sd, at most {looks[-1]} "
        f"deals; {runs} runs per cell (false 'better' allowed: alpha; 2 alpha with 1% of deals "
        "losing 30 sd; '!' above it by more than two standard errors)"
    )
    started = time.monotonic()
    rows = []
    for index, (shape, draw) in enumerate(sim.SHAPES.items()):
        null = sim.compare_runs(draw, 0.0, runs, 1000 + index, looks, decide)
        alt = sim.compare_runs(draw, 0.2, runs, 2000 + index, looks, decide)
        wrong = null.rate("better")
        flag = " !" if wrong.value > sim.ALLOWED[shape] * 0.05 + 2 * wrong.error else ""
        rows.append(
            (
                shape,
                f"{wrong}{flag}",
                f"{null.mean_deals:.0f}",
                str(alt.rate("better")),
                f"{alt.mean_deals:.0f}",
                str(alt.coverage),
            )
        )
    common.table(
        ["shape", "false better", "deals", "power at 0.2 sd", "deals", "coverage at the stop"],
        rows,
    )
    big = sim.compare_runs(sim.SHAPES["normal"], 1.2, runs, 3000, looks, decide)
    median = statistics.median(r.deals for r in big.runs)
    print(f"a gain of 1.2 sd: mean deals {big.mean_deals:.1f}, median {median:g}")
    common.progress(f"compare: {time.monotonic() - started:.0f} s")

    rounds = StopRule(0.95, 8, stop_max).rounds(stop_max)
    print(f"\n2. --until-confident, confidence 0.95, rounds {rounds}; {stop_runs} runs each")
    started = time.monotonic()
    rng = random.Random(7)
    rows = []
    for label, skills in (
        ("one clearly better, two equal", {"a": 20.0, "b": 0.0, "c": 0.0}),
        ("three equal", {"a": 0.0, "b": 0.0, "c": 0.0}),
    ):
        stops = [sim.stop_run(skills, rng, rounds, settled) for _ in range(stop_runs)]
        rows.append((label, str(sim.Rate(sum(s is not None for s in stops), stop_runs))))
    common.table(["bots", "false settled"], rows)
    common.progress(f"stop rule: {time.monotonic() - started:.0f} s")

    print(f"\n3. = marks, four equal bots, 12 deals; {runs} tables")
    rng = random.Random(9)
    found = [sim.separated_tables({b: 0.0 for b in "abcd"}, rng, 12) for _ in range(runs)]
    common.table(
        ["table", "shows a separation"],
        [
            (scope, str(sim.Rate(sum(f[index] for f in found), runs)))
            for index, scope in enumerate(("the game's (dup)", "overall (placing)"))
        ],
    )


# -- real play ----------------------------------------------------------------------------------


def arena(args: list[str]) -> tuple[int, str, float]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "arena", *args], cwd=ROOT, capture_output=True, text=True
    )
    return done.returncode, done.stdout + done.stderr, time.monotonic() - started


def compare_once(game: str, seed: int, folder: Path, max_deals: int | None = None) -> dict:
    field = [a for i in range(3) for a in ("--field", f"f{i}={sys.executable} {RANDOM} {i + 10}")]
    code, out, seconds = arena(
        [
            "compare",
            f"heuristic={sys.executable} {HEURISTIC} 1",
            "--against",
            f"random={sys.executable} {RANDOM} 2",
            *field,
            "--games",
            game,
            "--seed",
            str(seed),
            "--results",
            str(folder / f"{game}-{seed}.sqlite"),
            *(["--max-deals", str(max_deals)] if max_deals else []),
        ]
    )
    looks = re.findall(r"^deals (\d+): (.*)$", out, re.M)
    played = re.search(r"^done: (\d+) played", out, re.M)
    if not looks or played is None or code not in (0, 1, 2):
        raise SystemExit(f"arena compare failed ({code}):\n{out}")
    return {
        "deals": int(looks[-1][0]),
        "last": looks[-1][1],
        "matches": int(played.group(1)),
        "verdict": {0: "better", 1: "not better", 2: "inconclusive"}[code],
        "seconds": seconds,
    }


def demo(max_deals: int | None, folder: Path) -> None:
    source = ROOT / "tournaments" / "demo.toml"
    path = source
    if max_deals is not None:
        text = source.read_text()
        text = re.sub(r"^deals = 64.*$", f"stop = {{ max_deals = {max_deals} }}", text, flags=re.M)
        path = folder / "demo-stop.toml"
        path.write_text(text)
    code, out, seconds = arena(
        ["tournament", str(path), "--until-confident", "--results", str(folder / "demo.sqlite")]
    )
    reason = next((line for line in out.splitlines() if line.startswith("stopped")), None)
    played = re.search(r"^done: (\d+) played", out, re.M)
    if code != 0 or reason is None or played is None:
        raise SystemExit(f"arena tournament failed ({code}):\n{out}")
    print(f"stopping rule on the demo's four bots ({path.name}, confidence 0.95, min 8 deals):")
    common.table(["tournament", "why it stopped", "matches", "seconds"],
                 [(path.name, reason, played.group(1), f"{seconds:.0f}")], left=2)  # fmt: skip


def real(games: str, seeds: int, max_deals: int | None, with_demo: bool, demo_max: int | None):
    with tempfile.TemporaryDirectory(prefix="arena-stats-bench-") as tmp:
        folder = Path(tmp)
        rows = []
        for game in games.split(","):
            runs = [compare_once(game, seed, folder, max_deals) for seed in range(seeds)]
            deals = [r["deals"] for r in runs]
            rows.append(
                (
                    game,
                    ", ".join(map(str, deals)),
                    f"{statistics.median(deals):g}",
                    f"{statistics.median(r['matches'] for r in runs):g}",
                    ", ".join(sorted({r["verdict"] for r in runs})),
                    f"{statistics.median(r['seconds'] for r in runs):.0f}",
                    runs[0]["last"],
                )
            )
        print("arena compare heuristic --against random (field: 3 random bots), default test")
        common.table(
            ["game", "deals per table (each seed)", "median", "matches", "verdicts", "s each",
             "the last look of seed 0"],
            rows,
            left=2,
        )  # fmt: skip
        if with_demo or demo_max is not None:
            demo(demo_max, folder)


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--runs", type=int, default=2000, help="simulated runs per cell")
    parser.add_argument("--stop-runs", type=int, default=300, help="runs of the stopping rule")
    parser.add_argument("--stop-max", type=int, default=1024, help="its most deals")
    parser.add_argument("--tree", type=Path, help="simulate another checkout's statistics")
    parser.add_argument("--real", action="store_true", help="real play instead of simulations")
    parser.add_argument("--games", default=",".join(GAMES))
    parser.add_argument("--seeds", type=int, default=3, help="compare runs per game")
    parser.add_argument("--demo", action="store_true", help="also the stopping rule on the demo")
    parser.add_argument("--demo-max", type=int, default=None, metavar="N")
    parser.add_argument(
        "--max-deals", type=int, help="arena compare's most deals per table [its own: 2048]"
    )
    args = common.parse(
        parser,
        smoke={"runs": 20, "stop_runs": 2, "stop_max": 16, "games": "alles-oder-nichts",
               "seeds": 1, "max_deals": 2, "demo": False, "demo_max": None},
    )  # fmt: skip
    if args.real:
        real(args.games, args.seeds, args.max_deals, args.demo, args.demo_max)
        return
    # the statistics from --tree (or this checkout); the simulation helpers from this one
    sys.path.insert(0, str(args.tree.resolve()) if args.tree else str(ROOT))
    simulate(args.runs, args.stop_runs, args.stop_max)


if __name__ == "__main__":
    main()
