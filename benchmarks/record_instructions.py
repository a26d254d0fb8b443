"""The record's own work, counted in instructions (the same on a loaded machine as on a quiet one).

    python3 benchmarks/record_instructions.py [--game ID] [--matches 12] [--writer | --opcodes]

Runs, under valgrind's cachegrind (which counts the user-space instructions a process executes),
matches of the "instant" transport (benchmarks/referee.py: a bot with its answer ready, so no pipe
and no scheduler pass: the referee's own work) without a record and with the compact gzip record
tournaments write, for 2 and for 2 + ``--matches`` matches each, and prints per decision the
instructions of the referee alone and those the record adds (the start-up cancels out). The kernel's
work (creating and writing the file) is not counted: benchmarks/records.py prints that part.
Even so two runs of the same tree differ by up to ~2k instructions per decision (the match's
own timing, the collector): compare trees over several runs. ``--writer`` counts the writer
alone (one match recorded, its record then written ``--matches`` times): closer, within ~1% of
the writer's count at 50 (the recorded match's own noise, spread over the records). Since record
format 2 the referee makes a decision's array values as it decides (the microseconds, the
text): that part is in the whole-match count, not in ``--writer``'s.
``--opcodes`` needs no valgrind and is exact (the same count on every run): the Python bytecodes
the record adds per decision in arena/referee (traced, ``--matches`` matches each way), by
function: the referee's own per-decision part, which the whole-match counts above blur (on a host
with a load of 3-4, two runs of one tree there differed by 4.7k vs 10.2k per decision).
Needs valgrind (apt-get install valgrind), but for ``--opcodes``.
"""

from __future__ import annotations

import compileall
import gc
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from benchmarks import common


def child(game_id: str, matches: int, mode: str) -> None:
    """Play the matches (in the process valgrind watches) and print their decisions; for mode
    ``writer:N``, one match, whose record the writer alone then writes N times."""
    mode_arg = mode
    import trio

    import arena.referee.match as match_module
    import arena.referee.record as record_module
    import arena.referee.record.writing as record_writing
    from arena.games import find_game
    from arena.referee.bot_spec import BotSpec
    from arena.referee.clock import TimeControl
    from arena.referee.match import run_match
    from arena.referee.process import BotProcess

    # Under valgrind a match runs ~50x slower: without this its record would be flushed every
    # "second" (every few decisions), where a real match of a few ms is written once, at its end.
    match_module.GZIP_FLUSH_S = record_writing.GZIP_FLUSH_S = 1e9
    # Everything alive now (modules, the interpreter's own) out of the collector's way, so that
    # a full collection in one run and not the other weighs little in the difference.
    gc.collect()
    gc.freeze()
    game = find_game(game_id)
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-records-"))

    if mode.startswith("writer:"):  # one match recorded, then its record written again N times
        log: list[tuple[str, object]] = []

        class Capture(record_module.RecordWriter):
            """Notes what the referee gives the writer: write()'s entries, and what it appends
            itself (Decisions, ShortDecisions, keep_shuffle()'s ShuffleLines)."""

            seen = 0

            def take(self) -> None:
                log.extend(("t", e) for e in self.entries[self.seen :])

            def write(self, entry: object) -> None:
                self.take()
                log.append(("w", entry))
                super().write(entry)
                self.seen = len(self.entries)

            def flush(self, *, final: bool = False) -> None:
                self.take()
                super().flush(final=final)
                self.seen = 0

        match_module.RecordWriter = Capture  # type: ignore[misc]
        matches, mode = 1, "gzip"
        records = int(mode_arg.split(":")[1])

    async def play() -> int:
        control = TimeControl(decision_ms=5000)
        seats = common.PLAYERS.get(game_id, game.player_counts[0])
        bots = [
            await BotProcess.connect(
                BotSpec(f"i{i}", ("instant",)), common.InstantTransport(), time_control=control
            )
            for i in range(seats)
        ]
        decisions = 0
        for seed in range(matches):
            path = None if mode == "off" else folder / f"{seed}.jsonl.gz"
            result = await run_match(
                game, bots, seed=seed, match_id=f"m{seed}", time_control=control, record_path=path
            )
            decisions += sum(len(times) for times in result.decision_ms)
        return decisions

    decisions = trio.run(play)
    if mode_arg.startswith("writer:"):
        for number in range(records):
            path = folder / f"w{number}.jsonl.gz"
            writer = record_module.RecordWriter(path)
            for kind, entry in log:
                if kind == "w":
                    writer.write(entry)
                else:
                    writer.entries.append(entry)
            writer.close()
            path.unlink()
        decisions *= records
    print("decisions", decisions)
    for leftover in folder.iterdir():
        leftover.unlink()
    folder.rmdir()


