"""`arena standings` on a large results file: from the cached fold vs a full refold.

    python3 benchmarks/standings.py [--matches 10000,100000,1000000] [--keep DIR] [--cached-only]

For each size, fills a results file with that many synthetic matches of four games (4 bots of 6
at a table, every deal in every rotation, 13 decisions per seat, some faults, the referee's
latency figures with a few strained matches), as a tournament stores them: each saved, folded
into the live standings and the fold cached every 1,000 matches and at the end. Then it runs
``arena standings FILE --json`` in a fresh process, first as it is (a finished tournament: the
cached fold covers every row), then the plain tables, then on a copy whose cache is the one of
1,000 matches before the end (``mid-run``: a running tournament caches every 1,000, so a reader
folds at most that many rows on top), and then on a copy whose cache was deleted (the refold
every standings call paid before the cache; ``--cached-only`` skips it, and it is skipped above
``--refold-up-to``). It prints the wall time, the CPU time and the peak RSS of each, the file's
size per match, the CPU time of each step of the command, and the startup alone
(``arena --version`` and ``arena standings --help``: the group imports a command's module only
when that command runs).

Filling a file of 1,000,000 matches takes a while (each match is saved and folded once, as in a
tournament: the cost of a tournament spread over its run); ``--keep DIR`` keeps the files for
the next run.
"""

from __future__ import annotations

import contextlib
import math
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from arena.referee.results import FaultRecord
from arena.tournament.standings import (
    FOLD_NAME,
    PERSIST_EVERY,
    LiveStandings,
    fold_from_bytes,
    fold_to_bytes,
)
from arena.tournament.store import ResultStore, StoredMatch
from benchmarks import common

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
    # decision times and latency figures drawn from pools (drawing 52 times per match would
    # cost more than saving it)
    times = [
        tuple(tuple(round(rng.lognormvariate(-1.5, 0.8), 2) for _ in range(13)) for _ in range(4))
        for _ in range(512)
    ]
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
                        (FaultRecord.read(1, bots[1], "timeout", 7, "no reply in time"),)
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
                        decision_ms=times[rng.getrandbits(9)],
                        duration_s=0.05,
                        referee=referee_figures(rng),
                    )
                    made += 1
                    if made == count:
                        return
        deal += 1


def referee_figures(rng: random.Random) -> dict[str, float | None]:
    """The referee's latency in one match: mostly calm, now and then near the 50 ms margin or
    the machine overloaded (about 0.3% of matches strained)."""
    p50 = round(rng.uniform(0.015, 0.06), 3)
    worst = round(rng.uniform(0.2, 2.0), 3) if rng.random() > 0.002 else 31.5
    load = round(rng.uniform(0.1, 0.9), 2) if rng.random() > 0.001 else 1.3
    return {"p50_ms": p50, "p99_ms": round(p50 * 4, 3), "max_ms": worst, "load_per_core": load}


MIDRUN = "bench-midrun"  # the fold cached 1,000 matches before the end (fold_state's name)


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
        for i, match in enumerate(synthetic(count, random.Random(count))):
            store.save(match)
            live.add(match)
            if i == count - PERSIST_EVERY - 1:
                store.save_fold_state(MIDRUN, fold_to_bytes(live.fold), store.last_seq())
        live.persist()
    return time.perf_counter() - start


CHILD = """
import resource, runpy, sys, time
sys.argv = ["arena", *sys.argv[1:]]
start = time.perf_counter()
try:
    runpy.run_module("arena", run_name="__main__")
except SystemExit:
    pass
seconds = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_SELF)
sys.stderr.write(f"{seconds} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}\\n")
"""


def arena_call(*args: str) -> tuple[float, float, float]:
    """(seconds, peak RSS in MB, CPU seconds) of ``arena ARGS`` in a fresh process (Python's
    start and the imports included; CPU is what to compare on a loaded machine)."""
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", CHILD, *args],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=common.ROOT,
        env={"PYTHONPATH": str(common.ROOT), "PATH": "/usr/bin:/bin"},
    )
    seconds = time.perf_counter() - start
    _inner, peak_kb, cpu = out.stderr.strip().splitlines()[-1].split()
    return seconds, int(peak_kb) / 1024, float(cpu)


PHASES = """
import io, json, sys, time
t0 = time.process_time()
import arena.cli
import arena.cli.standings  # what `arena standings` imports (the group imports it lazily)
from rich.console import Console
from arena.render.terminal import standings_tables
from arena.tournament.standings import cached_fold, standings_as_data
from arena.tournament.store import ResultStore
t1 = time.process_time()
store = ResultStore.open_read(sys.argv[1])
definition = store.definition()
t2 = time.process_time()
fold, _seq = cached_fold(store, [b["name"] for b in definition["bots"]],
                         [g["label"] for g in definition["games"]])
t3 = time.process_time()
data = standings_as_data(fold.standings())
data["overall"]["referee_latency"] = fold.latency().as_data()
text = json.dumps(data, indent=2)
t4 = time.process_time()
Console(file=io.StringIO(), width=120).print(standings_tables(fold.standings(), 120, with_pairs=True))
t5 = time.process_time()
print(f"{t1 - t0:.3f} {t2 - t1:.3f} {t3 - t2:.3f} {t4 - t3:.3f} {t5 - t4:.3f}")
"""


