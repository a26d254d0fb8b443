"""Proved by attack: a hostile bot in a real tournament tries every way out of its seat.

``arena tournament`` runs for real (a subprocess: its own output folder, results file, records
and logs) with three bots, each in a folder of its own: the attacker (tests/bots/probe_bot.py
attack) and two victims that write a secret to their stderr. At its first request the attacker
tries to read the output folder, the records, the results and tournament files, a victim's
folder and the logs; to connect to a TCP service on the host's loopback (a listener of this
test); to signal and trace every process it finds; to have 40 processes at once; and to leave
files in /tmp, /var/tmp and /dev/shm, a System V segment and a daemon behind. It reports what
it found on its stderr; after the run the test looks at the host for what it left.

Every way is closed where the arena can close it: as root (namespaces it makes itself, a user
id per bot) and as an ordinary user (bubblewrap with user namespaces), by default and with
``sandbox = "bwrap"``. Where the machine cannot close one, the arena says so at start, in one
line: an ordinary user's arena without bubblewrap, whose attacker then reaches what that line
names; it is also the proof that the attacker finds what is open, as is a trusted bot of root
(``user = "@arena"``, ``sandbox = "none"``), which reaches everything.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from ordinary_user import ordinary_user, run_arena

from arena.referee import confine

BOTS = Path(__file__).resolve().parent.parent / "bots"
ROOT = BOTS.parent.parent
PATIENCE_S = 300
MAX_PROCESSES = 16  # the attacker's own limit (max_processes), far below the 40 it tries


@dataclass
class Attack:
    report: dict  # what the attacker found (probe_bot.py attack)
    out: str  # what the arena printed
    left: dict  # what the attacker left on the host
    work: Path


def write_tournament(work: Path, *, tag: str, port: int, sandbox: str | None, user: str | None):
    """The three bots in folders of their own, the tournament file; returns the paths the
    attacker goes for."""
    for name in ("attacker", "victim1", "victim2"):
        shutil.copytree(BOTS, work / name, ignore=shutil.ignore_patterns("__pycache__"))
    out = work / "out"
    results = work / "results.sqlite"
    tournament = work / "attack.toml"
    targets = [
        out,
        out / "records",
        out / "logs",
        results,
        tournament,
        work / "victim1",
        work / "victim1" / "probe_bot.py",
    ]
    python = sys.executable  # (reachable for every user in the arena's namespace: run_arena)
    extra = "".join(
        [f'sandbox = "{sandbox}"\n' if sandbox else "", f'user = "{user}"\n' if user else ""]
    )
    bots = (
        f'[[bots]]\nname = "attacker"\ncwd = "{work / "attacker"}"\n'
        f'argv = ["{python}", "probe_bot.py", "attack", "{tag}", "{port}", '
        + ", ".join(f'"{t}"' for t in targets)
        + f"]\nmax_processes = {MAX_PROCESSES}\n{extra}\n"
    )
    for name in ("victim1", "victim2"):
        bots += (
            f'[[bots]]\nname = "{name}"\ncwd = "{work / name}"\n'
            f'argv = ["{python}", "probe_bot.py", "talk", "secret of {name} {tag}"]\n{extra}\n'
        )
    tournament.write_text(
        f'name = "attack"\nseed = 5\nconcurrency = 1\nworkers = 1\noutput = "{out}"\n'
        f'results = "{results}"\nrecords = true\naffinity = false\n\n'
        "[time]\ndecision_ms = 60000\nstartup_ms = 60000\n\n"
        '[[games]]\ngame = "aon"\nplayers = 3\ndeals = 1\n\n' + bots
    )
    return tournament


def left_on_host(tag: str) -> dict:
    """What the attacker left where the machine keeps it (and removes it: a test that fails
    leaves nothing either)."""
    left: dict = {}
    for folder in ("/tmp", "/var/tmp", "/dev/shm"):
        path = Path(folder) / f"arena-probe-{tag}"
        left[folder] = path.exists()
        path.unlink(missing_ok=True)
    key = int(tag[:7], 16)
    try:
        rows = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    except OSError:
        rows = []
    segments = [row.split()[1] for row in rows if int(row.split()[0]) == key]
    left["sysv_shm"] = bool(segments)
    for shmid in segments:
        subprocess.run(["ipcrm", "-m", shmid], capture_output=True, check=False)
    marker = f"600.{int(tag[:6], 16)}".encode()
    daemons = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_bytes().split(b"\0")[:2] == [
                b"sleep",
                marker,
            ]:
                daemons.append(int(entry.name))
        except OSError:
            continue
    left["daemon"] = bool(daemons)
    for pid in daemons:
        os.kill(pid, signal.SIGKILL)
    return left


def attack(*, account, sandbox: str | None = None, user: str | None = None, path_env=None):
    """One tournament with the attacker, run by ``account`` (None: this process's user)."""
    # Outside /tmp (bots have a /tmp of their own), where other users may pass, as a real
    # tournament's folder would be: the seal must hide what is there.
    parent = ROOT / "results"
    parent.mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="attack-", dir=parent))
    work.chmod(0o755)
    tag = uuid.uuid4().hex
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    try:
        tournament = write_tournament(
            work, tag=tag, port=server.getsockname()[1], sandbox=sandbox, user=user
        )
        if account is not None:
            for folder, _, files in os.walk(work):
                os.chown(folder, *account)
                for name in files:
                    os.chown(os.path.join(folder, name), *account)
        env = {k: v for k, v in os.environ.items() if k != "ARENA_BOT_USER"}  # the default
        env["PATH"] = path_env or os.environ.get("PATH", "/usr/bin:/bin")
        done = run_arena(
            ["tournament", str(tournament)], account, env=env, cwd=work, timeout=PATIENCE_S
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Traceback" not in done.stderr, done.stderr
        logs = list((work / "out" / "logs").glob("attacker-*.stderr.log"))
        lines = [
            line
            for log in logs
            for line in log.read_text().splitlines()
            if line.startswith("PROBE-REPORT ")
        ]
        assert len(lines) == 1, (logs, done.stdout, done.stderr)
        report = json.loads(lines[0].split(" ", 1)[1])
        return Attack(report, done.stdout, left_on_host(tag), work)
    finally:
        server.close()
        left_on_host(tag)
        shutil.rmtree(work, ignore_errors=True)


def nothing_readable(found) -> bool:
    """An error, an empty folder, or a file that reads as empty (hidden)."""
    if isinstance(found, str) or found == 0:
        return True
    return isinstance(found, dict) and all(nothing_readable(inner) for inner in found.values())


def sandbox_of_its_own(command: str | None) -> bool:
    """A process of the attacker's own sandbox (bubblewrap's, its pid 1)."""
    return command is not None and command.startswith("bwrap ")


def assert_sealed(attack: Attack) -> None:
    report = attack.report
    assert {
        path: found for path, found in report["read"].items() if not nothing_readable(found)
    } == {}
    assert report["network"] is False, "it reached a service on the host's loopback"
    outside = [(pid, cmd) for pid, cmd in report["signalable"] if not sandbox_of_its_own(cmd)]
    assert outside == [], "it could signal processes outside its seat"
    assert report["traceable"] == [] or all(
        sandbox_of_its_own(cmd) for pid, cmd in report["signalable"] if pid in report["traceable"]
    )
    # What it wrote was in its own folders (it could write there), and none of it outlived it.
    assert report["left"]["/tmp"] is True and report["left"]["daemon"] is True
    assert attack.left == {
        "/tmp": False,
        "/var/tmp": False,
        "/dev/shm": False,
        "sysv_shm": False,
        "daemon": False,
    }


def machine_can(method: str | None):
    machine = confine.machine_seal()
    if method == "namespaces" and machine.method != "namespaces":
        pytest.skip(f"root cannot make namespaces here: {machine.why_not}")
    if method == "bwrap" and machine.bwrap_problem is not None:
        pytest.skip(machine.bwrap_problem)


# -- as root ----------------------------------------------------------------------------------

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="run as an ordinary user (not root)")


