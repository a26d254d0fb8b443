"""The searching sample bot against the heuristic one (and random bots): a real duplicate tournament.

    python3 benchmarks/search.py [--deals N] [--deals-for GAME=N ...] [--games aon,vingt,...]
        [--concurrency N] [--out DIR] [--decision-ms 1000]

``--deals-for vingt-down=48`` gives one game its own deal count (Vingt-down's scores swing by tens
of points a match, so its interval needs many more deals).

Plays ``arena tournament`` (real bot processes, the default time control: 1000 ms a decision,
50 ms margin) with four bots: search (sample_bots/search), heuristic (sample_bots/heuristic) and
two random bots, at every game's default player count, duplicate seating (every deal in every seat
rotation). Then prints, per game:
- the mean duplicate score difference search - heuristic per deal, with a 95% interval over deals
  (Student t, arena.stats): for each deal, the search bot's total over the rotations minus the heuristic bot's,
  over the number of rotations, so both played every seat's cards with the same deal (signed so
  that positive is better for search; Vingt-down's low scores flipped). In All Fours only the
  tables where the two are opponents count (each partnered with a random bot);
- the search bot's decision times as the referee measured them: p50, p99, max, the limit;
- faults (timeouts in particular) of the search bot;
and, measured in this process, how many worlds per second ``arena.kit.sample_world`` draws per game
(from positions of random play). The figures depend on the machine's load: the search bot thinks
for a share of wall-clock time, so a busy machine gives it fewer worlds.
"""

from __future__ import annotations

import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from benchmarks import common

ROOT = common.ROOT

from arena.games import GAMES, find_game
from arena.kit import sample_world
from arena.stats.moments import estimate_values
from arena.tournament.store import ResultStore, StoreError