def phases(path: Path) -> tuple[str, ...]:
    """CPU seconds of each step of ``arena standings`` in one process: importing the arena's
    CLI, opening the file, the cached fold with the rows since (the tables built once), the
    JSON, the rendered tables."""
    out = subprocess.run(
        [sys.executable, "-c", PHASES, str(path)],
        check=True,
        capture_output=True,
        text=True,
        cwd=common.ROOT,
        env={"PYTHONPATH": str(common.ROOT), "PATH": "/usr/bin:/bin"},
    )
    return tuple(out.stdout.split())


@contextlib.contextmanager
def altered_copy(path: Path, *statements: str) -> Iterator[Path]:
    """A copy of the results file with ``statements`` run on it (deleted afterwards)."""
    copy = path.with_name(f"copy-{path.name}")
    shutil.copy(path, copy)
    db = sqlite3.connect(copy)
    with db:
        for statement in statements:
            db.execute(statement)
    db.close()
    try:
        yield copy
    finally:
        for leftover in (copy, *(copy.with_name(copy.name + end) for end in ("-wal", "-shm"))):
            leftover.unlink(missing_ok=True)


def cache_usable(path: Path) -> bool:
    """A kept file's cache is of this arena's fold (else the file is filled again)."""
    with ResultStore.open_read(path) as store:
        cached = store.fold_state(FOLD_NAME)
    return cached is not None and fold_from_bytes(cached[0]) is not None


def row(label: str, count: int, filled: float, size: float, *calls: tuple[float, ...]):
    """A table row: the command, the file, and wall s, CPU s and MB of each call (None: not run)."""
    figures = [
        cell
        for call in calls
        for cell in (
            (None,) * 3 if call is None else (f"{call[0]:.2f}", f"{call[2]:.2f}", f"{call[1]:.0f}")
        )
    ]
    fill = None if math.isnan(filled) else f"{filled:.1f}"
    return (label, count, fill, f"{size:.0f}", *figures)


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--matches", default="10000,100000,1000000")
    parser.add_argument("--keep", type=Path, help="keep the results files in this folder")
    parser.add_argument(
        "--refold-up-to",
        type=int,
        default=100000,
        help="time the refold (no cache) only up to this many matches (it holds them all)",
    )
    parser.add_argument("--cached-only", action="store_true", help="skip the refold call")
    args = common.parse(parser, smoke={"matches": "1200", "keep": None})
    folder = args.keep or Path(tempfile.mkdtemp(prefix="arena-standings-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    load_before = common.load_note()
    startups = []
    for args_ in (("--version",), ("standings", "--help")):
        startup = arena_call(*args_)
        startups.append(
            (
                f"arena {' '.join(args_)}",
                f"{startup[0]:.2f}",
                f"{startup[2]:.2f}",
                f"{startup[1]:.0f}",
            )
        )
    rows, steps = [], []
    try:
        for count in (int(c) for c in args.matches.split(",")):
            path = folder / f"results-{count}.sqlite"
            filled = math.nan
            if not path.exists() or not cache_usable(path):
                path.unlink(missing_ok=True)
                filled = fill(path, count)
            size = path.stat().st_size / count
            cached = arena_call("standings", str(path), "--json")
            tables = arena_call("standings", str(path))
            refold = None
            if not args.cached_only and count <= args.refold_up_to:
                with altered_copy(path, "DELETE FROM fold_state") as bare:
                    refold = arena_call("standings", str(bare), "--json")
            rows.append(row("--json", count, filled, size, cached, refold))
            rows.append(row("tables", count, filled, size, tables, None))
            if count > PERSIST_EVERY:
                with altered_copy(
                    path,
                    f"DELETE FROM fold_state WHERE name = '{FOLD_NAME}'",
                    f"UPDATE fold_state SET name = '{FOLD_NAME}' WHERE name = '{MIDRUN}'",
                ) as midrun:
                    behind = arena_call("standings", str(midrun), "--json")
                rows.append(row("mid-run", count, filled, size, behind, None))
            steps.append((count, *phases(path)))
            common.progress(f"{count} matches done")
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"{load_before} at the start, {common.load_note()} at the end")
    print("the start alone (the group imports a command's module only when that command runs)")
    common.table(["command", "wall s", "CPU s", "MB"], startups)
    print("arena standings FILE in a fresh process: from the cached fold, and refolded without it")
    common.table(
        ["command", "matches", "fill s", "B/match", "cached s", "CPU s", "MB", "refold s",
         "CPU s", "MB"],
        rows,
    )  # fmt: skip
    print("CPU s by step of arena standings --json, from the cached fold")
    common.table(
        ["matches", "imports", "open", "cached fold + rows since", "JSON", "tables"], steps
    )


if __name__ == "__main__":
    main()