@as_root
@pytest.mark.parametrize("sandbox", [None, "bwrap"])
def test_a_bot_of_roots_arena_reaches_nothing_but_its_pipes(sandbox):
    machine_can("namespaces" if sandbox is None else "bwrap")
    found = attack(account=None, sandbox=sandbox)
    assert_sealed(found)
    assert found.report["uid"] != 0
    assert found.report["processes_at_once"] < MAX_PROCESSES  # its own user id's limit
    assert "bots here get" not in found.out  # nothing is missing here: nothing is said


@as_root
def test_a_trusted_unsealed_bot_of_root_reaches_all_of_it():
    """The control: the attacker finds each route when it is open."""
    found = attack(account=None, sandbox="none", user="@arena")
    report = found.report
    assert report["uid"] == 0
    readable = {path for path, seen in report["read"].items() if not nothing_readable(seen)}
    assert readable == set(report["read"]), report["read"]
    logs = report["read"][str(found.work / "out" / "logs")]
    assert any(name.startswith("victim1-") and size > 0 for name, size in logs.items())
    assert report["network"] is True
    commands = [cmd or "" for _, cmd in report["signalable"]]
    assert any("arena tournament" in cmd for cmd in commands)
    assert any("probe_bot.py talk" in cmd for cmd in commands)
    assert report["traceable"], "root could trace the other bots"
    assert report["processes_at_once"] == 40
    # (its daemon may still be caught: by its cgroup, where root has them)
    assert {key: found.left[key] for key in ("/tmp", "/var/tmp", "/dev/shm", "sysv_shm")} == {
        "/tmp": True,
        "/var/tmp": True,
        "/dev/shm": True,
        "sysv_shm": True,
    }


