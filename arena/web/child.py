"""``arena tournament --web``: the web pages served from a process of their own.

The tournament's process plays matches; a page request, an event stream or a replay of a match
served from it would take the referee's event loop, its interpreter (the GIL) and its core, and
honest bots would be charged for it (SPEC 5). So the tournament starts this module as a child
process, which serves the results file and the records exactly as ``arena serve`` does (it reads
them as the tournament writes them), at the lowest CPU priority (``SCHED_IDLE``: it runs only
when no referee and no bot wants the core). Its settings, the organiser's secret among them,
come on its standard input (a command line is readable by every user of the machine); it
answers one JSON line on its standard output, ``{"url": ...}`` once it serves or ``{"error":
...}``. It stops when the tournament's process stops (a parent-death signal), and the tournament
goes on without it if it dies.

The parent's side is :func:`serve_elsewhere`; the child's is :func:`main`. Neither imports the
web server into the tournament's process.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import trio

START_TIMEOUT_S = 60.0  # its imports and the results file's first read, on a loaded machine
STOP_TIMEOUT_S = 5.0
PR_SET_PDEATHSIG = 1


class WebStartError(Exception):
    """The web process could not start serving (one line)."""


@dataclass(frozen=True)
class WebSettings:
    """What the web process serves, and where."""

    results: str
    records_dir: str | None
    confidence: float
    host: str
    port: int
    secret: str | None = None
    allowed_hosts: list[str] = field(default_factory=list)


async def serve_elsewhere(
    settings: WebSettings,
    on_gone: Callable[[str], None],
    *,
    task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Start the web process, hand ``task_status`` its (URL, pid) once it serves, and keep it
    until cancelled (then it is stopped). If it ends by itself, ``on_gone`` gets one line and
    the caller goes on. A process that cannot start serving is a WebStartError."""
    command = [sys.executable, "-m", "arena.web.child", str(os.getpid())]
    async with trio.open_nursery() as nursery:
        process: trio.Process = await nursery.start(
            partial(
                trio.run_process,
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                check=False,
                start_new_session=True,  # the terminal's Ctrl-C is the tournament's to handle
            )
        )
        assert process.stdin is not None and process.stdout is not None
        said: deque[str] = deque(maxlen=3)  # its last lines of standard error, to quote
        nursery.start_soon(_keep_last_lines, process.stderr, said)
        await process.stdin.send_all(json.dumps(asdict(settings)).encode() + b"\n")
        await process.stdin.aclose()
        answer: dict[str, Any] = {}
        with trio.move_on_after(START_TIMEOUT_S):
            answer = await _first_line(process.stdout)
        if "url" not in answer:
            process.kill()
            await process.wait()
            why = answer.get("error") or (said[-1] if said else None) or "it did not start"
            raise WebStartError(str(why))
        task_status.started((str(answer["url"]), process.pid))
        code = await process.wait()
        await trio.sleep(0.1)  # (its last words reach the stderr reader)
        last = f": {said[-1]}" if said else ""
        on_gone(
            f"the web pages stopped (the web process exited with {code}{last}); the tournament "
            f"goes on; arena serve {settings.results} serves them again"
        )
        nursery.cancel_scope.cancel()


async def _first_line(stream: trio.abc.ReceiveStream) -> dict[str, Any]:
    data = b""
    while b"\n" not in data:
        chunk = await stream.receive_some()
        if not chunk:
            return {}
        data += chunk
    try:
        answer = json.loads(data.split(b"\n", 1)[0])
    except ValueError:
        return {}
    return answer if isinstance(answer, dict) else {}


async def _keep_last_lines(stream: trio.abc.ReceiveStream | None, said: deque[str]) -> None:
    if stream is None:
        return
    pending = b""
    async for chunk in stream:
        pending += chunk
        *lines, pending = pending.split(b"\n")
        said.extend(line.decode(errors="replace").strip() for line in lines if line.strip())
        pending = pending[-4096:]


# -- the web process --------------------------------------------------------------------------------


def _idle_and_bound_to(parent: int) -> None:
    """Run at the lowest priority (only when a core has nothing else to do), on any core (not
    the one the tournament's process may have pinned itself and its bots to: SPEC 7), and end
    with the process that started this one."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        os.nice(19)  # (no SCHED_IDLE here: the lowest nice level)
    try:
        os.sched_setaffinity(0, range(os.cpu_count() or 1))
    except (AttributeError, OSError):
        pass  # (a machine that does not pin, or a cpuset that forbids some cores)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent was gone before the signal was asked for
        sys.exit(0)


def _say(answer: dict[str, Any]) -> None:
    """The answer line; an error also on standard error (after the URL, the parent reads only
    that, and quotes its last line)."""
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
    if "error" in answer:
        print(answer["error"], file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    parent = int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else os.getppid()
    _idle_and_bound_to(parent)
    settings = WebSettings(**json.loads(sys.stdin.readline()))
    # (imported here, after the priority is lowered: the imports are most of its start)
    from arena.tournament.store import ResultStore, StoreError
    from arena.web.access import Access
    from arena.web.server import ServeError, serve_until_signalled
    from arena.web.source import TournamentSource

    try:
        store = ResultStore.open_read(settings.results)
        source = TournamentSource.of_file(
            Path(settings.results),
            store,
            records_dir=Path(settings.records_dir) if settings.records_dir else None,
            confidence=settings.confidence,
        )
    except StoreError as exc:
        _say({"error": str(exc)})
        return 2
    try:
        serve_until_signalled(
            store,
            source,
            settings.host,
            settings.port,
            access=Access(settings.secret, source.bots),
            allowed_hosts=settings.allowed_hosts,
            on_ready=lambda url: _say({"url": url}),
        )
    except ServeError as exc:
        _say({"error": str(exc)})
        return 2
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