def interval(values: list[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95% t-interval, over independent deals (arena.stats)."""
    found = estimate_values(values, 0.95)
    if found.low is None or found.high is None:
        return statistics.fmean(values), float("inf")
    return found.mean, (found.high - found.low) / 2


def tournament_file(
    path: Path, games: dict[str, int], deals: int, out: Path, decision_ms: int
) -> None:
    """The tournament: ``games`` maps each game to its deal count (``deals``: the default)."""
    bots = [
        ("search", "python3 sample_bots/search/search_bot.py 1", 200000),
        ("heuristic", "python3 sample_bots/heuristic/heuristic_bot.py 1", None),
        ("random1", "python3 sample_bots/python/random_bot.py 1", None),
        ("random2", "python3 sample_bots/python/random_bot.py 2", None),
    ]
    lines = [
        'name = "bench-search"',
        "seed = 21",
        f"deals = {deals}",
        f'output = "{out}"',
        "records = false",
        "match_time_limit = 3600",
        f"time = {{ decision_ms = {decision_ms} }}",
        "",
    ]
    for name, cmd, cpu in bots:
        lines += ["[[bots]]", f'name = "{name}"', f'cmd = "{cmd}"', f'cwd = "{ROOT}"']
        if cpu:
            lines.append(f"cpu_seconds = {cpu}")  # it thinks hard on every decision
        lines.append("")
    for game, count in games.items():
        lines += ["[[games]]", f'game = "{game}"', f"deals = {count}", ""]
    path.write_text("\n".join(lines))


def _names(game: str) -> set[str]:
    """A game's id and aliases, lower case (what --deals-for accepts)."""
    spec = find_game(game)
    return {spec.id, *(alias.lower() for alias in spec.aliases)}


def sampler_rate(game: str, seconds: float) -> float:
    """Worlds per second from positions of seeded random play (all decisions of a match)."""
    spec = find_game(game)
    rng = random.Random(1)
    count, spent, seed = 0, 0.0, 0
    while spent < seconds:
        state = spec.new_match(spec.default_players, {}, seed)
        seed += 1
        while not state.is_over and spent < seconds:
            seat = state.seat_to_move
            view = state.view(seat)
            events = [e.data for e in state.events if e.visible_to(seat)]
            start = time.perf_counter()
            for _ in range(5):
                sample_world(view, events, rng, state.options)
            spent += time.perf_counter() - start
            count += 5
            state.apply(rng.choice(state.legal_actions()))
    return count / spent


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--deals", type=int, default=10)
    parser.add_argument(
        "--deals-for", action="append", default=[], metavar="GAME=N", help="one game's deals"
    )
    parser.add_argument("--games", default="all")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--out", default="results/bench-search")
    parser.add_argument("--report-only", action="store_true", help="read an earlier run's results")
    parser.add_argument(
        "--decision-ms", type=int, default=1000, help="the time control's decision_ms [1000]"
    )
    parser.add_argument(
        "--sampler-seconds", type=float, default=2.0, help="timing the world sampler, per game"
    )
    args = common.parse(
        parser,
        smoke={"deals": 1, "games": "alles-oder-nichts", "deals_for": [], "concurrency": 2,
               "decision_ms": 150, "sampler_seconds": 0.1, "report_only": False},
    )  # fmt: skip
    games = list(GAMES) if args.games == "all" else [find_game(g).id for g in args.games.split(",")]
    deals = {game: args.deals for game in games}
    for item in args.deals_for:
        name, _, count = item.partition("=")
        game = next((g for g in games if name.strip().lower() in _names(g)), None)
        if game is None or not count.isdigit() or int(count) < 1:
            parser.error(f"--deals-for {item}: expected GAME=N with one of {', '.join(games)}")
        deals[game] = int(count)
    if args.smoke:
        out = Path(tempfile.mkdtemp(prefix="arena-bench-search-"))
    else:
        out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    toml = out / "bench-search.toml"
    tournament_file(toml, deals, args.deals, out, args.decision_ms)
    started = time.time()
    if not args.report_only:
        subprocess.run(
            [sys.executable, "-m", "arena", "tournament", str(toml), "--restart",
             "--concurrency", str(args.concurrency)],
            cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
    wall = time.time() - started
    try:
        with ResultStore.open_read(out / "results.sqlite") as store:
            matches = [m for m in store.matches() if m.completed]
    except StoreError as error:
        sys.exit(f"search.py: {error}")
    if args.smoke:
        shutil.rmtree(out, ignore_errors=True)
    counts = ", ".join(f"{game} {count}" for game, count in deals.items())
    print(f"{len(matches)} matches in {wall:.0f} s, deals per table: {counts}; concurrency "
          f"{args.concurrency}; search thinks 0.35 x time_left_ms - 40 ms; limit "
          f"{args.decision_ms} ms; {common.load_note()}")  # fmt: skip
    rows = []
    for game in games:
        sign = -1 if game == "vingt-down" else 1
        per_deal: dict[tuple[int, int], list[float]] = defaultdict(list)
        times: list[float] = []
        faults = 0
        for m in (m for m in matches if m.game_id == game):
            seats = {bot: [s for s, b in enumerate(m.bots) if b == bot] for bot in set(m.bots)}
            times.extend(t for s in seats["search"] for t in m.decision_ms[s])
            faults += sum(1 for f in m.faults if f.bot == "search")
            if (
                m.teams is not None
                and m.teams[seats["search"][0]] == m.teams[seats["heuristic"][0]]
            ):
                continue  # partners share a score: nothing to compare
            search = statistics.fmean(m.scores[s] for s in seats["search"])
            heuristic = statistics.fmean(m.scores[s] for s in seats["heuristic"])
            per_deal[(m.table, m.deal)].append(sign * (search - heuristic))
        diffs = [statistics.fmean(v) for v in per_deal.values()]
        rate = f"{sampler_rate(game, args.sampler_seconds):.0f}"
        if not diffs:
            rows.append((game, 0, None, None, None, None, None, faults, rate))
            continue
        mean, half = interval(diffs)
        times.sort()
        p50 = times[len(times) // 2]
        p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
        rows.append(
            (
                game,
                len(diffs),
                f"{mean:+.2f}",
                f"[{mean - half:+.2f}, {mean + half:+.2f}]",
                f"{p50:.0f}",
                f"{p99:.0f}",
                f"{times[-1]:.0f}",
                faults,
                rate,
            )
        )
    common.table(
        ["game", "deals", "dup search-heuristic", "95% interval", "p50 ms", "p99 ms", "max ms",
         "faults", "worlds/s"],
        rows,
    )  # fmt: skip


if __name__ == "__main__":
    main()
