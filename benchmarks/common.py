"""What the benchmark scripts share: the bots and echo children they build, pinning, the physical
floor of a pipe round trip, medians and spreads, the load, the table every script prints, and the
``--smoke`` size that tests/test_benchmarks.py runs.

A script starts with the same two lines, so that it runs as a file or as a module::

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
    from benchmarks import common

Nothing of the arena is imported here at import time: a script that measures another checkout
(``--tree``) imports this module first and then that checkout's arena (:func:`use_tree`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
C_BOT_SOURCE = ROOT / "sample_bots" / "c" / "random_bot.c"
PY_BOT = ROOT / "sample_bots" / "python" / "random_bot.py"
GAME_IDS = ("alles-oder-nichts", "vingt-down", "eight-rounds", "all-fours")
# The tournaments the benchmarks play deal from this public seed (the demo file's own is a
# secret one, new each run: SPEC.md 10.3), so that every level and round plays the same deals.
SEED = 2026
PLAYERS = dict.fromkeys(GAME_IDS, 4)  # every game's default table, as tournaments play it

# A request of about the size the referee writes (~500 bytes), for the pipe measurements.
PAYLOAD = (
    b'{"type":"request","match_id":"m","id":1,"decision":"play","view":{"hand":'
    + b'["10H","QS","AD","7C","9D","KH"],"pad":"'
    + b"x" * 380
    + b'"},'
    + b'"legal":["10H","QS"],"time_left_ms":1000}\n'
)

# The least a bot can do: answer every line with the same action, in C and in Python.
C_ECHO = r"""
#include <stdio.h>
#include <string.h>
int main(void) {
    static char line[1 << 20];
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    while (fgets(line, sizeof line, stdin)) {
        fputs("{\"type\":\"action\",\"id\":1,\"index\":0}\n", stdout);
        fflush(stdout);
    }
    return 0;
}
"""

PY_ECHO = r"""
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    print(json.dumps({"type": "action", "id": message.get("id", 0), "index": 0}), flush=True)
"""


def _c_string(data: bytes) -> str:
    return '"' + data.decode().replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


# The C <-> C floor: a C parent that writes PAYLOAD to the echo child and reads its answer, in a
# loop, for argv[1] seconds; prints round trips per second.
C_PING = (
    r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
int main(int argc, char **argv) {
    static const char payload[] = """
    + _c_string(PAYLOAD)
    + r""";
    int down[2], up[2];
    if (argc < 3 || pipe(down) || pipe(up)) return 2;
    pid_t child = fork();
    if (child == 0) {
        dup2(down[0], 0);
        dup2(up[1], 1);
        close(down[1]);
        close(up[0]);
        execv(argv[2], argv + 2);
        _exit(127);
    }
    close(down[0]);
    close(up[1]);
    static char reply[65536];
    double seconds = atof(argv[1]), start = now(), elapsed = 0;
    long count = 0;
    for (;;) {
        if (write(down[1], payload, sizeof payload - 1) < 0) return 1;
        for (;;) {
            ssize_t got = read(up[0], reply, sizeof reply);
            if (got <= 0) return 1;
            if (reply[got - 1] == '\n') break;
        }
        if (++count % 256 == 0 && (elapsed = now() - start) >= seconds) break;
    }
    close(down[1]);
    waitpid(child, NULL, 0);
    printf("%.1f\n", count / elapsed);
    return 0;
}
"""
)


# -- the command line: --smoke, and what a script needs ----------------------------------------


def parser(doc: str | None) -> argparse.ArgumentParser:
    """An argument parser described by the script's docstring, with ``--smoke``."""
    found = argparse.ArgumentParser(
        description=(doc or "").strip().splitlines()[0],
        epilog="The figures and how to read them: docs/performance.md; the suite: "
        "benchmarks/README.md.",
    )
    found.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest size, in seconds: the same table, figures too small to trust "
        "(tests/test_benchmarks.py runs it)",
    )
    return found


def parse(
    found: argparse.ArgumentParser, smoke: dict[str, object], trusted_bots: bool = True
) -> argparse.Namespace:
    """The arguments; with ``--smoke`` the sizes in ``smoke`` replace the ones given."""
    # The benchmarks run the project's own sample bots, trusted as tournaments/demo.toml marks
    # them: run as root they would otherwise run as a user of their own, who cannot read root's
    # Python (SPEC.md 7). The processes a script starts inherit it. ``trusted_bots`` false: as
    # the arena runs them (a script that measures the users' switch).
    if trusted_bots:
        os.environ.setdefault("ARENA_BOT_USER", "@arena")
    args = found.parse_args()
    if args.smoke:
        for name, value in smoke.items():
            setattr(args, name, value)
    return args


