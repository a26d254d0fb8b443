"""How many deals the statistics need, with the sample bots (real processes, the real CLI).

    python3 benchmarks/stats.py [--games aon,vingt-down,...] [--seeds 3] [--demo] [--demo-max N]

1. ``arena compare`` of the heuristic bot (NEW) against the Python random bot (OLD), with three
   more random bots as the field, one game at a time, default SPRT (alpha = beta = 0.05, e1 =
   0.2 sd): the deals per table it needed to decide, the matches that took, and the verdict,
   for each seed (``--seed``) and their median.
2. ``--demo``: the stopping rule (``--until-confident``) on tournaments/demo.toml's four bots
   (dealt from a secret seed, SPEC 10.3: the deals, so the figures, differ from run to run):
   the deals per table it played, why it stopped, and the matches. ``--demo-max N`` first writes
   a copy of the file with ``stop = { max_deals = N }`` instead of its ``deals`` (the shipped
   file plays at most its 64 deals, All Fours 24).

Every run writes to a fresh temporary results file; figures are counts, not times (times are
printed for information only: the machine is shared).
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from benchmarks import common

ROOT = common.ROOT
HEURISTIC = ROOT / "sample_bots" / "heuristic" / "heuristic_bot.py"
RANDOM = ROOT / "sample_bots" / "python" / "random_bot.py"
GAMES = ("alles-oder-nichts", "vingt-down", "eight-rounds", "all-fours")


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
    looks = re.findall(r"^deals (\d+): LLR ([-+]\d+\.\d+)", out, re.M)
    played = re.search(r"^done: (\d+) played", out, re.M)
    if not looks or played is None:
        raise SystemExit(f"arena compare failed ({code}):\n{out}")
    verdict = {0: "better", 1: "not better", 2: "inconclusive"}.get(code, f"exit {code}")
    return {
        "deals": int(looks[-1][0]),
        "llr": float(looks[-1][1]),
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
    print(f"stopping rule on the demo's four bots ({path.name}, confidence 0.95, min 8 deals):")
    common.table(["tournament", "why it stopped", "matches", "seconds"],
                 [(path.name, reason, played.group(1), f"{seconds:.0f}")], left=2)  # fmt: skip


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--games", default=",".join(GAMES))
    parser.add_argument("--seeds", type=int, default=3, help="compare runs per game")
    parser.add_argument("--demo", action="store_true", help="also the stopping rule on the demo")
    parser.add_argument("--demo-max", type=int, default=None, metavar="N")
    parser.add_argument("--no-compare", action="store_true")
    parser.add_argument(
        "--max-deals", type=int, help="arena compare's most deals per table [its own: 1024]"
    )
    args = common.parse(
        parser,
        smoke={"games": "alles-oder-nichts", "seeds": 1, "max_deals": 2, "demo": False,
               "demo_max": None},
    )  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="arena-stats-bench-") as tmp:
        folder = Path(tmp)
        if not args.no_compare:
            rows = []
            for game in args.games.split(","):
                runs = [
                    compare_once(game, seed, folder, args.max_deals) for seed in range(args.seeds)
                ]
                deals = [r["deals"] for r in runs]
                rows.append(
                    (
                        game,
                        ", ".join(map(str, deals)),
                        f"{statistics.median(deals):g}",
                        f"{statistics.median(r['matches'] for r in runs):g}",
                        ", ".join(sorted({r["verdict"] for r in runs})),
                        ", ".join(f"{r['llr']:+.1f}" for r in runs),
                        f"{statistics.median(r['seconds'] for r in runs):.0f}",
                    )
                )
            print("arena compare heuristic --against random (field: 3 random bots), SPRT e1=0.2")
            common.table(
                ["game", "deals per table (each seed)", "median", "matches", "verdicts", "LLR",
                 "s each"],
                rows,
                left=2,
            )  # fmt: skip
        if args.demo or args.demo_max is not None:
            demo(args.demo_max, folder)


if __name__ == "__main__":
    main()
