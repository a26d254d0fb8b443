"""How many single edits of real records `arena replay --check` catches: the whole catalogue of
tests/referee/record_edits.py (every field kind at its first and last occurrences) over every
match of the record-audit corpus (tests/referee/audit_corpus.py: real bots, every game, faults,
a bank, stale replies), compact as stored and in full.

    python benchmarks/record_audit.py [--corpus DIR] [--before CHECKOUT]

Prints the catalogue's size, the edits the record and its results row can reveal, and how many
the check caught: this checkout's (the record re-derived, then compared with its results row,
the definition and the seed), and with ``--before`` an older checkout's ``replay_record`` (run
on the same edited files in a subprocess with that checkout first on its path). Exits 1 when
this checkout misses a revealable edit.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from tests.referee.audit_corpus import Checker, build, load
from tests.referee.record_edits import catalogue, has_short_arrays, unrevealable

OLD_CHECK = """
import json, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from arena.referee.record import ReplayError, replay_record
caught = []
for name in json.loads(Path(sys.argv[2]).read_text()):
    try:
        replay_record(Path(name))
    except ReplayError:
        caught.append(name)
    except Exception as error:  # a traceback then: not a catch
        print(f"{name}: {type(error).__name__}", file=sys.stderr)
print(json.dumps(caught))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", help="a folder with the corpus (played into it if empty)")
    parser.add_argument("--before", help="an older checkout whose replay_record to compare")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="arena-audit-") as scratch:
        folder = Path(args.corpus or scratch)
        started = time.perf_counter()
        corpus = load(folder) if (folder / "plain" / "results.sqlite").exists() else build(folder)
        print(f"corpus: {len(corpus)} matches ({time.perf_counter() - started:.1f} s)")
        checker = Checker(Path(scratch))
        edits_dir = Path(scratch) / "edits"
        edits_dir.mkdir()
        total, exempt, caught_now, missed = 0, Counter(), 0, []
        revealable_files: list[str] = []
        shapes: dict[str, str] = {}  # edited file -> the edit's field kind and operation
        started = time.perf_counter()
        for match in corpus:
            for compact, lines in ((True, match.compact), (False, match.full)):
                short = compact and has_short_arrays(lines)
                for edit in catalogue(lines):
                    total += 1
                    why = unrevealable(edit, lines, compact, short)
                    if why is not None:
                        exempt[why] += 1
                        continue
                    name = edits_dir / f"{total}.jsonl"
                    name.write_bytes(b"".join(line + b"\n" for line in edit.lines))
                    revealable_files.append(str(name))
                    shapes[str(name)] = f"{edit.shape} {edit.op}"
                    if checker.problem(match, edit.lines) is not None:
                        caught_now += 1
                    else:
                        missed.append(f"{match.tournament} {match.stored.match_id}: {edit.what}")
        spent = time.perf_counter() - started
        revealable = total - sum(exempt.values())
        print(f"catalogue: {total} single edits; {revealable} revealable by the record and its row")
        for why, count in exempt.most_common():
            print(f"  not revealable ({count}): {why}")
        print(f"this checkout: caught {caught_now} of {revealable} ({spent:.1f} s)")
        for line in missed[:20]:
            print(f"  missed: {line}")
        if args.before:
            listed = Path(scratch) / "edits.json"
            listed.write_text(json.dumps(revealable_files))
            done = subprocess.run(
                [sys.executable, "-c", OLD_CHECK, args.before, str(listed)],
                capture_output=True,
                text=True,
                check=True,
            )
            caught_then = set(json.loads(done.stdout))
            print(f"{args.before}: caught {len(caught_then)} of {revealable} (replay_record alone)")
            kinds = Counter(shapes[name] for name in revealable_files if name not in caught_then)
            for kind, count in kinds.most_common(12):
                print(f"  missed then ({count}): {kind}")
            crashed = done.stderr.strip().splitlines()
            if crashed:
                print(f"  {len(crashed)} tracebacks instead of a line, e.g. {crashed[0]}")
        return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