# -- as an ordinary user --------------------------------------------------------------------------


def account_or_skip():
    account = ordinary_user()
    if isinstance(account, str):
        pytest.skip(account)
    return account


@pytest.mark.parametrize("sandbox", [None, "bwrap"])
def test_a_bot_of_an_ordinary_users_arena_reaches_nothing_but_its_pipes(sandbox):
    account = account_or_skip()
    found = attack(account=account, sandbox=sandbox)
    if found.report["network"] is not False and "bots here get no network" in found.out:
        pytest.skip("bubblewrap cannot run for an ordinary user here: " + found.out)
    assert_sealed(found)
    # What the machine does not give is said at start, once: a user of their own, a limit.
    (line,) = [line for line in found.out.splitlines() if line.startswith("bots here get")]
    assert "no user of their own" in line and "no network" not in line
    if "no process limit" in line:
        assert found.report["processes_at_once"] == 40


def test_where_bubblewrap_cannot_run_the_arena_says_what_bots_reach():
    """An ordinary user's arena that cannot seal (no bubblewrap on its PATH here) says so at
    start, and its attacker then reaches what that line names."""
    account = account_or_skip()
    found = attack(account=account, path_env="/nonexistent-bin")
    (line,) = [line for line in found.out.splitlines() if line.startswith("bots here get")]
    assert line.startswith(
        "bots here get no network, /tmp, /var/tmp or /dev/shm of their own, and the arena's "
        "files and other bots' folders not hidden (bubblewrap (the `bwrap` program) is not "
        "installed); no user of their own (the arena is not root"
    ), line
    assert "no process limit" in line
    assert line.endswith("(SPEC.md section 7)")
    assert found.out.count("bots here get") == 1  # once, not per bot
    report = found.report
    assert report["network"] is True
    results = str(found.work / "results.sqlite")
    assert not nothing_readable(report["read"][results])
    assert any("arena tournament" in (cmd or "") for _, cmd in report["signalable"])
    assert report["processes_at_once"] == 40
    assert found.left["/tmp"] is True
