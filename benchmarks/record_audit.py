"""How many single edits of real records `arena replay --check` catches: the whole catalogue of
tests/referee/record_edits.py (every field kind at its first and last occurrences) over every
match of the record-audit corpus (tests/referee/audit_corpus.py: real bots, every game, faults,
a bank, stale replies), compact as stored and in full.

    python3 benchmarks/record_audit.py [--corpus DIR] [--before CHECKOUT] [--matches N] [--edits N]

Prints the catalogue's size, the edits the record and its results row can reveal, and how many
the check caught: this checkout's (the record re-derived, then compared with its results row,
the definition and the seed), and with ``--before`` an older checkout's ``replay_record`` (run
on the same edited files in a subprocess with that checkout first on its path). Exits 1 when
this checkout misses a revealable edit. ``--matches`` and ``--edits`` audit only the corpus's
first matches and each record's first edits (the corpus is played whole).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from benchmarks import common
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
    parser = common.parser(__doc__)
    parser.add_argument("--corpus", help="a folder with the corpus (played into it if empty)")
    parser.add_argument("--before", help="an older checkout whose replay_record to compare")
    parser.add_argument("--matches", type=int, help="audit only the corpus's first N matches")
    parser.add_argument("--edits", type=int, help="only the first N edits of each record")
    args = common.parse(parser, smoke={"corpus": None, "before": None, "matches": 1, "edits": 20})
    with tempfile.TemporaryDirectory(prefix="arena-audit-") as scratch:
        folder = Path(args.corpus or scratch)
        started = time.perf_counter()
        corpus = load(folder) if (folder / "plain" / "results.sqlite").exists() else build(folder)
        played_s = time.perf_counter() - started
        audited = corpus[: args.matches]
        checker = Checker(Path(scratch))
        edits_dir = Path(scratch) / "edits"
        edits_dir.mkdir()
        total, exempt, caught_now, missed = 0, Counter(), 0, []
        revealable_files: list[str] = []
        shapes: dict[str, str] = {}  # edited file -> the edit's field kind and operation
        started = time.perf_counter()
        for match in audited:
            for compact, lines in ((True, match.compact), (False, match.full)):
                short = compact and has_short_arrays(lines)
                for edit in catalogue(lines)[: args.edits]:
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
        rows = [("this checkout (arena replay --check)", caught_now, revealable, f"{spent:.1f}")]
        missed_then: Counter[str] = Counter()
        crashed: list[str] = []
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
            rows.append(
                (f"{args.before} (replay_record alone)", len(caught_then), revealable, None)
            )
            missed_then = Counter(
                shapes[name] for name in revealable_files if name not in caught_then
            )
            crashed = done.stderr.strip().splitlines()
    print(
        f"corpus: {len(corpus)} matches, played or read in {played_s:.1f} s; audited "
        f"{len(audited)}; catalogue: {total} single edits, {revealable} revealable by the record "
        f"and its row; {common.load_note()}"
    )
    common.table(["checker", "caught", "of revealable", "seconds"], rows)
    if exempt:
        common.table(["not revealable, because", "edits"], exempt.most_common())
    for line in missed[:20]:
        print(f"missed: {line}")
    if missed_then:
        common.table(["missed by the older checkout", "edits"], missed_then.most_common(12))
    if crashed:
        print(f"{len(crashed)} tracebacks instead of a line, e.g. {crashed[0]}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
