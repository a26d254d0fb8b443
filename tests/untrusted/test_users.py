"""Bots as another user, and a cgroup per bot.

As root the arena starts bots as ``nobody`` unless told otherwise (the bot's ``user``, or
``ARENA_BOT_USER``): such a bot cannot signal the referee, read its environment or memory, or read
root's files. Where the machine offers cgroups v2, a daemon that left the bot's session, lost its
parent and cleared its environment still dies with the bot.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import uuid
from pathlib import Path

import pytest
import trio

from arena.referee.bot_spec import BotSpec
from arena.referee.cgroups import cgroup_problem
from arena.referee.clock import TimeControl
from arena.referee.process import BotProcess, BotStartupError
from arena.referee.spawn import BOT_USER_VARIABLE, UserError, bot_user

BOTS = Path(__file__).resolve().parent.parent / "bots"
SLOW = TimeControl(startup_ms=20000)
SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin")
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root can start bots as another user")


def other_user_can_run_bots() -> str | None:
    """Why a bot cannot run as nobody here (None: it can)."""
    if SYSTEM_PYTHON is None:
        return "no system python3 in /usr/bin or /bin for nobody to run"
    for folder in [BOTS, *BOTS.parents]:
        if not os.stat(folder).st_mode & 0o001:
            return f"{folder} is not searchable by other users"
    return None


async def report(spec: BotSpec, tmp_path: Path) -> dict:
    bot = await BotProcess.start(spec, time_control=SLOW, log_dir=tmp_path / "logs")
    await bot.close()
    return json.loads(bot.reported_version)


def probe(**fields) -> BotSpec:
    return BotSpec(
        "probe", (SYSTEM_PYTHON or "python3", str(BOTS / "probe_bot.py"), "report"), **fields
    )


@as_root
@pytest.mark.parametrize("chosen", ["bot's user", "the root default"])
async def test_a_bot_run_as_nobody_cannot_touch_the_referee_or_roots_files(
    tmp_path, monkeypatch, chosen
):
    if other_user_can_run_bots():
        pytest.skip(other_user_can_run_bots())
    secret = tmp_path / "secret"
    secret.write_text("the organiser's")
    secret.chmod(0o600)
    if chosen == "bot's user":
        spec = probe(user="nobody", cwd=str(BOTS))
    else:
        monkeypatch.delenv(BOT_USER_VARIABLE, raising=False)
        spec = probe(cwd=str(BOTS))
    found = await report(
        BotSpec(spec.name, (*spec.argv, "0", str(secret)), cwd=spec.cwd, user=spec.user),
        tmp_path,
    )
    assert found["uid"] == 65534
    assert found["parent_signalable"] is False
    assert found["parent_environ_readable"] is False
    assert found["parent_memory_readable"] is False
    assert found["readable"] == {str(secret): False}
    assert found["tmpdir_writable"] is True  # its own TMPDIR was handed over to it


async def test_an_unknown_user_is_one_line_naming_the_bot(tmp_path):
    with pytest.raises(BotStartupError, match=r"^bot probe: user 'no-such-user-x' does not exist"):
        await BotProcess.start(probe(user="no-such-user-x"), time_control=SLOW, log_dir=tmp_path)


def test_only_root_switches_users(monkeypatch):
    monkeypatch.delenv(BOT_USER_VARIABLE, raising=False)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert bot_user(None) is None  # an ordinary user's bots run as that user
    with pytest.raises(UserError, match="only an arena running as root"):
        bot_user("nobody")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert bot_user(None)[:2] == ("nobody", 65534)
    assert bot_user("0") is None  # root asked for explicitly: no switch
    monkeypatch.setenv(BOT_USER_VARIABLE, "nobody")
    assert bot_user(None)[1] == 65534


async def test_a_daemon_that_clears_its_environment_dies_with_the_bot(tmp_path):
    """forking_bot.py vanish: setsid, double fork, then exec `sleep S` with an empty environment:
    no process group, session, parent link or token leads to it; its cgroup does."""
    if cgroup_problem():
        pytest.skip(cgroup_problem())
    seconds = f"{1000 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 10**6}"
    spec = BotSpec("vanish", (sys.executable, str(BOTS / "forking_bot.py"), "vanish", seconds))
    bot = await BotProcess.start(spec, time_control=SLOW, log_dir=tmp_path)

    def sleepers() -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and (entry / "cmdline").read_bytes().split(b"\0")[:2] == [
                    b"sleep",
                    seconds.encode(),
                ]:
                    found.append(int(entry.name))
            except OSError:
                pass
        return found

    try:
        with trio.fail_after(10):
            while not sleepers():
                await trio.sleep(0.05)
    finally:
        await bot.close()
    with trio.move_on_after(3):
        while sleepers():
            await trio.sleep(0.05)
    left = sleepers()
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], "the vanished daemon outlived its bot"


def test_a_tournament_bot_may_name_its_user_and_a_wrong_one_is_one_line(tmp_path):
    from arena.tournament.config import ConfigError, load_config
    from tests.tournament.test_config import GOOD, write

    with_user = GOOD.replace('name = "beta"\n', 'name = "beta"\nuser = "nobody"\n')
    config = load_config(write(tmp_path, with_user))
    assert [bot.user for bot in config.bots] == [None, "nobody"]
    plain = load_config(write(tmp_path, GOOD, "plain.toml"))
    assert "user" not in plain.definition()["bots"][0]  # older fingerprints stay as they were
    with pytest.raises(ConfigError, match=r"bots\[1\]\.user") as error:
        load_config(write(tmp_path, with_user.replace('"nobody"', "7"), "bad.toml"))
    assert "\n" not in str(error.value)
