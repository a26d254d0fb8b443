"""`arena standings` on a large results file: from the cached fold vs a full refold.

    python benchmarks/standings.py [--matches 10000,100000] [--keep DIR]

For each size, fills a results file with that many synthetic matches of four games (4 bots of 6
at a table, every deal in every rotation, 13 decisions per seat, some faults), as a tournament
stores them: each saved, folded into the live standings and the fold cached every 1,000
matches and at the end. Then it runs ``arena standings FILE --json`` in a fresh process, first
as it is (the cached fold, extended by nothing) and then on a copy whose cache was deleted (the
refold every standings call paid before the cache), and prints the wall time and peak RSS of
each, with the file's size per match. Filling a file of 1,000,000 matches takes a while (each
match is folded once, as in a tournament): the cost of a tournament spread over its run.
"""

from __future__ import annotations

import argparse
import math
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.tournament.standings import LiveStandings
from arena.tournament.store import ResultStore, StoredFault, StoredMatch

BOTS = [f"bot{i}" for i in range(6)]
GAMES = [
    ("aon", "alles-oder-nichts"),
    ("vd", "vingt-down"),
    ("er", "eight-rounds"),
    ("af", "all-fours"),
]
TABLES = 15  # C(6, 4) groups of bots


def synthetic(count: int, rng: random.Random):
    """``count`` stored matches in schedule order."""
    made = 0
    deal = 0
    while True:
        for label, game_id in GAMES:
            for table in range(TABLES):
                group = rng.sample(BOTS, 4)
                for rotation in range(4):
                    bots = tuple(group[(k - rotation) % 4] for k in range(4))
                    scores = tuple(rng.randint(0, 40) for _ in range(4))
                    placings = tuple(1 + sorted(scores, reverse=True).index(s) for s in scores)
                    faults = (
                        (StoredFault(1, bots[1], "timeout", 7, "no reply in time"),)
                        if rng.random() < 0.01
                        else ()
                    )
                    yield StoredMatch(
                        match_id=f"{label}/t{table}/d{deal}/r{rotation}",
                        game=label,
                        game_id=game_id,
                        table=table,
                        deal=deal,
                        rotation=rotation,
                        seed=rng.getrandbits(64),
                        players=4,
                        options={},
                        bots=bots,
                        scores=scores,
                        placings=placings,
                        teams=(0, 1, 0, 1) if label == "af" else None,
                        forfeited=(),
                        faults=faults,
                        decision_ms=tuple(
                            tuple(round(rng.lognormvariate(-1.5, 0.8), 2) for _ in range(13))
                            for _ in range(4)
                        ),
                        duration_s=0.05,
                    )
                    made += 1
                    if made == count:
                        return
        deal += 1


def fill(path: Path, count: int) -> float:
    definition = {
        "bots": [{"name": b} for b in BOTS],
        "games": [{"label": label, "game": game_id} for label, game_id in GAMES],
    }
    start = time.perf_counter()
    with ResultStore.open_for_run(
        path, name="bench", fingerprint="x", definition=definition
    ) as store:
        live = LiveStandings(store, BOTS, [label for label, _ in GAMES])
        for match in synthetic(count, random.Random(count)):
            store.save(match)
            live.add(match)
        live.persist()
    return time.perf_counter() - start


CHILD = """
import resource, runpy, sys, time
sys.argv = ["arena", "standings", sys.argv[1], "--json"]
start = time.perf_counter()
try:
    runpy.run_module("arena", run_name="__main__")
except SystemExit:
    pass
seconds = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_SELF)
sys.stderr.write(f"{seconds} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}\\n")
"""


def standings_call(path: Path) -> tuple[float, float, float]:
    """(seconds, peak RSS in MB, CPU seconds) of ``arena standings PATH --json`` in a fresh
    process (from the start of the command, imports included; CPU is what to compare on a loaded
    machine)."""
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    seconds = time.perf_counter() - start
    _inner, peak_kb, cpu = out.stderr.strip().splitlines()[-1].split()
    return seconds, int(peak_kb) / 1024, float(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", default="10000,100000")
    parser.add_argument("--keep", type=Path, help="keep the results files in this folder")
    parser.add_argument("--cached-only", action="store_true", help="skip the refold call")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="arena-standings-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(
        f"{'matches':>9} {'fill s':>8} {'B/match':>8} {'cached s':>9} {'MB':>6} {'refold s':>9} {'MB':>6}"
    )
    try:
        for count in (int(c) for c in args.matches.split(",")):
            path = folder / f"results-{count}.sqlite"
            if not path.exists():
                filled = fill(path, count)
            else:
                filled = float("nan")
            size = path.stat().st_size / count
            cached = standings_call(path)
            bare = folder / f"refold-{count}.sqlite"
            shutil.copy(path, bare)
            db = sqlite3.connect(bare)
            with db:
                db.execute("DELETE FROM fold_state")
            db.close()
            refold = standings_call(bare) if not args.cached_only else (math.nan,) * 3
            bare.unlink()
            print(
                f"{count:9d} {filled:8.1f} {size:8.0f} {cached[0]:9.2f} {cached[2]:6.2f} "
                f"{cached[1]:6.0f} {refold[0]:9.2f} {refold[2]:6.2f} {refold[1]:6.0f}",
                flush=True,
            )
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