def missing(what: str, smoke: bool) -> None:
    """A tool or package the script needs is not here: in a smoke run, say so and skip (exit 0);
    otherwise stop with the same message (exit 1)."""
    if smoke:
        print(f"skipped: needs {what}")
        raise SystemExit(0)
    raise SystemExit(f"needs {what}")


def require_tools(smoke: bool, *tools: str) -> None:
    """Each of ``tools`` (valgrind, node, cc) on PATH, else :func:`missing`."""
    for tool in tools:
        if shutil.which(tool) is None:
            missing(f"{tool} on PATH", smoke)


def require_module(module: str, install: str, smoke: bool) -> None:
    """The Python package ``module`` importable, else :func:`missing` saying how to install it."""
    try:
        __import__(module)
    except ImportError:
        missing(f"the Python package {module} ({install})", smoke)


# -- the bots, the echo children and the floor --------------------------------------------------


@contextlib.contextmanager
def scratch(prefix: str = "arena-bench-", where: str | Path | None = None) -> Iterator[Path]:
    """A temporary folder the bots can reach: they may run as another user (SPEC.md 7)."""
    with tempfile.TemporaryDirectory(prefix=prefix, dir=where) as tmp:
        folder = Path(tmp).resolve()
        folder.chmod(0o755)
        yield folder


