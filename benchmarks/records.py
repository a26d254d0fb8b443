"""What match records cost: matches/s and the referee's CPU without records, with plain JSONL,
with a compact gzip record in a file of its own ("file") and appended to a records file as
tournaments write them ("gzip", SPEC 8), and the bytes per match on disk.

    python3 benchmarks/records.py [--seconds 1.5] [--repeat 5] [--game ID] [--bot c|python]
                                  [--modes off,plain,file,gzip] [--folder DIR] [--no-collect]

For each game, one set of bots (the C starter bot, or the Python random bot, in every seat) plays
whole matches for ``--seconds``, in cycles: each cycle plays one deal (one seed) once in every
mode, the modes in a random order, so that each mode plays the same deals and the neighbours'
noise on a shared machine falls on all alike. It prints, per mode, matches/s, decisions/s
("dec/s") and the arena process's CPU per decision (time.process_time: the bots are other
processes), each relative to "off" (goal: records cost at most 5%), and the record's mean size
per match (goal: at most 10 kB; "gzip" is what tournaments write). The same deal is not the
same match in every mode: a random bot's choices depend on every match it played before, so in
Vingt-down, whose length follows the play (224 to 1,568 decisions a match seen in one run), a
round's matches/s swings 10-20% whatever the mode: there, decisions/s is the figure that
compares the modes over the same work (in the other games a deal fixes a match's decisions,
and the two agree). Each ratio is the median over the
rounds of the round's ratio (of sums over its matches: a cost that falls on a few matches
counts in full), with the lowest and highest round in brackets; "+us/d"
is the median over the rounds of the mode's CPU per decision less off's. On a shared machine the
ratios swing a few percent from round to round, so a change needs more ``--repeat`` than that
spread to show. Between matches (untimed) the garbage collector collects, so that each match
pays for the collections its own garbage causes, not for where its neighbours' left the count
(``--no-collect``: nothing is collected between matches, as a tournament runs). What it finds
is printed as "garbage/m", objects per match left in reference cycles, which a tournament
collects as it plays and this untimed collection does not charge: it must be 0 in every mode
(a record that made its match a cycle would cost a tournament far more than it shows here).
Records are kept until the end, as a tournament keeps them (on this VM deleting them made the
next ones dearer to create: the note at MODES).

It runs as tournaments run: the referee and its bots on one core (``--affinity off`` lets the
system place them). ``record_instructions.py`` counts the record's own work, load-free. Under
pinning the referee's CPU per decision is lower while the record's per-match part (creating the
file: tens of us of kernel CPU on this VM's ext4, a few on tmpfs; the encoding and compression)
is not, so the games with short matches pay the most per match.
"""

from __future__ import annotations

import gc
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from arena.games import GAMES, find_game
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.process import BotProcess
from arena.referee.record import RecordFile
from benchmarks import common

# off: no record; plain: the full lines in a file per match (`arena match --record m.jsonl`);
# file: the compact gzip record in a file of its own (`--record m.jsonl.gz`, and tournaments
# before records files); gzip: what tournaments write, each match's compact gzip record
# appended to a records file (SPEC 8).
MODES = {"off": None, "plain": ".jsonl", "file": ".jsonl.gz", "gzip": "records file"}
# Where the records go matters on this VM: its ext4 has no journal, so each new file's inode is
# checked against the recently deleted ones of its block group (the kernel's recently_deleted),
# and /tmp's groups hold the churn of every test suite run on it (a file deleted counts for 60 s,
# 360 s while its inode table block is dirty: a benchmark that deletes its records makes its own
# next ones dearer, run after run: in /tmp a new file cost 10-25x what it cost elsewhere). A
# tournament writes its records under its output folder, by default results/ in the current
# folder: the benchmarks' default (--folder) too. To compare trees run after run, --folder /:
# ext4 places each new folder at the top in a block group of its own (Orlov), so every run
# creates its files in a group without recent deletions. The last line of the output measures
# what a new file costs where the records go.
COLLECT = True  # collect garbage between matches, untimed (--no-collect: as a tournament runs)


