"""Schedule building: seconds and peak memory per tournament size (goal: 50 bots at 6 seats < 0.1 s).

    python3 benchmarks/schedule.py [--repeat 3] [--tree PATH] [--huge]

Each case is built in a fresh subprocess (so its peak RSS is its own): the median wall and CPU
seconds of ``--repeat`` builds (CPU time is what to compare on a loaded machine) and the
process's peak RSS over what importing the arena takes. ``--tree PATH`` builds
with the arena of another checkout (e.g. ``--tree /work/main`` for the figures before a change),
so before and after come from the same script. ``--huge`` adds a 10**12-deal game (skip it for
trees that materialise the schedule: they run out of memory).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from benchmarks import common

CASES = {
    "demo (4 bots, 4 games)": (4, [(4, 64, 1), (5, 64, 1), (4, 64, 1), (4, 24, 2)]),
    "8 bots, 4 games": (8, [(4, 8, 1), (5, 8, 1), (4, 8, 1), (4, 8, 2)]),
    "20 bots, 4 games": (20, [(4, 8, 1), (5, 8, 1), (4, 8, 1), (4, 8, 2)]),
    "50 bots, 6 seats": (50, [(6, 8, 1)]),
    "50 bots, 6 seats, 10**12 deals": (50, [(6, 10**12, 1)]),
}

CHILD = r"""
import json, resource, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from arena.tournament.schedule import GamePlan, build_schedule
bot_count, games, repeat = json.loads(sys.argv[2])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
plans = [
    GamePlan(label=f"g{i}", game_id="x", players=p, deals=d, team_size=t)
    for i, (p, d, t) in enumerate(games)
]
bots = [f"bot{i}" for i in range(bot_count)]
times, cpu = [], []
for _ in range(repeat):
    start, start_cpu = time.perf_counter(), time.process_time()
    schedule = build_schedule(2026, bots, plans)
    first = schedule[0]  # a lazy schedule must still produce its matches
    times.append(time.perf_counter() - start)
    cpu.append(time.process_time() - start_cpu)
    del schedule
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base
print(json.dumps([statistics.median(times), statistics.median(cpu), peak / 1024]))
"""


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tree", type=Path, default=common.ROOT, help="the checkout to measure")
    parser.add_argument("--huge", action="store_true", help="add the 10**12-deal case")
    args = common.parse(parser, smoke={"repeat": 1})
    rows = []
    for name, (bot_count, games) in CASES.items():
        if "10**12" in name and not args.huge:
            continue
        spec = json.dumps([bot_count, games, args.repeat])
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(args.tree), spec],
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            failed = (out.stderr.strip().splitlines() or ["?"])[-1]
            rows.append((name, f"failed: {failed}", None, None))
            continue
        seconds, cpu_s, peak_mb = json.loads(out.stdout)
        rows.append((name, f"{seconds:.3f}", f"{cpu_s:.3f}", f"{peak_mb:.1f}"))
    print(f"tree {args.tree.resolve()}, median of {args.repeat} builds; {common.load_note()}")
    common.table(["case", "build s", "CPU s", "peak MB"], rows)


if __name__ == "__main__":
    main()
