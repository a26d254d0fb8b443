"""The web pages' cost: the demo's matches/s with the page open and closed, and page load times
and memory for large results files.

    python3 benchmarks/web.py [--deals 6] [--rounds 3] [--browser] [--matches 10000,100000]
                              [--skip-throughput | --skip-load-times] [--cached-only]
                              [--keep DIR] [--tree PATH ...]

1. Throughput: the demo tournament (tournaments/demo.toml, its deals cut to ``--deals`` per
   table, a fresh results file each time) is played by ``arena tournament`` alternately without
   ``--web`` (page closed) and with ``--web`` and a page open on it, ``--rounds`` times each,
   interleaved so the shared machine's load hits both alike. "Page open" is a client that loads
   the page, its script and the summary, then keeps the live stream (server-sent events) open
   for the whole run, as an open browser tab does; ``--browser`` uses headless chromium instead
   (its own CPU then competes with the tournament on this machine). Prints the median matches/s
   of each and their ratio (goal: >= 0.95), and, steadier on a loaded machine, the CPU time per
   match of the whole tournament (wait4: arena, workers, bots) and of the arena process alone
   (which stores, folds and serves), open against closed.
2. Load time: for each size in ``--matches``, a results file of that many stored matches
   (synthetic rows: 4 bots, the four games, 60 decisions per seat, 2% with a timeout, each with
   the referee's latency figures, a few strained) served by ``arena serve``: first without
   (unless ``--cached-only``) and then with the standings fold cached in it (as a tournament
   leaves its file), then the same file with an older arena's definition (its games without
   players and deals: no schedule can be rebuilt from it). Each: the time to serve the URL (and
   the server's CPU seconds until then, which the machine's load does not stretch), the
   first summary, the exact standings, a second summary (cached), a bot's page the first time
   and again, a duplicate view, (with chromium) the page in a browser until its standings show,
   and the server's peak memory. Each ``--tree`` (a checkout of the arena, e.g. main's, for a
   before and after) serves the same files in turn; ``--keep DIR`` keeps the files for the next
   run (100,000 matches take a few minutes to write).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from benchmarks import common

ROOT = common.ROOT

from arena.referee.results import FaultRecord
from arena.tournament.schedule import GamePlan, build_schedule
from arena.tournament.standings import LiveStandings
from arena.tournament.store import ResultStore, StoredMatch
from benchmarks.standings import referee_figures

ENV = {"PYTHONPATH": str(ROOT)}
CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def env(tree: Path = ROOT) -> dict[str, str]:
    return {**os.environ, **ENV, "PYTHONPATH": str(tree)}


def demo_file(folder: Path, deals: int, run: int) -> Path:
    text = (ROOT / "tournaments" / "demo.toml").read_text()
    text = re.sub(r"^deals = \d+", f"deals = {deals}", text, flags=re.M)
    text = re.sub(r"^deals = 24", f"deals = {max(1, deals * 3 // 8)}", text, flags=re.M)
    text = re.sub(r'^output = ".*"', f'output = "{folder}/run{run}"', text, flags=re.M)
    text = text.replace('cwd = ".."', f'cwd = "{ROOT}"')
    # a public seed: every run deals the same cards (the file's own is new each run)
    text = re.sub(r"^name = (.*)$", rf"name = \1\nseed = {common.SEED}", text, count=1, flags=re.M)
    path = folder / f"demo{run}.toml"
    path.write_text(text)
    return path


class OpenPage:
    """What an open tab costs the server: the page, then the live stream, held to the end."""

    def __init__(self, url: str, browser: bool) -> None:
        self.url, self.browser = url, browser
        self.updates = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        if self.browser:
            from playwright.sync_api import sync_playwright

            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
                page = browser.new_page()
                page.goto(self.url)
                while not self._stop.wait(0.5):
                    pass
                browser.close()
            return
        for path in ("", "static/app.js", "static/style.css", "api/summary"):
            urllib.request.urlopen(self.url + path, timeout=30).read()
        try:
            with urllib.request.urlopen(self.url + "api/stream", timeout=120) as stream:
                for line in stream:
                    if line.startswith(b"event: summary"):
                        self.updates += 1
                    if self._stop.is_set():
                        return
        except OSError:
            return  # the tournament ended and took the server with it

    def close(self) -> None:
        self._stop.set()


@dataclass
class Run:
    rate: float  # matches/s, wall clock
    played: int
    updates: int  # live updates the open page received
    cpu_s: float  # CPU of the tournament: arena, its workers and their bots (wait4)
    arena_cpu_s: float  # CPU of the arena process alone (it stores, folds and serves)


def _process_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def play(toml: Path, web: bool, browser: bool) -> Run:
    """One run of ``arena tournament``, with ``--web`` and a page open on it or without."""
    argv = [sys.executable, "-m", "arena", "tournament", str(toml)]
    if web:
        argv += ["--web", "0"]
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, cwd=ROOT, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    own_cpu = [0.0]

    def sample() -> None:  # the arena process's own CPU, last seen just before it exits
        while process.returncode is None:
            try:
                own_cpu[0] = _process_cpu(process.pid)
            except (OSError, IndexError, ValueError):
                return
            time.sleep(0.1)

    threading.Thread(target=sample, daemon=True).start()
    page = None
    output = []
    assert process.stdout is not None
    for line in process.stdout:
        output.append(line)
        found = re.search(r"watch it at (http://\S+)", line)
        if found and page is None:
            page = OpenPage(found[1], browser)
    _pid, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - started
    if page is not None:
        page.close()
    done = re.search(r"done: (\d+) played", "".join(output))
    if process.returncode != 0 or not done:
        raise SystemExit("arena tournament failed:\n" + "".join(output[-20:]))
    played = int(done[1])
    return Run(
        played / elapsed,
        played,
        page.updates if page else 0,
        usage.ru_utime + usage.ru_stime,
        own_cpu[0],
    )


def throughput(deals: int, rounds: int, browser: bool) -> None:
    runs: dict[bool, list[Run]] = {False: [], True: []}
    load_before = common.load_note()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for number in range(rounds):
            for web in (False, True) if number % 2 == 0 else (True, False):
                run = play(demo_file(folder, deals, 2 * number + web), web, browser)
                runs[web].append(run)
                common.progress(
                    f"round {number + 1} page {'open  ' if web else 'closed'}: {run.played} "
                    f"matches, {run.rate:.2f} matches/s, CPU {run.cpu_s:.1f} s (arena process "
                    f"{run.arena_cpu_s:.1f} s)"
                    + (f", {run.updates} live updates received" if web else "")
                )
    closed, opened = runs[False], runs[True]
    print(
        f"the demo, {closed[0].played} matches a run, page closed and open, median "
        f"(lowest-highest) of {rounds} interleaved rounds; {load_before} at the start, "
        f"{common.load_note()} at the end"
    )
    rows = []
    for label, web in (("closed", closed), ("open", opened)):
        rows.append(
            (
                label,
                common.median_spread((r.rate for r in web), 2),
                f"{common.median(r.cpu_s / r.played for r in web) * 1000:.1f}",
                f"{common.median(r.arena_cpu_s / r.played for r in web) * 1000:.2f}",
                common.median(r.updates for r in web) if web is opened else None,
            )
        )
    rate = [o.rate / c.rate for c, o in zip(closed, opened)]
    cpu = [(c.cpu_s / c.played) / (o.cpu_s / o.played) for c, o in zip(closed, opened)]
    rows.append(("open / closed", common.median_spread(rate, 3), common.median_spread(cpu, 3),
                 None, None))  # fmt: skip
    common.table(
        ["page", "matches/s (goal: ratio >= 0.95)", "CPU ms/match, all (ratio: per CPU-s)",
         "arena process ms/match", "live updates"],
        rows,
    )  # fmt: skip


def synthetic_results(path: Path, count: int) -> dict[str, Any]:
    """A results file of ``count`` completed matches (random scores, 60 decisions per seat),
    without the standings fold a tournament caches in its file (see :func:`cache_fold`); the
    tournament's definition."""
    bots = ["alpha", "beta", "gamma", "delta"]
    deals = -(-count // 16)  # 16 matches a deal over the four games: at least ``count`` of them
    plans = [
        GamePlan("alles-oder-nichts", "alles-oder-nichts", 4, deals=deals),
        GamePlan("vingt-down", "vingt-down", 4, deals=deals),
        GamePlan("eight-rounds", "eight-rounds", 4, deals=deals),
        GamePlan("all-fours", "all-fours", 4, deals=deals, team_size=2, max_tables=1),
    ]
    schedule = build_schedule(5, bots, plans)
    definition = {
        "name": "big",
        "seed": 5,
        "seating": "duplicate",
        "bots": [{"name": b} for b in bots],
        "games": [
            {
                "label": p.label,
                "game": p.game_id,
                "players": 4,
                "deals": p.deals,
                "options": {},
                "max_tables": p.max_tables,
            }
            for p in plans
        ],
    }
    rng = random.Random(1)
    store = ResultStore.open_for_run(path, name="big", fingerprint="x", definition=definition)
    with store:
        for match in list(schedule)[:count]:
            scores = tuple(rng.randint(-20, 40) for _ in range(4))
            placings = tuple(1 + sum(o > s for o in scores) for s in scores)
            faults = (
                (FaultRecord.read(0, match.seats[0], "timeout", 3, "no answer within 1000 ms"),)
                if rng.random() < 0.02
                else ()
            )
            store.save(
                StoredMatch(
                    match_id=match.match_id,
                    game=match.game,
                    game_id=match.game_id,
                    table=match.table,
                    deal=match.deal,
                    rotation=match.rotation,
                    seed=match.seed,
                    players=4,
                    options={},
                    bots=match.seats,
                    scores=scores,
                    placings=placings,
                    teams=None,
                    forfeited=(),
                    faults=faults,
                    decision_ms=tuple(
                        tuple(round(rng.expovariate(2.0), 2) for _ in range(60)) for _ in range(4)
                    ),
                    duration_s=0.1,
                    referee=referee_figures(rng),
                )
            )
    return definition


def cache_fold(path: Path, definition: dict[str, Any]) -> None:
    """Fold the file's matches and cache the fold in it, as a running tournament does."""
    bots = [bot["name"] for bot in definition["bots"]]
    games = [game["label"] for game in definition["games"]]
    with ResultStore.open_for_run(
        path, name="big", fingerprint="x", definition=definition
    ) as store:
        LiveStandings(store, bots, games).persist()


def timed_get(url: str) -> tuple[float, int]:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=300) as response:
        body = response.read()
    return time.perf_counter() - started, len(body)


