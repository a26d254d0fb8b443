"""The demo tournament on this machine's worker processes against a Dask cluster, in one run.

    python3 benchmarks/cluster.py [--deals 64] [--repeat 1] [--setups local,local:1,local:2,loopback]

Plays tournaments/demo.toml (``--deals`` shortens it; by default the whole demo, 1056 matches,
about 25 s on 2 quiet cores, so that the few seconds of start-up are not the whole run; its bots:
heuristic, Python, JavaScript, helper) once per setup, interleaved over ``--repeat`` rounds, each
run in a fresh Python process (as ``arena tournament`` runs) into a fresh results file:

- ``local``: the default executor, one worker process per core (``--workers``);
- ``local:1``, ``local:2``: ``--cluster local:N``, a Dask LocalCluster of N worker processes;
- ``loopback``: a "multi-machine" cluster on 127.0.0.1: a ``dask scheduler`` and two
  ``dask worker`` processes (``--nthreads`` = cores / 2) started here, each with its own bot cache
  folder (``TRICK_ARENA_CACHE``) and its own empty working directory, so the bots reach them
  only as shipped packages (unpacked in the first round, found in the cache afterwards);
- ``loopback-pinned``: the same, each worker started under ``taskset -c N`` on a core of its own
  (its bots inherit it), as ``local`` and ``local:N`` pin theirs.

For each it prints matches/s over the whole run (start-up included), the ratio to ``local``, the
same less the start-up (the time until the first match began: starting the worker processes or
the cluster, shipping the bots, the warm-up), the start-up seconds, Dask's own time per match (per
worker: the time between its tasks plus the time in a task outside its matches, summed, divided
by the matches) and the 1-minute load average at the end of the runs. Goals on 2 cores: the
cluster at 2 workers >= 0.9x the local workers, Dask's own time per match under 1 ms. The machine
is shared: compare figures from one run only, and mind the load.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from benchmarks import common

ROOT = common.ROOT

from arena.tournament.config import TournamentConfig, load_config
from arena.tournament.runner import Progress, run_tournament
from arena.tournament.schedule import build_schedule
from arena.tournament.store import ResultStore, StoredMatch

DEFAULT_DEALS = 64  # the whole demo: 1056 matches, about 25 s on 2 quiet cores


@dataclasses.dataclass
class Run:
    matches: int
    elapsed_s: float
    startup_s: float
    overhead_ms_per_match: float | None


def demo(deals: int) -> TournamentConfig:
    config = load_config(ROOT / "tournaments" / "demo.toml")
    # python3 is this interpreter: the bots' folders travel to cache folders outside the
    # checkout, where a version manager's python3 (pyenv) could be another Python
    bots = tuple(
        dataclasses.replace(
            b, cwd=str(ROOT), argv=tuple(sys.executable if a == "python3" else a for a in b.argv)
        )
        for b in config.bots
    )
    games = tuple(dataclasses.replace(g, deals=min(g.deals, deals)) for g in config.games)
    return dataclasses.replace(
        config, bots=bots, games=games, records=False, seed=common.SEED, public_seed=True
    )


def play(config: TournamentConfig, setup: str, address: str | None, folder: Path) -> Run:
    config = dataclasses.replace(config, output=folder, results=folder / "results.sqlite")
    cluster = None if setup == "local" else (address or setup)
    schedule = build_schedule(config.seed, [b.name for b in config.bots], config.games)
    store = ResultStore.open_for_run(
        config.results,
        name=config.name,
        fingerprint=config.fingerprint(),
        definition=config.definition(),
        restart=True,
    )
    first_began: list[float] = []

    def on_stored(stored: StoredMatch) -> None:
        if not first_began:  # the first match stored began its duration before now
            first_began.append(time.perf_counter() - start - stored.duration_s)

    try:
        start = time.perf_counter()
        summary = trio.run(
            functools.partial(
                run_tournament,
                config,
                schedule,
                store,
                Progress(total=0),
                workers=config.worker_count(),
                cluster=cluster,
                on_stored=on_stored,
            )
        )
        elapsed = time.perf_counter() - start
    finally:
        store.close()
    assert summary.played == len(schedule), (summary.played, len(schedule))
    overhead = 1000 * summary.cluster_overhead_s / summary.played if cluster is not None else None
    return Run(summary.played, elapsed, max(0.0, first_began[0]), overhead)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_loopback(folder: Path, pinned: bool = False) -> tuple[str, list[subprocess.Popen]]:
    """A scheduler and two workers, each worker with its own cache and empty cwd; ``pinned``:
    each worker (and so the bots it starts) on a core of its own, with ``taskset``, as an
    organiser can pin a ``dask worker`` from outside (SPEC 10.8)."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    threads = max(1, (os.cpu_count() or 1) // 2)
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler_cwd = folder / "scheduler"
    scheduler_cwd.mkdir(parents=True)
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1"]
            + ["--port", str(port), "--no-dashboard"],
            cwd=scheduler_cwd,
            env=env,
            **quiet,
        )
    ]
    for index in range(2):
        home = folder / f"worker{index}"
        (home / "cwd").mkdir(parents=True)
        taskset = ["taskset", "-c", str(index % (os.cpu_count() or 1))] if pinned else []
        processes.append(
            subprocess.Popen(
                taskset
                + [sys.executable, "-m", "distributed.cli.dask_worker", address]
                + ["--nthreads", str(threads), "--no-dashboard", "--host", "127.0.0.1"]
                + ["--local-directory", str(home / "scratch")],
                cwd=home / "cwd",
                env=dict(env, TRICK_ARENA_CACHE=str(home / "cache")),
                **quiet,
            )
        )
    return address, processes