def build_c(folder: Path, name: str, source: str, *flags: str) -> list[str]:
    """Compile C ``source`` (-O2 and ``flags``) into ``folder``; the program's argv."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise SystemExit("the benchmarks need a C compiler (cc) for their C bots and echo child")
    (folder / f"{name}.c").write_text(source)
    binary = folder / name
    command = [compiler, "-O2", *flags, "-o", str(binary), str(folder / f"{name}.c")]
    subprocess.run(command, check=True)
    return [str(binary)]


def build_c_bot(folder: Path) -> list[str]:
    """The C starter bot (sample_bots/c/random_bot.c), compiled into ``folder``."""
    return build_c(folder, "random_bot", C_BOT_SOURCE.read_text(), "-std=c11")


def c_bot_home(folder: Path) -> tuple[list[str], Path]:
    """The C starter bot compiled into a folder of its own inside ``folder``: its argv, and the
    folder, to give the bot as its working folder (a sealed bot sees only its own, SPEC.md 7)."""
    home = folder / "c-bot"
    home.mkdir(mode=0o755)
    return build_c_bot(home), home


def build_c_echo(folder: Path) -> list[str]:
    return build_c(folder, "echo", C_ECHO)


def build_c_ping(folder: Path) -> list[str]:
    return build_c(folder, "ping", C_PING)


def write_py_echo(folder: Path) -> list[str]:
    (folder / "echo.py").write_text(PY_ECHO)
    return [sys.executable, str(folder / "echo.py")]


def floor_round_trips(echo: list[str], seconds: float) -> tuple[float, float]:
    """The physical floor of the referee's exchange, measured here and now: a bare Python loop
    (os.write, one poll, os.read; no trio, no JSON) to the ``echo`` child, for ``seconds``.
    Returns (round trips per second, this process's CPU us per round trip). Run it where the
    referee runs (pinned to its core) so that both pay the same for the pipe and the wake-ups."""
    child = subprocess.Popen(echo, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    out_fd, in_fd = child.stdin.fileno(), child.stdout.fileno()
    poller = select.poll()
    poller.register(in_fd, select.POLLIN)
    count = 0
    try:
        start, cpu = time.perf_counter(), time.process_time()
        end = start + seconds
        while True:
            os.write(out_fd, PAYLOAD)
            reply = b""
            while not reply.endswith(b"\n"):
                poller.poll()
                reply += os.read(in_fd, 65536)
            count += 1
            if count % 256 == 0 and time.perf_counter() >= end:
                break
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    finally:
        child.stdin.close()
        child.wait()
    return count / elapsed, cpu / count * 1e6


def c_floor_round_trips(ping: list[str], echo: list[str], seconds: float) -> float:
    """Round trips per second of a C parent with the C ``echo`` child (``ping``: the C_PING
    program, built with :func:`build_c`): the floor with no Python on either side."""
    done = subprocess.run([*ping, str(seconds), *echo], capture_output=True, text=True, check=True)
    return float(done.stdout)


class InstantTransport:
    """A bot with its answer ready: index 0 to every request, returned at once by receive_some
    (no pipe, no scheduler pass), for ``BotProcess.connect``: what is left is the referee's own
    work."""

    def __init__(self) -> None:
        self.reply = b'{"type":"ready","name":"instant","version":"1"}\n'

    async def send_all(self, data: bytes) -> None:
        at = data.rfind(b'{"type":"request"')
        if at >= 0:
            start = data.index(b'"id":', at) + 5
            request_id = data[start : data.index(b",", start)]
            self.reply = b'{"type":"action","id":' + request_id + b',"index":0}\n'

    async def receive_some(self, max_bytes: int) -> bytes:
        reply, self.reply = self.reply, b""
        return reply

    async def terminate(self, grace_s: float) -> None:
        pass

    def exit_status(self) -> str | None:
        return None


# -- pinning ------------------------------------------------------------------------------------


def pinned_like_the_arena(on: bool = True) -> contextlib.AbstractContextManager[object]:
    """This process (and the bots it starts) on one core, as ``arena match`` and tournaments run
    a match (arena.referee.cores; a checkout older than that module is pinned the same way), or,
    ``on`` false, placed by the system."""
    if not on:
        return contextlib.nullcontext()
    try:
        from arena.referee.cores import pinned, spread_cores
    except ImportError:
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
        return contextlib.nullcontext()
    return pinned(spread_cores([1])[0])


# -- other checkouts side by side ---------------------------------------------------------------

TREE_VARIABLE = "ARENA_BENCH_TREE"


def tree_env(tree: str | Path, **extra: str) -> dict[str, str]:
    """The environment of a child that measures the checkout ``tree`` (see :func:`use_tree`)."""
    return {**os.environ, "PYTHONPATH": str(tree), TREE_VARIABLE: str(tree), **extra}


def use_tree() -> None:
    """In a child started with :func:`tree_env`: the arena imported from here on is the
    checkout's measured (the script's own folder came first on sys.path)."""
    tree = os.environ.get(TREE_VARIABLE)
    if tree:
        assert "arena" not in sys.modules, "the arena was imported before the tree was chosen"
        sys.path.insert(0, tree)


def child_lines(command: list[str], tree: str | Path, **extra: str) -> list[str]:
    """The lines a measuring child prints, run on ``tree``; exits naming the tree if it fails."""
    done = subprocess.run(command, env=tree_env(tree, **extra), capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{tree}: the measurement failed:\n{done.stderr[-2000:]}")
    return done.stdout.splitlines()


def trees(given: Sequence[str | Path] | None) -> list[str]:
    """The checkouts a --tree option names, resolved; by default this one."""
    return [str(Path(tree).resolve()) for tree in (given or [ROOT])]


# -- figures ------------------------------------------------------------------------------------


def median(values: Iterable[float]) -> float:
    return statistics.median(list(values))


def spread(values: Iterable[float], digits: int = 1) -> str:
    """The lowest and highest of repeated measurements, as "11.0-14.1": how far a median can be
    trusted on a shared machine."""
    found = list(values)
    return f"{min(found):.{digits}f}-{max(found):.{digits}f}"


def median_spread(values: Iterable[float], digits: int = 1) -> str:
    """The median with the spread of the rounds: "12.3 (11.0-14.1)"."""
    found = list(values)
    return f"{median(found):.{digits}f} ({spread(found, digits)})"


def load_note() -> str:
    """The 1-minute load average against the cores: above the core count every rate and CPU
    figure is inflated by the neighbours."""
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    busy = "; busier than its cores: figures inflated" if load > cores else ""
    return f"load average {load:.2f} on {cores} cores{busy}"


def table(header: Sequence[str], rows: Iterable[Sequence[object]], left: int = 1) -> None:
    """Print a table: the header, a rule, one line per row. Cells are printed as given (format
    numbers before), None as "-"; the first ``left`` columns are aligned left, the rest right."""
    cells = [[str(h) for h in header]]
    cells += [["-" if cell is None else str(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]

    def line(row: list[str]) -> str:
        return "  ".join(
            cell.ljust(width) if i < left else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ).rstrip()

    print(line(cells[0]))
    print("  ".join("-" * width for width in widths))
    for row in cells[1:]:
        print(line(row))
    sys.stdout.flush()


def progress(text: str) -> None:
    """A progress line, on stderr (the figures go to stdout)."""
    print(f"  {text}", file=sys.stderr, flush=True)


def quick_reads_taken() -> int:
    """The referee's quick reads so far in this process, in the tree measured: the count is in
    arena.referee.trio_fast, or in trees before it as ``_QuickRead.taken`` of the process module."""
    try:
        from arena.referee.trio_fast import quick_reads_taken as taken
    except ImportError:
        from arena.referee import process

        return process._QuickRead.taken  # type: ignore[attr-defined]
    return taken()