def load_times(
    count: int, browser: bool, trees: list[Path], keep: Path | None, cached_only: bool
) -> None:
    folder = keep or Path(tempfile.mkdtemp(prefix="arena-web-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    bare, cached, older = (folder / f"web-{count}{end}.sqlite" for end in ("-bare", "", "-older"))
    try:
        if not cached.exists():
            started = time.perf_counter()
            definition = synthetic_results(bare, count)
            common.progress(
                f"wrote a {count}-match results file in {time.perf_counter() - started:.1f} s"
            )
            shutil.copy(bare, cached)
            started = time.perf_counter()
            cache_fold(cached, definition)
            common.progress(
                f"folded and cached its standings in {time.perf_counter() - started:.1f} s"
            )
        if not older.exists():
            shutil.copy(cached, older)
            as_older_arena(older)
        files = (
            [("no standings cached (a file of an older arena)", bare)] if not cached_only else []
        )
        files += [("its standings cached, as a tournament leaves it", cached),
                  ("the same, an older arena's definition (no schedule)", older)]  # fmt: skip
        rows = [
            (
                what,
                *([str(tree)] if len(trees) > 1 else []),
                *serve_times(path, count, browser, tree),
            )
            for what, path in files
            for tree in trees
        ]
    finally:
        if keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"arena serve on {count} stored matches; {common.load_note()}; ms (kB) of each page")
    common.table(
        ["file", *(["tree"] if len(trees) > 1 else []), "URL served s", "its CPU s", "page", "script",
         "first summary", "exact s", "summary", "bot page", "bot page again", "duplicate view",
         "browser ms", "again ms", "peak MB"],
        rows,
    )  # fmt: skip


def as_older_arena(path: Path) -> None:
    """The file's definition as an older arena stored it: its games without players, deals and
    table limits (no schedule can be rebuilt from it)."""
    db = sqlite3.connect(path)
    with db:
        (text,) = db.execute("SELECT value FROM meta WHERE key = 'definition'").fetchone()
        definition = json.loads(text)
        definition["games"] = [
            {"label": g["label"], "game": g["game"]} for g in definition["games"]
        ]
        db.execute("UPDATE meta SET value = ? WHERE key = 'definition'", (json.dumps(definition),))
    db.close()


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def page_time(url: str) -> str:
    seconds, size = timed_get(url)
    return f"{seconds * 1000:.0f} ({size / 1000:.1f})"


def serve_times(results: Path, count: int, browser: bool, tree: Path = ROOT) -> tuple[object, ...]:
    """``arena serve`` of the checkout ``tree`` on the file: the time to each page, and the
    server's peak memory. In order: the URL served (s, and the server's CPU seconds until
    then: its imports and one read of every stored row), the page, its script and the first
    summary (answered at once, the standings maybe still folding) (ms (kB)), the exact
    standings ready (s), a summary with them (cached), a bot's page, the same again, a
    duplicate view, (with chromium) the page in a browser until its standings show, first and
    again (ms), and the peak memory (MB)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", str(results), "--port", "0"],
        cwd=tree,
        env=env(tree),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split()[3]
        served = f"{time.perf_counter() - started:.2f}"
        served_cpu = f"{_process_cpu(process.pid):.2f}"  # (the load does not stretch it)
        first = [page_time(url + path) for path in ("", "static/app.js", "api/summary")]
        while not json.loads(urllib.request.urlopen(url + "api/summary").read())["exact"]:
            time.sleep(0.05)
        exact = f"{time.perf_counter() - started:.2f}"
        pages = [
            page_time(url + path)
            for path in (
                "api/summary",
                "api/bot?name=alpha",
                "api/bot?name=alpha",
                "api/deal?game=vingt-down&table=0&deal=0",
            )
        ]
        summary = json.loads(urllib.request.urlopen(url + "api/summary").read())
        assert summary["progress"]["completed"] == count, summary["progress"]
        shown: list[str | None] = [None, None]
        if browser:
            from playwright.sync_api import sync_playwright

            with sync_playwright() as playwright:
                chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
                page = chromium.new_page()
                for attempt in range(2):
                    started = time.perf_counter()
                    page.goto(url)
                    page.wait_for_selector('section[data-scope="overall"] tbody tr')
                    shown[attempt] = f"{(time.perf_counter() - started) * 1000:.0f}"
                chromium.close()
        peak = f"{peak_rss_mb(process.pid):.0f}"
        return (served, served_cpu, *first, exact, *pages, *shown, peak)
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--deals", type=int, default=6, help="deals per table of the demo")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--matches", default="10000", help="sizes, comma-separated")
    parser.add_argument("--browser", action="store_true", help="open the page in chromium")
    parser.add_argument("--skip-throughput", action="store_true", help="only the load times")
    parser.add_argument("--skip-load-times", action="store_true", help="only the throughput")
    parser.add_argument("--cached-only", action="store_true", help="only files with a cached fold")
    parser.add_argument("--keep", type=Path, help="keep the results files in this folder")
    parser.add_argument("--tree", type=Path, action="append", help="a checkout (repeatable)")
    args = common.parse(parser, smoke={"deals": 1, "rounds": 1, "matches": "200", "browser": False})
    if not args.skip_throughput:
        common.require_tools(args.smoke, "node")  # the demo's JavaScript bot
        throughput(args.deals, args.rounds, args.browser)
    if not args.skip_load_times:
        trees = [tree.resolve() for tree in args.tree or [ROOT]]
        for count in (int(c) for c in args.matches.split(",")):
            browser = Path(CHROMIUM).exists() and not args.smoke
            load_times(count, browser, trees, args.keep, args.cached_only)


if __name__ == "__main__":
    main()
