"""``arena play`` in a real terminal: a pseudo-terminal of 80x24 drives a whole match of each game
against real bot processes, answering each prompt by number or by name; Ctrl-C stops a match and
its record says so."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import sys
import termios
import time
from pathlib import Path

import pytest

from arena.games import GAMES
from arena.referee.record import read_record, replay_record

ROOT = Path(__file__).resolve().parents[2]
# (the system's python3: bots run as another user, who may not read the test's virtualenv)
RANDOM_BOT = f"python3 {ROOT / 'sample_bots' / 'python' / 'random_bot.py'}"
CHOICE = re.compile(r"(\d+)\) (\S+)")
STEP_S = 60.0  # the longest wait for the next prompt (a loaded machine), never a pass mark


class Terminal:
    """A command in a pseudo-terminal of 80 columns and 24 rows."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the command, in the terminal
            os.chdir(cwd)
            os.environ.update(COLUMNS="80", LINES="24", TERM="dumb")
            os.execvp(argv[0], argv)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        self.output = b""
        self.status: int | None = None

    def read_until_prompt(self) -> str | None:
        """Output up to the next prompt (``> `` with nothing after it); None once it ended."""
        start = len(self.output)
        deadline = time.monotonic() + STEP_S
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:  # EIO: the command ended and closed the terminal
                    chunk = b""
                if not chunk:
                    self.wait()
                    return None
                self.output += chunk
                if self.output.endswith(b"> "):
                    return self.output[start:].decode()
        raise AssertionError(f"no prompt within {STEP_S} s; the screen ends:\n{self.tail()}")

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def wait(self) -> int:
        if self.status is None:
            _, status = os.waitpid(self.pid, 0)
            self.status = os.waitstatus_to_exitcode(status)
        return self.status

    def tail(self) -> str:
        return self.output[-2000:].decode(errors="replace")

    def text(self) -> str:
        return self.output.decode(errors="replace").replace("\r\n", "\n")


def arena(*args: str) -> list[str]:
    return [sys.executable, "-m", "arena", *args]


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_a_person_plays_a_whole_match_in_an_80x24_terminal(game_id, tmp_path):
    record = tmp_path / "match.jsonl"
    term = Terminal(
        arena(
            "play",
            game_id,
            "--bot",
            RANDOM_BOT,
            "--seed",
            "7",
            "--seat",
            "1",
            "--pace-ms",
            "0",
            "--record",
            str(record),
            "--name",
            "ada",
        ),
        tmp_path,
    )
    prompts = 0
    while (screen := term.read_until_prompt()) is not None:
        choices = CHOICE.findall(screen.rsplit("type a number or the action", 1)[-1])
        assert choices, f"a prompt without choices:\n{screen}"
        if prompts == 0:
            term.type("no such move\n")  # refused, and asked again
            assert "is not one of the choices" in (term.read_until_prompt() or "")
        # by number and by name, in turn
        term.type((choices[-1][0] if prompts % 2 else choices[-1][1].lower()) + "\n")
        prompts += 1
    assert term.wait() == 0, term.tail()
    text = term.text()
    assert "Match over (completed)." in text
    # (a file's path is as long as it is)
    assert max(len(line) for line in text.splitlines() if str(tmp_path) not in line) <= 80
    assert "you are seat 1" in text
    replay = replay_record(record)
    assert replay.result is not None and replay.result["termination"] == "completed"
    assert replay.header["seats"][1]["bot"] == "ada"
    decisions = [e for e in read_record(record) if e["type"] == "action" and e["seat"] == 1]
    assert len(decisions) == prompts and all(e["by"] == "bot" for e in decisions)


def test_ctrl_c_stops_the_match_and_the_record_says_so(tmp_path):
    record = tmp_path / "match.jsonl.gz"
    term = Terminal(
        arena(
            "play",
            "aon",
            "--bot",
            RANDOM_BOT,
            "--seed",
            "3",
            "--pace-ms",
            "0",
            "--record",
            str(record),
        ),
        tmp_path,
    )
    assert term.read_until_prompt() is not None
    term.type("1\n")
    assert term.read_until_prompt() is not None
    term.type("\x03")  # Ctrl-C: the terminal sends SIGINT to the command
    assert term.read_until_prompt() is None
    assert term.wait() == 130
    text = term.text()
    assert "stopped by the person at seat 0 (Ctrl-C)" in text
    assert "Traceback" not in text
    last = read_record(record)[-1]
    assert last == {**last, "type": "stopped", "reason": "stopped by the person at seat 0 (Ctrl-C)"}
    replay = replay_record(record)
    assert replay.stopped == last["reason"] and len(replay.state.actions) >= 1


def test_the_persons_time_limit_lets_the_autopilot_move(tmp_path):
    """--decision-ms: a person who does not answer in time is played by the autopilot."""
    record = tmp_path / "match.jsonl"
    term = Terminal(
        arena(
            "play",
            "all-fours",
            "--bot",
            RANDOM_BOT,
            "--seed",
            "3",
            "--pace-ms",
            "0",
            "--decision-ms",
            "300",
            "--record",
            str(record),
        ),
        tmp_path,
    )
    assert term.read_until_prompt() is not None  # and no answer: the time runs out
    assert term.read_until_prompt() is not None
    term.type("\x03")
    while term.read_until_prompt() is not None:
        pass
    assert "fault (timeout)" in term.text()
    entries = read_record(record)
    assert entries[0]["seats"][0]["decision_ms"] == 300
    assert any(e["type"] == "fault" and e["seat"] == 0 for e in entries)
    replay_record(record)


def test_bad_arguments_get_one_line(tmp_path):
    import subprocess

    for args, message in (
        (["aon", "--bot", RANDOM_BOT, "--seat", "4"], "--seat 4: expected 0..3"),
        (
            ["aon", "--bot", RANDOM_BOT, "--bot", RANDOM_BOT, "--players", "4"],
            "2 --bot given for the 3 other seats",
        ),
        (["nosuchgame", "--bot", RANDOM_BOT], "nosuchgame"),
    ):
        done = subprocess.run(arena("play", *args), capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert message in done.stderr and "Traceback" not in done.stderr


def test_the_end_of_input_ends_the_match_cleanly(tmp_path):
    import subprocess

    done = subprocess.run(
        arena("play", "vingt", "--bot", RANDOM_BOT, "--pace-ms", "0", "--record", "r.jsonl"),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 130
    assert "the person at seat 0 left (end of input)" in done.stderr
    assert json.loads((tmp_path / "r.jsonl").read_text().splitlines()[-1])["type"] == "stopped"


def test_a_taken_port_for_the_web_page_is_one_line(tmp_path):
    import socket
    import subprocess

    pytest.importorskip("arena.web.server", reason="the web extra is not installed")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            arena("play", "aon", "--bot", RANDOM_BOT, "--web", "--port", str(port)),
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