async def play_modes(
    game_id: str, argv: list[str], seconds: float, seed: int, records: Path
) -> dict[str, tuple[float, float, float, float, float, float]]:
    """{mode: (matches/s, CPU ms per match, CPU us per decision, record bytes per match, objects
    the collector found after a match, decisions/s)}.

    One set of bots plays cycles of matches: each cycle one seed in every mode, in a random
    order, so that the modes play the same deals and the neighbours' noise falls on all alike;
    each mode's figures are sums over its own matches."""
    game = find_game(game_id)
    control = TimeControl(decision_ms=5000)
    logs = Path(tempfile.mkdtemp(prefix="arena-bench-logs-"))
    logs.chmod(0o755)
    bots = [
        await BotProcess.start(
            BotSpec(f"b{i}", (*argv, str(i))), time_control=control, log_dir=logs
        )
        for i in range(common.PLAYERS.get(game_id, game.player_counts[0]))
    ]
    records.mkdir(parents=True, exist_ok=True)
    appended = RecordFile(records / f"{game_id}.jsonl.gz")  # (the gzip mode's, as a tournament's)
    gc.collect()
    if COLLECT:
        gc.freeze()  # what lives on (modules, bots) out of the collections between matches
    # per mode: matches, wall, CPU, decisions, bytes, objects the collector found after a match
    totals = {mode: [0, 0.0, 0.0, 0, 0, 0] for mode in MODES}
    try:
        began = time.perf_counter()
        order = random.Random(seed)
        number = 0
        last_mode = None
        while number < 3 * len(MODES) or time.perf_counter() - began < seconds:
            cycle = list(MODES)
            order.shuffle(cycle)
            deal = seed + number // len(MODES)  # one deal per cycle, played in every mode
            for mode in cycle:
                suffix = MODES[mode]
                path: Path | RecordFile | None = (
                    None
                    if suffix is None
                    else appended
                    if mode == "gzip"
                    else records / f"{game_id}-{number}{suffix}"
                )
                # Untimed: each match pays only for the collections its own garbage causes, not
                # for its neighbours' (a collection costs ~0.3 ms, 2% of a match, wherever
                # the count happens to cross the threshold). What it finds is the garbage of the
                # match before (reference cycles, which a tournament collects as it plays).
                if COLLECT:
                    found = gc.collect()
                    if last_mode is not None:
                        totals[last_mode][5] += found
                last_mode = mode
                wall, cpu = time.perf_counter(), time.process_time()
                result = await run_match(
                    game,
                    bots,
                    seed=deal,
                    match_id=f"m{number}",
                    time_control=control,
                    record_path=path,
                )
                row = totals[mode]
                row[0] += 1
                row[1] += time.perf_counter() - wall
                row[2] += time.process_time() - cpu
                row[3] += sum(len(times) for times in result.decision_ms)
                if result.record is not None and result.record.span is not None:
                    row[4] += result.record.span[1]
                elif isinstance(path, Path):  # kept, as a tournament keeps its records
                    row[4] += path.stat().st_size
                number += 1
        if COLLECT and last_mode is not None:
            totals[last_mode][5] += gc.collect()
    finally:
        appended.close()
        if COLLECT:
            gc.unfreeze()
        for bot in bots:
            await bot.close()
        shutil.rmtree(logs, ignore_errors=True)
    return {
        mode: (
            n / wall,
            cpu / n * 1e3,
            cpu / decisions * 1e6,
            size / n,
            garbage / n,
            decisions / wall,
        )
        for mode, (n, wall, cpu, decisions, size, garbage) in totals.items()
    }


async def measure(games: list[str], argv: list[str], seconds: float, repeat: int, folder: Path):
    figures: dict[tuple[str, str], list[tuple[float, float, float, float, float, float]]] = {}
    for round_number in range(repeat):
        for game_id in games:
            modes = await play_modes(
                game_id, argv, seconds, 1000 * round_number, folder / f"records-{round_number}"
            )
            for mode, row in modes.items():
                figures.setdefault((game_id, mode), []).append(row)
        common.progress(f"round {round_number + 1}/{repeat} done")
    return figures


