"""Does web traffic cost the referee? The same tournament with and without bursts of page
requests and event-stream clients against ``arena tournament --web``, side by side.

    python3 benchmarks/web_load.py [--rounds 2] [--deals 30] [--tree PATH ...]

The tournament: four honest bots (sample_bots/python/random_bot.py, which answer in well under a
millisecond) play Alles oder Nichts, ``--deals`` deals of four rotations (120 matches at 30), at
a time control of 30 ms per decision and a 20 ms margin (SPEC 5), records on, one match at a
time, the ``arena`` process and its bots held to core 0 (``taskset``: a process that plays runs
on a core with its bots, SPEC 7). With traffic, a client process held to the other cores, from
the moment the URL is printed to the end: 8 clients on the live stream (``/api/stream``), 2 on
the event stream of each match being played (``/api/match/stream``), and 4 threads that each
send bursts of 50 requests back to back (a finished match with all hands, which the server
replays from its record, or the duplicate view of its deal), with 0.2 s between bursts. The
requests carry the organiser's token (``$ARENA_WEB_SECRET``), so they are served, not refused.

Each ``--tree`` (a checkout of the arena; default this one, e.g. ``--tree /work/main`` for the
tree before the pages moved to a process of their own) plays ``--rounds`` rounds, each without
``--web``, with it, and with it and the traffic, interleaved. Printed per tree and traffic: the referee's worst latency per
decision (the highest ``max_ms`` any match stored, SPEC 5), the worst p99, the honest bots'
timeouts (their only faults), the matches, the tournament's seconds, and the requests the
traffic got answered per second (the pages run at the lowest priority: on a busy machine they
answer slowly, and the referee does not wait for them).
Run as root, the bots need ``ARENA_BOT_USER=@arena`` (set here).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from arena.tournament.store import ResultStore
from benchmarks import common

ROOT = common.ROOT

SECRET = "web-load-benchmark-organiser-secret"
SSE_CLIENTS = 8
MATCH_STREAM_CLIENTS = 2  # per match being played
BURST_THREADS = 4
BURST = 50
BURST_GAP_S = 0.2
REFEREE_CORE = 0


def tournament(folder: Path, deals: int) -> Path:
    bots = "".join(
        f'[[bots]]\nname = "honest{i}"\nargv = ["{sys.executable}", '
        f'"{ROOT / "sample_bots/python/random_bot.py"}", "{i}"]\nuser = "@arena"\n\n'
        for i in range(4)
    )
    path = folder / "load.toml"
    path.write_text(
        f'name = "load"\nseed = 7\ndeals = {deals}\nconcurrency = 1\nworkers = 1\n'
        f'output = "{folder / "out"}"\nrecords = true\n\n'
        "[time]\ndecision_ms = 30\nmargin_ms = 20\n\n"
        f'{bots}[[games]]\ngame = "alles-oder-nichts"\nplayers = 4\n'
    )
    return path


# -- the traffic (a process of its own: ``--traffic URL``) ---------------------------------------


class Client:
    """Keep-alive GETs to the server, counting the answers."""

    def __init__(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.connection: http.client.HTTPConnection | None = None

    def get(self, path: str) -> tuple[int, bytes]:
        for _ in range(2):
            try:
                if self.connection is None:
                    self.connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
                self.connection.request("GET", path, headers={"Authorization": f"Bearer {SECRET}"})
                response = self.connection.getresponse()
                return response.status, response.read()
            except (OSError, http.client.HTTPException):
                self.connection = None
        return 0, b""


def traffic(url: str) -> None:
    """Run the traffic until killed; print the requests answered (2xx) when stopped."""
    answered = [0]
    lock = threading.Lock()
    streams: set[str] = set()

    def count() -> None:
        with lock:
            answered[0] += 1

    def stream(path: str) -> None:
        parts = urllib.parse.urlsplit(url)
        while True:
            try:
                connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
                connection.request("GET", path, headers={"Authorization": f"Bearer {SECRET}"})
                response = connection.getresponse()
                if response.status != 200:
                    return
                while line := response.readline():
                    if line.startswith(b"data: "):
                        count()
            except (OSError, http.client.HTTPException):
                time.sleep(0.1)
            if path != "/api/stream":
                return  # a match's stream ends with its match

    def bursts() -> None:
        client = Client(url)
        while True:
            status, body = client.get("/api/summary")
            if status != 200:
                time.sleep(BURST_GAP_S)
                continue
            count()
            summary = json.loads(body)
            for running in summary["running"]:
                with lock:
                    new = running["match_id"] not in streams
                    streams.add(running["match_id"])
                if new:
                    query = urllib.parse.urlencode({"id": running["match_id"], "seat": 0})
                    for _ in range(MATCH_STREAM_CLIENTS):
                        threading.Thread(
                            target=stream, args=("/api/match/stream?" + query,), daemon=True
                        ).start()
            finished = [m for m in summary["latest"] if m["record"]]
            for i in range(BURST):
                if not finished:
                    break
                match = finished[i % len(finished)]
                if i % 5 == 4:
                    query = {"game": match["game"], "table": match["table"], "deal": match["deal"]}
                    path = "/api/deal?" + urllib.parse.urlencode(query)
                else:
                    path = "/api/match?" + urllib.parse.urlencode({"id": match["match_id"]})
                if client.get(path)[0] == 200:
                    count()
            time.sleep(BURST_GAP_S)

    for _ in range(SSE_CLIENTS):
        threading.Thread(target=stream, args=("/api/stream",), daemon=True).start()
    for _ in range(BURST_THREADS):
        threading.Thread(target=bursts, daemon=True).start()
    try:
        sys.stdin.read()  # until the benchmark closes it
    finally:
        print(answered[0], flush=True)


# -- one run ---------------------------------------------------------------------------------------


MODES = ("no --web", "--web", "--web + traffic")


def run(tree: Path, deals: int, mode: str) -> dict[str, float]:
    with_web, with_traffic = mode != MODES[0], mode == MODES[2]
    with tempfile.TemporaryDirectory(prefix="web-load-") as folder:
        toml = tournament(Path(folder), deals)
        env = {
            **os.environ,
            "PYTHONPATH": str(tree),
            "ARENA_BOT_USER": "@arena",
            "ARENA_WEB_SECRET": SECRET,
        }
        arena = subprocess.Popen(
            ["taskset", "-c", str(REFEREE_CORE), sys.executable, "-m", "arena", "tournament"]
            + [str(toml), *(["--web", "0"] if with_web else [])],
            cwd=tree,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert arena.stdout is not None
        url = None
        for line in arena.stdout if with_web else ():
            found = re.search(r"watch it at (http://\S+)", line)
            if found:
                url = found[1]
                break
        if with_web and url is None:
            raise SystemExit(f"{tree}: arena tournament --web printed no URL: {arena.stderr}")
        load = None
        if with_traffic and url is not None:
            others = sorted(set(range(os.cpu_count() or 1)) - {REFEREE_CORE}) or [REFEREE_CORE]
            load = subprocess.Popen(
                ["taskset", "-c", ",".join(map(str, others)), sys.executable, __file__]
                + ["--traffic", url],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
        threading.Thread(target=arena.stdout.read, daemon=True).start()
        begun = time.monotonic()
        arena.wait()
        seconds = time.monotonic() - begun
        answered = 0
        if load is not None:
            out, _ = load.communicate("")
            answered = int(out.strip() or 0)
        if arena.returncode != 0:
            raise SystemExit(f"{tree}: the tournament failed: {arena.stderr.read()}")
        with ResultStore.open_read(Path(folder) / "out" / "results.sqlite") as store:
            matches = store.matches(include_aborted=True)
        referee = [m.referee for m in matches if m.referee]
        return {
            "matches": len(matches),
            "worst_ms": max(float(r.get("max_ms") or 0) for r in referee),
            "p99_ms": max(float(r.get("p99_ms") or 0) for r in referee),
            "timeouts": sum(1 for m in matches for f in m.faults if f.kind == "timeout"),
            "faults": sum(len(m.faults) for m in matches),
            "answered": answered,
            "seconds": round(seconds, 1),
        }


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--deals", type=int, default=30)
    parser.add_argument("--tree", type=Path, action="append", help="a checkout (repeatable)")
    parser.add_argument("--traffic", help=argparse.SUPPRESS)
    args = common.parse(parser, smoke={"rounds": 1, "deals": 1, "tree": None})
    if args.traffic:
        traffic(args.traffic)
        return
    common.require_tools(args.smoke, "taskset")
    trees = [Path(t) for t in common.trees(args.tree)]
    results: dict[tuple[Path, str], list[dict[str, float]]] = {}
    load_before = common.load_note()
    for round_ in range(args.rounds):
        order = [(t, mode) for t in trees for mode in MODES]
        for tree, mode in order if round_ % 2 == 0 else order[::-1]:
            figures = run(tree, args.deals, mode)
            results.setdefault((tree, mode), []).append(figures)
            common.progress(f"round {round_ + 1}: {tree} {mode}: {figures}")
    print(f"each round's run; {load_before} at the start, {common.load_note()} at the end")
    common.table(
        ["tree", "pages", "matches", "worst ms", "p99 ms", "timeouts", "faults", "seconds",
         "answered/s"],
        [
            (
                str(tree)[-28:],
                mode,
                figures["matches"],
                f"{figures['worst_ms']:.1f}",
                f"{figures['p99_ms']:.2f}",
                figures["timeouts"],
                figures["faults"],
                f"{figures['seconds']:.1f}",
                f"{figures['answered'] / figures['seconds']:.1f}",
            )
            for tree in trees
            for mode in MODES
            for figures in results[(tree, mode)]
        ],
        left=2,
    )  # fmt: skip


if __name__ == "__main__":
    main()