def opcodes(game_id: str, matches: int, mode: str) -> tuple[Counter, int]:
    """(bytecodes executed per arena/referee function, decisions) of ``matches`` matches."""
    code = (
        "import collections, runpy, sys\n"
        "counts = collections.Counter()\n"
        "def local(frame, event, arg):\n"
        "    if event == 'opcode':\n"
        "        counts[frame.f_code] += 1\n"
        "    return local\n"
        "def tracer(frame, event, arg):\n"
        "    frame.f_trace_opcodes, frame.f_trace_lines = True, False\n"
        "    return local\n"
        f"sys.argv = [{__file__!r}, '--child', {game_id!r}, '{matches}', {mode!r}]\n"
        "sys.settrace(tracer)\n"
        "try:\n"
        "    runpy.run_path(sys.argv[0], run_name='__main__')\n"
        "finally:\n"
        "    sys.settrace(None)\n"
        "for c, n in counts.items():\n"
        "    if '/arena/referee/' in c.co_filename:\n"
        "        print('ops', c.co_filename.rsplit('/', 1)[1] + ':' + c.co_qualname, n)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    found: Counter = Counter()
    decisions = 0
    for line in done.stdout.splitlines():
        if line.startswith("ops "):
            _, name, n = line.rsplit(" ", 2)
            found[name] += int(n)
        elif line.startswith("decisions "):
            decisions = int(line.split()[1])
    return found, decisions


def count(game_id: str, matches: int, mode: str) -> tuple[int, int]:
    """(instructions, decisions) of one process playing ``matches`` matches."""
    done = subprocess.run(
        [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
            os.path.realpath(sys.executable),
            __file__,
            "--child",
            game_id,
            str(matches),
            mode,
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},  # the same dicts and sets in every run
    )
    refs = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    decisions = re.search(r"^decisions (\d+)$", done.stdout, re.M)
    if refs is None or decisions is None:
        raise SystemExit(f"valgrind said:\n{done.stderr[-2000:]}")
    return int(refs.group(1).replace(",", "")), int(decisions.group(1))


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    parser = common.parser(__doc__)
    parser.add_argument("--game", action="append", help="one game (repeatable); default: all")
    parser.add_argument("--matches", type=int, default=12)
    parser.add_argument(
        "--opcodes",
        action="store_true",
        help="the Python bytecodes the record adds per decision in arena/referee (no valgrind)",
    )
    parser.add_argument(
        "--writer",
        action="store_true",
        help="count the writer alone (one match's record written --matches times)",
    )
    args = common.parse(parser, smoke={"matches": 1, "game": ["alles-oder-nichts"]})
    from arena.games import GAMES, find_game

    games = [find_game(g).id for g in args.game] if args.game else list(GAMES)
    if args.opcodes:
        rows = []
        for game_id in games:
            off, decisions = opcodes(game_id, args.matches, "off")
            gzip, _ = opcodes(game_id, args.matches, "gzip")
            extra = {name: (gzip[name] - off[name]) / decisions for name in gzip | off}
            top = sorted(extra.items(), key=lambda item: -item[1])[:4]
            rows.append(
                (
                    game_id,
                    f"{sum(extra.values()):.1f}",
                    ", ".join(f"{name} {n:.1f}" for name, n in top),
                )
            )
        print(f"Python bytecodes the record adds per decision ({args.matches} matches each way)")
        common.table(["game", "bytecodes/decision", "most in"], rows, left=1)
        return
    if args.smoke:
        # Each count runs Python under valgrind (~15 s): a smoke run checks the matches it
        # counts, played here, and leaves the counts out.
        print("skipped: the valgrind counts (~15 s each); the matches they count ran")
        for mode in ("off", "gzip", "writer:2"):
            subprocess.run(
                [sys.executable, __file__, "--child", games[0], "1", mode],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        return
    common.require_tools(args.smoke, "valgrind")
    # Compiled before any count: a .pyc written during one of the runs would count in it alone.
    compileall.compile_dir(common.ROOT / "arena", quiet=1)
    compileall.compile_dir(common.ROOT / "benchmarks", quiet=1)
    if args.writer:
        rows = []
        for game_id in games:
            small = count(game_id, 1, "writer:2")
            large = count(game_id, 1, f"writer:{2 + args.matches}")
            per_record = (large[0] - small[0]) / args.matches
            per_decision = (large[0] - small[0]) / (large[1] - small[1])
            rows.append((game_id, f"{per_record / 1000:.1f}k", f"{per_decision:.0f}"))
        print(f"the writer alone: one match's gzip record written {args.matches} times")
        common.table(["game", "instructions/record", "per decision"], rows)
        return
    rows = []
    for game_id in games:
        per = {}
        for mode in ("off", "gzip"):
            small, large = count(game_id, 2, mode), count(game_id, 2 + args.matches, mode)
            per[mode] = (large[0] - small[0], large[1] - small[1])
        off = per["off"][0] / per["off"][1]
        extra = per["gzip"][0] / per["gzip"][1] - off
        rows.append(
            (
                game_id,
                f"{off:.0f}",
                f"{extra:.0f}",
                f"x{(off + extra) / off:.3f}",
                f"{extra * per['gzip'][1] / args.matches / 1000:.0f}k",
            )
        )
        common.progress(f"{game_id} counted")
    print(f"instructions per decision, {args.matches} matches (the instant transport)")
    common.table(["game", "referee", "record", "with/without", "record per match"], rows)


if __name__ == "__main__":
    main()