def stop(processes: list[subprocess.Popen]) -> None:
    for process in reversed(processes):
        process.send_signal(signal.SIGINT)
    for process in reversed(processes):
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def play_apart(
    args: argparse.Namespace, setup: str, address: str | None, folder: Path
) -> tuple[Run, float]:
    """One run in a fresh Python process, as ``arena tournament`` runs: nothing one run started
    or imported (a LocalCluster's forkserver, Dask itself) is there for the next one. Returns
    the run and the machine's load average (1 minute) at its end."""
    command = [sys.executable, __file__, "--one", setup, "--deals", str(args.deals)]
    command += ["--folder", str(folder)] + (["--address", address] if address else [])
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    run = Run(**json.loads(output.strip().splitlines()[-1]))
    return run, os.getloadavg()[0]


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--deals", type=int, default=DEFAULT_DEALS, help="deals per table, at most")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--setups", default="local,local:1,local:2,loopback,loopback-pinned")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a single run, in its own process
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    args = common.parse(parser, smoke={"deals": 1, "repeat": 1, "setups": "local:1"})
    if args.one:
        run = play(demo(args.deals), args.one, args.address, args.folder)
        print(json.dumps(dataclasses.asdict(run)))
        return
    common.require_module("distributed", "pip install -e '.[cluster]'", args.smoke)
    common.require_tools(args.smoke, "node")  # the demo's JavaScript bot
    setups = args.setups.split(",")
    runs: dict[str, list[Run]] = {s: [] for s in setups}
    loads: dict[str, list[float]] = {s: [] for s in setups}
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        clusters = {  # each loopback setup's scheduler and workers, up before the runs
            setup: start_loopback(folder / setup, pinned=setup == "loopback-pinned")
            for setup in setups
            if setup.startswith("loopback")
        }
        processes = [p for _address, started in clusters.values() for p in started]
        try:
            for round_ in range(args.repeat):
                for setup in setups:
                    where = folder / f"{setup.replace(':', '')}-{round_}"
                    address = clusters[setup][0] if setup in clusters else None
                    run, load = play_apart(args, setup, address, where)
                    runs[setup].append(run)
                    loads[setup].append(load)
                    common.progress(
                        f"round {round_ + 1} {setup}: {run.matches} matches in "
                        f"{run.elapsed_s:.1f} s (load average {load:.2f})"
                    )
        finally:
            stop(processes)
    print(
        f"demo, {args.deals} deals per table at most, {os.cpu_count()} cores, medians of "
        f"{args.repeat}; load: the 1-minute load average at the end of each run"
    )
    rows = []
    base_all = base_steady = None
    for setup in setups:
        rate = statistics.median(r.matches / r.elapsed_s for r in runs[setup])
        steady = statistics.median(
            r.matches / max(1e-9, r.elapsed_s - r.startup_s) for r in runs[setup]
        )
        startup = statistics.median(r.startup_s for r in runs[setup])
        overheads = [
            r.overhead_ms_per_match for r in runs[setup] if r.overhead_ms_per_match is not None
        ]
        base_all = base_all or rate
        base_steady = base_steady or steady
        rows.append(
            (
                setup,
                runs[setup][0].matches,
                f"{rate:.1f}",
                f"{rate / base_all:.2f}x",
                f"{steady:.1f}",
                f"{steady / base_steady:.2f}x",
                f"{startup:.2f}",
                f"{statistics.median(overheads):.2f}" if overheads else None,
                common.spread(loads[setup], 2),
            )
        )
    common.table(
        ["setup", "matches", "matches/s", "vs local", "no start-up", "vs local", "start-up s",
         "Dask ms/match", "load"],
        rows,
    )  # fmt: skip


if __name__ == "__main__":
    main()
