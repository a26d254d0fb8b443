"""``arena tournament --web`` serves its pages from a process of its own, at the lowest CPU
priority, and the tournament goes on when that process dies (real processes; nothing timed)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import psutil
import pytest

from arena.tournament.store import ResultStore
from tests.web.conftest import ROOT, arena_env, tournament_toml

pytest.importorskip("arena.web.server", reason="the web extra is not installed")


def test_the_pages_are_served_by_another_process_and_the_tournament_outlives_it(
    tmp_path: Path,
) -> None:
    toml = tournament_toml(tmp_path, deals=2, name="webprocess")  # 32 matches
    results = tmp_path / "out" / "results.sqlite"
    arena = subprocess.Popen(
        [sys.executable, "-m", "arena", "tournament", str(toml), "--web", "0"],
        cwd=ROOT,
        env=arena_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert arena.stdout is not None
        lines: list[str] = []
        for line in arena.stdout:
            lines.append(line)
            if line.startswith("organiser: "):
                break
        url = re.search(r"watch it at (http://\S+)", "".join(lines))[1]
        port = int(url.rsplit(":", 1)[1].strip("/"))
        rest = threading.Thread(target=lambda: lines.extend(arena.stdout), daemon=True)
        rest.start()

        # Who listens on the page's port: a child of the arena, not the arena.
        def listening(process: psutil.Process) -> bool:
            return any(
                c.status == psutil.CONN_LISTEN and c.laddr.port == port
                for c in process.net_connections()
            )

        parent = psutil.Process(arena.pid)
        web = [p for p in parent.children() if "arena.web.child" in " ".join(p.cmdline())]
        assert len(web) == 1 and listening(web[0]) and not listening(parent)
        assert os.sched_getscheduler(web[0].pid) == os.SCHED_IDLE
        with urllib.request.urlopen(url + "api/summary", timeout=20) as response:
            assert json.load(response)["name"] == "webprocess"

        with ResultStore.open_read(results) as store:
            before = len(store.matches())
        web[0].send_signal(signal.SIGKILL)
        out, err = arena.communicate(timeout=300)
    finally:
        if arena.poll() is None:
            arena.kill()
            arena.wait()
    assert arena.returncode == 0, err
    said = "".join(lines) + out
    assert "the web pages stopped (the web process exited with -9); the tournament goes on" in said
    with ResultStore.open_read(results) as store:
        stored = store.matches()
    assert before < len(stored) == 32 and all(m.completed for m in stored)
    assert "Traceback" not in err


def test_a_port_taken_is_one_line_before_any_match(tmp_path: Path) -> None:
    toml = tournament_toml(tmp_path, name="taken")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = subprocess.run(
            [sys.executable, "-m", "arena", "tournament", str(toml), "--web", str(port)],
            cwd=ROOT,
            env=arena_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip().splitlines() == [
        f"Error: --web {port}: cannot listen on 127.0.0.1:{port}: Address already in use"
    ]
    with ResultStore.open_read(tmp_path / "out" / "results.sqlite") as store:
        assert store.matches(include_aborted=True) == []


def test_a_bad_secret_is_one_line(tmp_path: Path) -> None:
    toml = tournament_toml(tmp_path, name="short")
    run = subprocess.run(
        [sys.executable, "-m", "arena", "tournament", str(toml), "--web", "0"],
        cwd=ROOT,
        env={**arena_env(), "ARENA_WEB_SECRET": "short"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.strip().startswith("Error: ARENA_WEB_SECRET: expected at least 16")
