"""A bot that tests its own confinement, for the limit and sandbox tests. Usage:

    probe_bot.py report [PORT] [PATH ...]   report, then play honestly
    probe_bot.py cpu                        at the first request, burn CPU without end
    probe_bot.py file                       at the first request, write a file without end
    probe_bot.py fill DIR ...               report how many MB it could store in each DIR
    probe_bot.py attack TAG PORT PATH ...   at its first request, try every route out (below)
    probe_bot.py talk TEXT                  write TEXT to stderr at hello, then play honestly
    probe_bot.py crash TEXT                 at its first request, write TEXT to stderr and exit
    probe_bot.py quit TEXT                  write TEXT to stderr and exit before saying ready
(TEXT's backslash escapes are decoded first: ``\x1b[2J`` is a real escape sequence.)

``report`` says ready with a JSON report as its version: its environment, working directory,
process group and session, resource limits, effective capabilities, whether it could read its
parent's memory, whether it could connect to 127.0.0.1:PORT, for each PATH whether it could create
a file there (a PATH ending in ``.sock`` is a Unix socket to connect to instead) and whether it
could read it, whether it could write in TMPDIR, what /tmp holds, its user id, and whether it
could signal its parent (or the process PROBE_OTHER_PID names) or read the parent's environment.

``attack`` is a hostile bot run for real in a tournament. At the first request of its second
match (the other bots have written their stderr, the first match is stored) it tries: reading each
PATH (a folder: listing it and reading what it lists; a file: reading it), connecting to
127.0.0.1:PORT, signalling and tracing every process it can find or guess the id of, starting
40 processes at once, and leaving behind a file tagged TAG in each of /tmp, /var/tmp and
/dev/shm, a System V shared memory segment keyed by TAG and a daemon (``sleep`` with TAG in its
command line, in a session of its own, with an empty environment). It writes what it found to
stderr as one line, ``PROBE-REPORT {json}``, then plays honestly.
"""

import ctypes
import json
import os
import resource
import signal
import socket
import sys
import tempfile
import time

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


def what_is_there(path):
    """What can be read at ``path``: a folder's entries and the bytes of each file in it (one
    level down), a file's size as read; or the error."""
    try:
        if os.path.isdir(path):
            found = {}
            for name in sorted(os.listdir(path))[:50]:
                inner = os.path.join(path, name)
                found[name] = what_is_there(inner) if os.path.isdir(inner) else read_size(inner)
            return found
        return read_size(path)
    except OSError as error:
        return type(error).__name__


def read_size(path):
    try:
        with open(path, "rb") as handle:
            return len(handle.read())
    except OSError as error:
        return type(error).__name__


def command_line(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return None


def reachable_processes():
    """Every process it may signal, but itself and its own children: (pid, command line), the
    pids tried up to 30,000 past its own (processes started with it) and all /proc shows."""
    try:
        with open("/proc/sys/kernel/pid_max") as handle:
            pid_max = int(handle.read())
    except (OSError, ValueError):
        pid_max = 1 << 22
    mine = {os.getpid()}
    candidates = set(range(1, min(pid_max, os.getpid() + 30_000)))
    candidates.update(int(name) for name in os.listdir("/proc") if name.isdigit())
    found = []
    for pid in sorted(candidates - mine):
        try:
            os.kill(pid, 0)
        except OSError:
            continue
        if os.getppid() != pid and parent_of(pid) == os.getpid():
            continue  # a child of its own
        found.append((pid, command_line(pid)))
    return found


def parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return int(handle.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


PTRACE_ATTACH, PTRACE_DETACH = 16, 17


def traceable(pids):
    """The pids it could attach to with ptrace (detached again at once)."""
    libc = ctypes.CDLL(None, use_errno=True)
    found = []
    for pid in pids:
        if libc.ptrace(PTRACE_ATTACH, pid, None, None) == 0:
            try:
                os.waitpid(pid, getattr(os, "__WALL", 0x40000000))
            except OSError:
                pass
            libc.ptrace(PTRACE_DETACH, pid, None, None)
            found.append(pid)
    return found


def processes_at_once(wanted=40):
    """How many child processes it could have at once, of ``wanted`` (all ended again)."""
    children = []
    try:
        for _ in range(wanted):
            pid = os.fork()
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            children.append(pid)
    except OSError:
        pass
    for pid in children:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return len(children)


def leave_behind(tag):
    """Files tagged ``tag``, a System V segment keyed by it, and a daemon; what was made."""
    left = {}
    for folder in ("/tmp", "/var/tmp", "/dev/shm"):
        path = os.path.join(folder, f"arena-probe-{tag}")
        try:
            with open(path, "wb") as out:
                out.write(b"x" * 4096)
            left[folder] = True
        except OSError as error:
            left[folder] = type(error).__name__
    libc = ctypes.CDLL(None, use_errno=True)
    key = int(tag[:7], 16)
    left["sysv_shm"] = libc.shmget(key, 4096, 0o1000 | 0o600) >= 0  # IPC_CREAT
    pid = os.fork()
    if pid == 0:  # a daemon: its own session, no parent, no environment
        os.setsid()
        if os.fork() == 0:
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            os.execve("/bin/sleep", ["sleep", f"600.{int(tag[:6], 16)}"], {})
        os._exit(0)
    os.waitpid(pid, 0)
    left["daemon"] = True
    return left


def attack(tag, port, paths):
    reachable = reachable_processes()
    found = {
        "uid": os.getuid(),
        "pid": os.getpid(),
        "read": {path: what_is_there(path) for path in paths},
        "network": can_connect(port),
        "signalable": reachable,
        "traceable": traceable([pid for pid, _ in reachable]),
        "processes_at_once": processes_at_once(),
        "left": leave_behind(tag),
    }
    sys.stderr.write("PROBE-REPORT " + json.dumps(found) + "\n")
    sys.stderr.flush()


def attack_later(tag, port, paths):
    """``choose`` and ``on_message`` for play(): the attack at the first request of its second
    match, once the first match's record and result are stored."""
    seen = {"matches": 0, "done": False}

    def on_message(message):
        if message.get("type") == "match_start":
            seen["matches"] += 1

    def choose(request, hello):
        if seen["matches"] >= 2 and not seen["done"]:
            seen["done"] = True
            attack(tag, port, paths)
        return answer(request)

    return choose, on_message


def honest(request, hello):
    return answer(request)


def crash_saying(said):
    def choose(request, hello):
        sys.stderr.write(said)
        sys.stderr.flush()
        raise SystemExit(4)

    return choose


mode, args = sys.argv[1], sys.argv[2:]
if mode == "report":
    play(lambda request, hello: answer(request), "probe", version=report(args))
elif mode == "fill":
    play(lambda request, hello: answer(request), "filler", version=fill(args))
elif mode == "cpu":
    play(burn_cpu, "cpu-burner")
elif mode == "file":
    play(fill_file, "file-filler")
elif mode == "attack":
    choose, on_message = attack_later(args[0], int(args[1]), args[2:])
    play(choose, "attacker", on_message)
elif mode in ("talk", "crash", "quit"):
    said = args[0].encode().decode("unicode_escape") + "\n"
    if mode != "crash":
        sys.stderr.write(said)
        sys.stderr.flush()
    if mode == "quit":
        sys.exit(3)
    play(crash_saying(said) if mode == "crash" else honest, mode)
