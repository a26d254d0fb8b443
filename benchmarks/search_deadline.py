"""The search recipe against the clock: its timeouts over many matches of every game, every core
busy.

    python3 benchmarks/search_deadline.py [--matches 200] [--games all] [--decision-ms 1000]
        [--busy 2] [--concurrency 2] [--bot COMMAND] [--out DIR]

(as root, set ``ARENA_BOT_USER=@arena``). Plays ``arena tournament`` (real bot processes, each
match pinned to a core with its bots, as the arena pins them) with a searching bot named
``search`` (by default the guide's recipe, sample_bots/search/minimal_search_bot.py; ``--bot``
gives another command, run from the checkout's root) and three random Python bots, at every
game's default player count, duplicate seating, at least ``--matches`` matches a game (whole
deals: every deal in every rotation), the time control ``--decision-ms`` (50 ms margin).
``--busy N`` starts N processes that spin on the CPU for the whole run (by default one per core),
so that the matches share every core with other work. Prints, per game: the matches, the search
bot's decisions, its timeouts and other faults, and its decision times as the referee measured
them (p50, p99, max), against the time allowed.
"""

from __future__ import annotations

import math
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from benchmarks import common

ROOT = common.ROOT
from arena.games import GAMES, find_game
from arena.tournament.schedule import GamePlan, build_schedule
from arena.tournament.store import ResultStore, StoreError

BOTS = ("search", "random1", "random2", "random3")
SPIN = "while True: pass"


def deals_for(game: str, matches: int) -> int:
    """The deals that give at least ``matches`` matches of ``game`` with BOTS at its table."""
    spec = find_game(game)
    plan = GamePlan(game, game, spec.default_players, deals=1, team_size=spec.team_size)
    per_deal = len(build_schedule(1, BOTS, [plan]))
    return math.ceil(matches / per_deal)


def tournament_file(path: Path, bot: str, deals: dict[str, int], decision_ms: int, out: Path):
    commands = [bot] + [f"python3 sample_bots/python/random_bot.py {n}" for n in (1, 2, 3)]
    lines = [
        'name = "bench-search-deadline"',
        "seed = 39",
        f'output = "{out}"',
        "records = false",
        "match_time_limit = 7200",
        f"[time]\ndecision_ms = {decision_ms}",
        "",
    ]
    for name, command in zip(BOTS, commands):
        argv = ", ".join(f'"{word}"' for word in shlex.split(command))
        lines += ["[[bots]]", f'name = "{name}"', f"argv = [{argv}]", f'cwd = "{ROOT}"']
        if name == "search":
            lines += ["cpu_seconds = 200000", f'env = {{ PYTHONPATH = "{ROOT}" }}']
        lines.append("")
    for game, count in deals.items():
        lines += ["[[games]]", f'game = "{game}"', f"deals = {count}", ""]
    path.write_text("\n".join(lines))


def percentile(values: list[float], share: float) -> float:
    return values[min(len(values) - 1, int(share * len(values)))]


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--matches", type=int, default=200, help="at least this many a game")
    parser.add_argument("--games", default="all")
    parser.add_argument("--decision-ms", type=int, default=1000)
    parser.add_argument("--busy", type=int, default=os.cpu_count() or 1, help="spinning processes")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--bot", default="python3 sample_bots/search/minimal_search_bot.py")
    parser.add_argument("--out", help="the results folder (default: a temporary one)")
    parser.add_argument("--report-only", action="store_true", help="read an earlier run's results")
    args = common.parse(parser, smoke={"matches": 1, "games": "aon", "busy": 0, "decision_ms": 200})
    if args.out is None and args.report_only:
        parser.error("--report-only needs --out")
    with common.scratch("arena-search-deadline-") as scratch:
        run(args, Path(args.out) if args.out else scratch)


def run(args, out_folder: Path) -> None:
    games = list(GAMES) if args.games == "all" else [find_game(g).id for g in args.games.split(",")]
    deals = {game: deals_for(game, args.matches) for game in games}
    out = out_folder.resolve()
    out.mkdir(parents=True, exist_ok=True)
    toml = out / "bench.toml"
    tournament_file(toml, args.bot, deals, args.decision_ms, out)
    started = time.time()
    if not args.report_only:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the spinners on kill too
        spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(args.busy)]
        try:
            subprocess.run(
                [sys.executable, "-m", "arena", "tournament", str(toml), "--restart",
                 "--concurrency", str(args.concurrency)],
                cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
            )  # fmt: skip
        finally:
            for spinner in spinners:
                spinner.kill()
                spinner.wait()
    wall = time.time() - started
    try:
        with ResultStore.open_read(out / "results.sqlite") as store:
            matches = [m for m in store.matches() if m.completed]
    except StoreError as error:
        sys.exit(f"search_deadline.py: {error}")
    print(
        f"{len(matches)} matches in {wall:.0f} s; bot: {args.bot}; decision_ms "
        f"{args.decision_ms} (+50 ms margin); concurrency {args.concurrency}; "
        f"{args.busy} spinning processes; {os.cpu_count()} cores"
    )
    rows = []
    for game in games:
        played = [m for m in matches if m.game_id == game]
        times: list[float] = []
        timeouts = others = 0
        for m in played:
            times.extend(
                t for s, bot in enumerate(m.bots) if bot == "search" for t in m.decision_ms[s]
            )
            for fault in m.faults:
                if fault.bot == "search":
                    timeouts += fault.kind == "timeout"
                    others += fault.kind != "timeout"
        times.sort()
        quantiles = (
            [f"{percentile(times, 0.5):.0f}", f"{percentile(times, 0.99):.0f}", f"{times[-1]:.0f}"]
            if times
            else [None, None, None]
        )
        rows.append([game, len(played), len(times), timeouts, others, *quantiles])
    header = ["game", "matches", "decisions", "timeouts", "other faults", "p50 ms", "p99 ms"]
    common.table([*header, "max ms"], rows)
    print(common.load_note())


if __name__ == "__main__":
    main()
