"""A bot that tests its own confinement, for the limit and sandbox tests. Usage:

    probe_bot.py report [PORT] [PATH ...]   report, then play honestly
    probe_bot.py cpu                        at the first request, burn CPU without end
    probe_bot.py file                       at the first request, write a file without end
    probe_bot.py fill DIR ...               report how many MB it could store in each DIR

``report`` says ready with a JSON report as its version: its environment, working directory,
process group and session, resource limits, effective capabilities, whether it could read its
parent's memory, whether it could connect to 127.0.0.1:PORT, for each PATH whether it could create
a file there (a PATH ending in ``.sock`` is a Unix socket to connect to instead) and whether it
could read it, whether it could write in TMPDIR, what /tmp holds, its user id, and whether it
could signal its parent (or the process PROBE_OTHER_PID names) or read the parent's environment.
"""

import json
import os
import resource
import socket
import sys
import tempfile

from botlib import answer, play


def can_connect(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def can_reach_socket(path):
    try:
        with socket.socket(socket.AF_UNIX) as client:
            client.settimeout(2)
            client.connect(path)
            return True
    except OSError:
        return False


def can_write(folder):
    try:
        with tempfile.NamedTemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def capabilities():
    """The effective capability mask, as hex text (from /proc/self/status)."""
    with open("/proc/self/status") as status:
        return next(line.split()[1] for line in status if line.startswith("CapEff:"))


def can_read_parent_memory():
    """Whether the first mapped bytes of the parent (the referee, unsandboxed) can be read."""
    parent = os.getppid()
    try:
        with open(f"/proc/{parent}/maps") as maps:
            start = int(maps.readline().split("-")[0], 16)
        with open(f"/proc/{parent}/mem", "rb") as memory:
            memory.seek(start)
            return len(memory.read(16)) == 16
    except (OSError, ValueError):
        return False


def can_read(path):
    try:
        with open(path, "rb") as handle:
            handle.read(1)
            return True
    except OSError:
        return False


def can_signal(pid):
    try:
        os.kill(pid, 0)  # signal 0: only the permission check
        return True
    except OSError:
        return False


def report(args):
    port = int(args[0]) if args else None
    limits = {
        name: resource.getrlimit(getattr(resource, name))
        for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_CORE", "RLIMIT_NPROC")
    }
    found = {
        "env": dict(os.environ),
        "cwd": os.getcwd(),
        "pid": os.getpid(),
        "own_group": os.getpgid(0) == os.getpid(),
        "own_session": os.getsid(0) == os.getpid(),
        "limits": limits,
        "network": can_connect(port) if port else None,
        "reachable": {
            path: (can_reach_socket if path.endswith(".sock") else can_write)(path)
            for path in args[1:]
        },
        "tmpdir_writable": can_write(tempfile.gettempdir()),
        "tmp_listing": sorted(os.listdir("/tmp"))[:20],
        "capabilities": capabilities(),
        "parent_memory_readable": can_read_parent_memory(),
        "parent_environ_readable": can_read(f"/proc/{os.getppid()}/environ"),
        "parent_signalable": can_signal(os.getppid()),
        # PROBE_OTHER_PID: a neighbouring bot's process, which it should not be able to signal
        "other_signalable": (
            can_signal(int(os.environ["PROBE_OTHER_PID"]))
            if "PROBE_OTHER_PID" in os.environ
            else None
        ),
        "uid": os.getuid(),
        "readable": {path: can_read(path) for path in args[1:]},
    }
    return json.dumps(found)


def fill(folders):
    """MB stored in each folder: files of up to 1 MB each, written until one fails (full,
    read-only, forbidden) or 1 GB is reached; then they are removed again."""
    block = b"x" * (1 << 20)
    stored = {}
    for folder in folders:
        written, paths = 0, []
        try:
            while written < 1024:
                paths.append(os.path.join(folder, f"probe-fill-{written}"))
                with open(paths[-1], "wb") as out:
                    out.write(block)
                written += 1
        except OSError:
            pass
        for path in paths:
            try:
                os.remove(path)
            except OSError:
                pass
        stored[folder] = written
    return json.dumps(stored)


def burn_cpu(request, hello):
    while True:
        pass


def fill_file(request, hello):
    block = b"x" * (1 << 20)
    with open(os.path.join(tempfile.gettempdir(), "probe-filler"), "wb") as out:
        while True:
            out.write(block)
            out.flush()


mode, args = sys.argv[1], sys.argv[2:]
if mode == "report":
    play(lambda request, hello: answer(request), "probe", version=report(args))
elif mode == "fill":
    play(lambda request, hello: answer(request), "filler", version=fill(args))
elif mode == "cpu":
    play(burn_cpu, "cpu-burner")
elif mode == "file":
    play(fill_file, "file-filler")
