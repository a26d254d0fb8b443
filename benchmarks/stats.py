"""The verdicts' error rates, by simulation, with Monte Carlo standard errors; and how many deals
the statistics need with the sample bots (real processes, the real CLI).

    python3 benchmarks/stats.py [--runs 2000] [--tree PATH]           # the simulations
    python3 benchmarks/stats.py --real [--games aon,...] [--seeds 3] [--demo] [--demo-max N]

**Simulations** (the arena's own code on synthetic data; tests/stats/test_verdicts.py runs a
small form of each):

1. ``arena compare``'s test on one game, for each shape of per-deal differences of
   tests/stats/simulation.py (mean 0, sd 1): the false "better" rate (no true difference), the
   power (the "better" rate at +0.2 sd), the mean deals of each, and how often the interval
   printed at the stop holds the true mean (at +0.2 sd).
2. ``--until-confident``'s false "settled" rate: one table, three bots, the default stop rule
   (min 8, max ``--stop-max`` deals); one clearly better bot and two equal ones (the partial
   null), and three equal bots.
3. The ``=`` marks of the standings: four equal bots, 12 deals; how often the game's table, and
   the overall one, show a pair of neighbours as separated.

``--tree PATH`` runs them on another checkout's statistics (e.g. ``git worktree add /tmp/main
main``: the figures before a change); a checkout from before arena.stats.sequential is judged
by the rules it had (the normalized SPRT looking every 2 deals up to 1024 with its t-interval,
P(better) >= 95% for the marks and at every round).

**Real play** (``--real``): ``arena compare`` of the heuristic bot (NEW) against the Python
random bot (OLD), with three more random bots as the field, one game at a time, default test:
the deals per table it needed, the matches that took, and the verdict, for each seed and their
median. ``--demo``: the stopping rule (``--until-confident``) on tournaments/demo.toml's four
bots (dealt from a secret seed, SPEC 10.3: the deals, so the figures, differ from run to run):
the deals per table it played, why it stopped, and the matches. ``--demo-max N`` first
writes a copy of the file with ``stop = { max_deals = N }`` instead of its ``deals``. Every run
writes to a fresh temporary results file; figures are counts, not times (times are printed for
information only: the machine is shared).
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEURISTIC = ROOT / "sample_bots" / "heuristic" / "heuristic_bot.py"
RANDOM = ROOT / "sample_bots" / "python" / "random_bot.py"
GAMES = ("alles-oder-nichts", "vingt-down", "eight-rounds", "all-fours")


# -- simulations ----------------------------------------------------------------------------------


def simulation():
    """tests/stats/simulation.py of this checkout (loaded by path: with --tree, ``tests`` is
    the other checkout's), on the statistics importable now."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "verdict_simulation", ROOT / "tests" / "stats" / "simulation.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def rules(sim):
    """(name, looks, decide, settled) of the statistics importable now (see --tree)."""
    GAME, Decision = sim.GAME, sim.Decision
    try:
        from arena.stats.sequential import TestSettings, judge, looks
        from arena.tournament.runner import separated_at_look
    except ImportError:
        return rules_before(sim)
    settings = TestSettings()

    def decide(moments):
        found = judge(moments, settings)
        return Decision(str(found.verdict), found.low, found.high)

    def settled(standings, count):
        return separated_at_look(standings, [GAME[0]], count).settled(GAME[0])

    return "sequential t >= 5 / always-valid interval", looks(2048), decide, settled


def rules_before(sim):
    """The rules of a checkout from before arena.stats.sequential (62dffe2 and earlier)."""
    from arena.stats.moments import estimate
    from arena.stats.sprt import BETTER, NOT_BETTER, SprtSettings, llr, verdict

    GAME, Decision = sim.GAME, sim.Decision
    settings = SprtSettings()

    def decide(moments):
        found = verdict(llr({"g": moments}, settings), settings)
        interval = estimate(moments)
        name = {BETTER: "better", NOT_BETTER: "not better"}.get(found, "undecided")
        return Decision(name, interval.low, interval.high)

    def settled(standings, _count):
        return standings.settled(GAME[0])

    return "SPRT every 2 deals / t-interval", list(range(2, 1025, 2)), decide, settled


def simulate(runs: int, stop_runs: int, stop_max: int) -> None:
    import arena
    from arena.tournament.config import StopRule

    sim = simulation()
    ALLOWED, SHAPES, Rate = sim.ALLOWED, sim.SHAPES, sim.Rate
    compare_runs, separated_tables, stop_run = sim.compare_runs, sim.separated_tables, sim.stop_run
    name, looks, decide, settled = rules(sim)

    print(f"statistics of {Path(arena.__file__).parent.parent}: {name}")
    print(f"\n1. arena compare, one game, alpha = beta = 0.05, e1 = 0.2 sd, at most {looks[-1]}")
    print(f"   deals; {runs} runs per cell (false 'better' allowed: alpha, 2 alpha on 1%/30 sd)")
    print(
        f"   {'shape':<22} {'false better':>14} {'deals':>6} {'power 0.2 sd':>14} {'deals':>6}"
        f" {'coverage':>14}"
    )
    started = time.monotonic()
    for index, (shape, draw) in enumerate(SHAPES.items()):
        null = compare_runs(draw, 0.0, runs, 1000 + index, looks, decide)
        alt = compare_runs(draw, 0.2, runs, 2000 + index, looks, decide)
        wrong = null.rate("better")
        flag = " !" if wrong.value > ALLOWED[shape] * 0.05 + 2 * wrong.error else ""
        print(
            f"   {shape:<22} {str(wrong):>14}{flag:2} {null.mean_deals:>4.0f} "
            f"{str(alt.rate('better')):>14} {alt.mean_deals:>6.0f} {str(alt.coverage):>14}"
        )
    big = compare_runs(SHAPES["normal"], 1.2, runs, 3000, looks, decide)
    print(
        f"   a gain of 1.2 sd (about heuristic vs random): mean deals {big.mean_deals:.1f}, "
        f"median {statistics.median(r.deals for r in big.runs):g}"
    )
    print(f"   ({time.monotonic() - started:.0f} s)")

    rounds = StopRule(0.95, 8, stop_max).rounds(stop_max)
    print(f"\n2. --until-confident, confidence 0.95, rounds {rounds}; {stop_runs} runs each")
    started = time.monotonic()
    rng = random.Random(7)
    for label, skills in (
        ("one clearly better, two equal", {"a": 20.0, "b": 0.0, "c": 0.0}),
        ("three equal", {"a": 0.0, "b": 0.0, "c": 0.0}),
    ):
        stops = [stop_run(skills, rng, rounds, settled) for _ in range(stop_runs)]
        wrong = Rate(sum(s is not None for s in stops), stop_runs)
        print(f"   {label:<32} false 'settled' {wrong}")
    print(f"   ({time.monotonic() - started:.0f} s)")

    print(f"\n3. = marks, four equal bots, 12 deals; {runs} tables")
    started = time.monotonic()
    rng = random.Random(9)
    found = [separated_tables({b: 0.0 for b in "abcd"}, rng, 12) for _ in range(runs)]
    for index, scope in enumerate(("game table (dup)", "overall table (placing)")):
        wrong = Rate(sum(f[index] for f in found), runs)
        print(f"   {scope:<32} shows a separation in {wrong}")
    print(f"   ({time.monotonic() - started:.0f} s)")


# -- real play ----------------------------------------------------------------------------------


def arena(args: list[str]) -> tuple[int, str, float]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "arena", *args], cwd=ROOT, capture_output=True, text=True
    )
    return done.returncode, done.stdout + done.stderr, time.monotonic() - started