def file_floor_us(folder: Path, count: int = 200) -> float:
    """CPU us to create a file, write 3 kB to it and close it, in a new folder beside the records:
    the part of a record's cost per match that is the kernel's (the file system), whatever the
    referee does. The files are kept, as a tournament keeps its records (see the note at MODES:
    deleting each would make the next creations dearer here)."""
    folder.mkdir(parents=True, exist_ok=True)
    data = os.urandom(3000)
    spent = 0.0
    for number in range(count):
        path = folder / f"floor-{number}.jsonl.gz"
        began = time.process_time()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
        os.write(fd, data)
        os.close(fd)
        spent += time.process_time() - began
    return spent / count * 1e6


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--game", action="append", help="one game (repeatable); default: all")
    parser.add_argument("--bot", choices=("c", "python"), default="c")
    parser.add_argument(
        "--modes", default=",".join(MODES), help="the modes to alternate (default: all four)"
    )
    parser.add_argument(
        "--affinity",
        choices=("on", "off"),
        default="on",
        help="the referee and its bots on one core, as the arena pins a match (on), or placed "
        "by the system (off) [on]",
    )
    parser.add_argument(
        "--no-collect",
        action="store_true",
        help="no garbage collection between matches: each match pays for the collections that "
        "fall in it, as in a tournament",
    )
    parser.add_argument(
        "--folder",
        default=".",
        help="where the records (and the C bot) go, in a temporary folder made there [the "
        "current folder, as `arena tournament` writes its results/ there; in /tmp on this VM "
        "each new file cost 10-25x as much: see the note at MODES]",
    )
    args = common.parse(parser, smoke={"seconds": 0.1, "repeat": 1})
    global COLLECT
    COLLECT = not args.no_collect
    games = [find_game(g).id for g in args.game] if args.game else list(GAMES)
    chosen = args.modes.split(",")
    if "off" not in chosen or not set(chosen) <= set(MODES):
        parser.error(f"--modes: a list of {', '.join(MODES)} with off among them")
    for mode in list(MODES):
        if mode not in chosen:
            del MODES[mode]
    load_before = common.load_note()
    with common.scratch(where=args.folder) as folder:
        argv = (
            common.build_c_bot(folder) if args.bot == "c" else [sys.executable, str(common.PY_BOT)]
        )
        with common.pinned_like_the_arena(args.affinity == "on"):
            figures = trio.run(measure, games, argv, args.seconds, args.repeat, folder)
        floor = file_floor_us(folder / "floor")
    print(
        f"median (lowest-highest) of {args.repeat} rounds of {args.seconds:g} s per game, "
        f"{args.bot} bots, each deal in every mode (random order), "
        + ("collected between matches" if COLLECT else "not collected between matches")
        + ("; pinned to one core" if args.affinity == "on" else "; not pinned")
        + f"; {load_before} at the start, {common.load_note()} at the end"
    )
    rows = []
    for game_id in games:
        off = figures[(game_id, "off")]
        for mode in MODES:
            runs = figures[(game_id, mode)]
            # per round against the "off" matches of the same round: the median, and the spread
            # (lowest-highest) over the rounds, which says how far the median can be trusted
            rates = [r[0] / o[0] for r, o in zip(runs, off)]
            paces = [r[5] / o[5] for r, o in zip(runs, off)]
            cpus = [r[2] / o[2] for r, o in zip(runs, off)]
            extra = statistics.median(r[2] - o[2] for r, o in zip(runs, off))
            rows.append(
                (
                    game_id,
                    mode,
                    f"{statistics.median(r[0] for r in runs):.1f}",
                    common.median_spread(rates, 3),
                    common.median_spread(paces, 3),
                    f"{statistics.median(r[1] for r in runs):.2f}",
                    common.median_spread(cpus, 3),
                    f"{statistics.median(r[2] for r in runs):.1f}",
                    f"{extra:+.2f}",
                    f"{statistics.median(r[3] for r in runs) / 1000:.1f}",
                    f"{statistics.median(r[4] for r in runs):.0f}",
                )
            )
    common.table(
        ["game", "mode", "matches/s", "vs off", "dec/s vs off", "CPU ms/m", "vs off",
         "CPU us/d", "+us/d", "kB/match", "garbage/m"],
        rows,
        left=2,
    )  # fmt: skip
    print(
        f"creating, writing 3 kB to and closing a file in a new folder beside the records: "
        f"{floor:.0f} us CPU (the file system's part of each record)"
    )


if __name__ == "__main__":
    main()
