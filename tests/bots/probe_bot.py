"""A bot that tests its own confinement, for the limit and sandbox tests. Usage:

    probe_bot.py report [PORT] [PATH ...]   report, then play honestly
    probe_bot.py cpu                        at the first request, burn CPU without end
    probe_bot.py file                       at the first request, write a file without end (in TMPDIR)

``report`` writes one line ``PROBE {json}`` to stderr before saying ready: its environment, working
directory, process group and session, resource limits, whether it could connect to 127.0.0.1:PORT,
and for each PATH whether it could create a file there. ``PROBE_REPORT`` in the environment, if set,
names a file that gets the same JSON (for tests without a sandbox).
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


def can_write(folder):
    try:
        with tempfile.NamedTemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def report(args):
    port = int(args[0]) if args else None
    limits = {name: resource.getrlimit(getattr(resource, name))
              for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_CORE", "RLIMIT_NPROC")}
    found = {
        "env": dict(os.environ),
        "cwd": os.getcwd(),
        "pid": os.getpid(),
        "own_group": os.getpgid(0) == os.getpid(),
        "own_session": os.getsid(0) == os.getpid(),
        "limits": limits,
        "network": can_connect(port) if port else None,
        "writable": {folder: can_write(folder) for folder in args[1:]},
        "tmpdir_writable": can_write(tempfile.gettempdir()),
    }
    line = json.dumps(found)
    sys.stderr.write("PROBE " + line + "\n")
    sys.stderr.flush()
    if os.environ.get("PROBE_REPORT"):
        with open(os.environ["PROBE_REPORT"], "w") as out:
            out.write(line)


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
    report(args)
    play(lambda request, hello: answer(request), "probe")
elif mode == "cpu":
    play(burn_cpu, "cpu-burner")
elif mode == "file":
    play(fill_file, "file-filler")