def compare_once(game: str, seed: int, folder: Path) -> dict:
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
        ]
    )
    looks = re.findall(r"^deals (\d+): (.*)$", out, re.M)
    played = re.search(r"^done: (\d+) played", out, re.M)
    if not looks or played is None:
        raise SystemExit(f"arena compare failed ({code}):\n{out}")
    verdict = {0: "better", 1: "not better", 2: "inconclusive"}.get(code, f"exit {code}")
    return {
        "deals": int(looks[-1][0]),
        "last": looks[-1][1],
        "matches": int(played.group(1)),
        "verdict": verdict,
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
    print(f"\nstopping rule on the demo's four bots ({path.name}, confidence 0.95, min 8 deals):")
    print(f"  {reason}")
    print(f"  {played.group(1)} matches played in {seconds:.0f} s")


def real(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="arena-stats-bench-") as tmp:
        folder = Path(tmp)
        if not args.no_compare:
            print("arena compare heuristic --against random (field: 3 random bots), default test")
            print(
                f"{'game':<18} {'deals per table (each seed)':<30} {'median':>6} "
                f"{'matches':>8}  verdicts"
            )
            for game in args.games.split(","):
                runs = [compare_once(game, seed, folder) for seed in range(args.seeds)]
                deals = [r["deals"] for r in runs]
                print(
                    f"{game:<18} {', '.join(map(str, deals)):<30} "
                    f"{statistics.median(deals):>6g} "
                    f"{statistics.median(r['matches'] for r in runs):>8g}  "
                    f"{', '.join(sorted({r['verdict'] for r in runs}))} "
                    f"({statistics.median(r['seconds'] for r in runs):.0f} s each; last look: "
                    f"{runs[0]['last']})"
                )
        if args.demo or args.demo_max is not None:
            demo(args.demo_max, folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="simulated runs per cell")
    parser.add_argument("--stop-runs", type=int, default=400, help="runs of the stopping rule")
    parser.add_argument("--stop-max", type=int, default=1024, help="its most deals")
    parser.add_argument("--tree", type=Path, help="simulate another checkout's statistics")
    parser.add_argument("--real", action="store_true", help="real play instead of simulations")
    parser.add_argument("--games", default=",".join(GAMES))
    parser.add_argument("--seeds", type=int, default=3, help="compare runs per game")
    parser.add_argument("--demo", action="store_true", help="also the stopping rule on the demo")
    parser.add_argument("--demo-max", type=int, default=None, metavar="N")
    parser.add_argument("--no-compare", action="store_true")
    args = parser.parse_args()
    if args.real:
        real(args)
        return
    # the statistics from --tree (or this checkout); the simulation helpers from this one
    sys.path.insert(0, str(args.tree.resolve()) if args.tree else str(ROOT))
    simulate(args.runs, args.stop_runs, args.stop_max)


if __name__ == "__main__":
    main()
