"""Proved by attack: an uploaded bot tries, while it builds and while it plays, to read and
write the league's files and another author's folder, to reach the network, and to be root.

A real ``arena league serve`` (outside /tmp, where other users may pass, as a real league's
folder would be: the seal must hide what is there), run as root and as an ordinary user. Two
authors register: the victim uploads the sample bot with a secret beside it, then the attacker
uploads a bot whose build (``probe.py build``) and whose every process (``probe.py play``, the
sample bot after its probes) report what they reached: the build on its output (its version's
log), the bot on its standard error (the league's logs). As root the build and the bot run as
users of their own (never root), and what the build left in its folder is root's afterwards.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.league.conftest import (
    ORGANISER,
    RANDOM_BOT,
    ROOT,
    Server,
    league_toml,
    open_store,
    targz,
)
from tests.ordinary_user import as_user, ordinary_user
from tests.sandbox_support import needs_bwrap
from tests.waiting import wait_for

PROBE = r"""
import json, os, socket, sys

mode, port, *paths = sys.argv[1:]
read, wrote = {}, {}
for path in paths:
    try:
        if os.path.isdir(path):
            read[path] = sorted(os.listdir(path))
        else:
            with open(path, "rb") as handle:
                read[path] = len(handle.read())
    except OSError as error:
        read[path] = error.strerror
    target = (path if os.path.isdir(path) else os.path.dirname(path)) + "/pwned-" + mode
    try:
        with open(target, "w") as handle:
            handle.write("pwned")
        wrote[target] = True
    except OSError as error:
        wrote[target] = error.strerror
network = True
try:
    socket.create_connection(("127.0.0.1", int(port)), timeout=5).close()
except OSError:
    network = False
if mode == "build":
    with open("built.txt", "w") as handle:
        handle.write("made by the build")
report = {"uid": os.getuid(), "read": read, "wrote": wrote, "network": network}
print("PROBE-REPORT " + mode + " " + json.dumps(report), file=sys.stdout if mode == "build" else sys.stderr, flush=True)
if mode == "play":
    sys.argv[1:] = ["7"]
    exec(open("random_bot.py").read(), {"__name__": "__main__"})
"""


@contextmanager
def league_served(work: Path, account: tuple[int, int] | None) -> Iterator[Server]:
    """``arena league serve`` in ``work`` run by ``account`` (None: this process's user)."""
    toml = league_toml(work, house=1, extra='[organiser]\nregistration = "open"\n')
    if account is not None:
        for folder, _, files in os.walk(work):
            os.chown(folder, *account)
            for name in files:
                os.chown(os.path.join(folder, name), *account)
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "league", "serve", str(toml), "--port", "0"],
        cwd=work,
        env={
            **{k: v for k, v in os.environ.items() if k != "ARENA_BOT_USER"},  # the default
            "PYTHONPATH": str(ROOT),
            "ARENA_WEB_SECRET": ORGANISER,
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=as_user(account),
    )
    try:
        assert process.stdout is not None
        seen = []
        for line in process.stdout:
            seen.append(line)
            found = re.search(r"league \S+ at (http://\S+)", line)
            if found:
                break
        assert found, "arena league serve printed no URL:\n" + "".join(seen)
        threading.Thread(target=process.stdout.read, daemon=True).start()
        yield Server(found[1], process, toml)
    finally:
        process.kill()
        process.wait()


def _register(server: Server, name: str) -> str:
    status, answer = server.post("api/register", json.dumps({"name": name}).encode())
    assert status == 200, answer
    return answer["token"]


def _folder_of(toml: Path, version_id: int) -> str:
    store = open_store(toml)
    try:
        folder = store.version(version_id).folder
    finally:
        store.close()
    assert folder is not None
    return folder


def _probe_log(logs: Path) -> str | None:
    """The attacker's standard error logs, once its probe reported in one."""
    text = "".join(p.read_text() for p in logs.glob("attacker.probe.v1-*.stderr.log"))
    return text if "PROBE-REPORT play" in text else None


def _report(text: str, mode: str) -> dict:
    lines = [line for line in text.splitlines() if line.startswith(f"PROBE-REPORT {mode} ")]
    assert lines, text[-3000:]
    return json.loads(lines[0].split(" ", 2)[2])


def _nothing_reached(report: dict, secret: str) -> None:
    readable = {
        path: found
        for path, found in report["read"].items()
        if not (isinstance(found, str) or found in (0, []))
    }
    assert readable == {}, "it read the league's files or another author's"
    assert not [target for target, done in report["wrote"].items() if done is True]
    assert secret not in json.dumps(report)
    assert report["network"] is False, "it reached the league's server over the network"


@needs_bwrap
@pytest.mark.parametrize("run_by", ["root", "ordinary user"])
def test_an_uploaded_bot_reaches_nothing_of_the_league(run_by: str) -> None:
    if os.geteuid() != 0 and run_by == "root":
        pytest.skip("the suite does not run as root")
    account = ordinary_user() if run_by == "ordinary user" else None
    if isinstance(account, str):
        pytest.skip(account)
    parent = ROOT / "results"
    parent.mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="league-attack-", dir=parent))
    work.chmod(0o755)
    secret = f"secret-of-the-victim-{uuid.uuid4().hex}"
    try:
        with league_served(work, account) as server:
            data = work / "data"
            victim = _register(server, "victim")
            attacker = _register(server, "attacker")
            victim_files = {
                "bot.toml": 'name = "honest"\nauthor = "V"\nversion = "1"\n'
                'run = ["python3", "random_bot.py"]\n',
                "random_bot.py": (RANDOM_BOT / "random_bot.py").read_bytes(),
                "secret.txt": secret,
            }
            status, answer = server.post("api/submit", targz(victim_files), token=victim)
            assert status == 200 and answer["status"] == "active", answer.get("log", answer)
            victim_folder = Path(_folder_of(server.toml, answer["id"]))
            targets = [
                str(data / "league.sqlite"),
                str(data / "logs"),
                str(data / "records"),
                str(data / "bots" / "victim"),
                str(victim_folder / "secret.txt"),
                str(server.toml),
            ]
            port = str(server.url.rsplit(":", 1)[1].strip("/"))
            args = json.dumps([port, *targets])[1:-1]
            attack_files = {
                "bot.toml": 'name = "probe"\nauthor = "A"\nversion = "1"\n'
                f'build = ["python3", "probe.py", "build", {args}]\nbuild_timeout_s = 60\n'
                f'run = ["python3", "probe.py", "play", {args}]\n',
                "probe.py": PROBE,
                "random_bot.py": (RANDOM_BOT / "random_bot.py").read_bytes(),
            }
            status, answer = server.post("api/submit", targz(attack_files), token=attacker)
            assert status == 200 and answer["status"] == "active", answer.get("log", answer)
            built = _report(answer["log"], "build")
            _nothing_reached(built, secret)
            folder = Path(_folder_of(server.toml, answer["id"]))
            made = folder / "built.txt"
            assert made.read_text() == "made by the build"  # it could write its own folder
            if os.geteuid() == 0 and account is None:
                assert built["uid"] != 0, "the build ran as root"
                assert made.stat().st_uid == 0 and made.stat().st_mode & 0o777 == 0o644
            # a match with the attacker at the table is stored, with its probe's report
            text = wait_for("a match of the attacker", lambda: _probe_log(data / "logs"))
            played = _report(text, "play")
            _nothing_reached(played, secret)
            if os.geteuid() == 0 and account is None:
                assert played["uid"] != 0, "the bot played as root"
        assert not list(work.rglob("pwned-*"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
