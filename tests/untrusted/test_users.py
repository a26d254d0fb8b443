"""Bots as another user, and a cgroup per bot.

As root the arena starts each bot as a user id of its own (``@own``) unless told otherwise (the
bot's ``user``, or ``ARENA_BOT_USER``): such a bot cannot signal the referee or another bot, read
their environment or memory, or read root's files. Where the machine offers cgroups v2, a daemon that left the bot's session, lost its
parent and cleared its environment still dies with the bot.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import trio

from arena.referee.bot_spec import BotSpec
from arena.referee.cgroups import BotCgroup, cgroup_problem
from arena.referee.clock import TimeControl
from arena.referee.process import BotProcess, BotStartupError, check_bwrap
from arena.referee.spawn import (
    ARENA_OWN_USER,
    BOT_USER_VARIABLE,
    OWN_UID_USER,
    OWN_UIDS_VARIABLE,
    UidLease,
    UserError,
    bot_user,
    own_uid_range,
)

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
async def test_a_bot_of_another_user_cannot_touch_the_referee_or_roots_files(
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
    if chosen == "bot's user":
        assert found["uid"] == 65534
    else:  # a user id of its own, from the range no account has
        low, high = own_uid_range()
        assert low <= found["uid"] <= high
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
    with pytest.raises(UserError, match="only an arena running as root"):
        bot_user(OWN_UID_USER)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert bot_user("nobody")[:2] == ("nobody", 65534)
    assert bot_user("0") is None  # root asked for explicitly: no switch
    assert bot_user(ARENA_OWN_USER) is None
    monkeypatch.setenv(BOT_USER_VARIABLE, "nobody")
    assert bot_user(None)[1] == 65534


@as_root
async def test_bots_of_their_own_user_ids_cannot_signal_each_other(tmp_path, monkeypatch):
    """The root default, @own: every bot a user id no other process has, so one bot cannot
    signal (or read) its neighbour, which all bots run as nobody could."""
    if other_user_can_run_bots():
        pytest.skip(other_user_can_run_bots())
    monkeypatch.delenv(BOT_USER_VARIABLE, raising=False)
    first = await BotProcess.start(probe(cwd=str(BOTS)), time_control=SLOW, log_dir=tmp_path)
    try:
        first_uid = json.loads(first.reported_version)["uid"]
        pid = first.transport.pid
        neighbour = BotSpec(
            "probe2", probe(cwd=str(BOTS)).argv, cwd=str(BOTS), env=(("PROBE_OTHER_PID", str(pid)),)
        )
        found = await report(neighbour, tmp_path)
        nobody = BotSpec("probe3", neighbour.argv, cwd=str(BOTS), env=neighbour.env, user="nobody")
        as_nobody = await report(nobody, tmp_path)
    finally:
        await first.close()
    low, high = own_uid_range()
    assert low <= first_uid <= high and low <= found["uid"] <= high
    assert found["uid"] != first_uid
    assert found["other_signalable"] is False
    assert as_nobody["other_signalable"] is False  # nobody vs an @own bot: different users too
    assert found["parent_signalable"] is False


def test_a_user_id_is_leased_to_one_bot_at_a_time_across_processes(tmp_path, monkeypatch):
    """Leases are locks every arena process shares: another process cannot take a held id, and
    an id is free again once released (or once its holder dies)."""
    if os.geteuid() != 0:
        pytest.skip("only root leases user ids")
    monkeypatch.setenv(OWN_UIDS_VARIABLE, "1799999990-1799999991")
    first = UidLease.acquire()
    second = UidLease.acquire()
    assert {first.uid, second.uid} == {1799999990, 1799999991}
    with pytest.raises(UserError, match=r"every user id in 1799999990-1799999991 is in use"):
        UidLease.acquire()
    other = subprocess.run(
        [sys.executable, "-c", "from arena.referee.spawn import UidLease; UidLease.acquire()"],
        capture_output=True,
        text=True,
        env={**os.environ, OWN_UIDS_VARIABLE: "1799999990-1799999991"},
    )
    assert "is in use" in other.stderr  # another arena process sees them held
    first.release()
    first.release()  # idempotent
    again = UidLease.acquire()
    assert again.uid == first.uid
    again.release()
    second.release()


def test_a_leased_user_id_starts_and_ends_with_no_process_of_it_left(tmp_path, monkeypatch):
    """Whatever a bot left running under its user id (no cgroup here, say) is killed when the id
    is given back, and again before it is handed out."""
    if os.geteuid() != 0:
        pytest.skip("only root leases user ids")
    monkeypatch.setenv(OWN_UIDS_VARIABLE, "1799999980-1799999980")
    stray = subprocess.Popen(["sleep", "600"], user=1799999980, group=1799999980, extra_groups=[])
    lease = UidLease.acquire()  # the leftover of an earlier holder dies first
    assert stray.wait(timeout=10) == -signal.SIGKILL
    daemon = subprocess.Popen(["sleep", "600"], user=lease.uid, group=lease.uid, extra_groups=[])
    lease.release()
    assert daemon.wait(timeout=10) == -signal.SIGKILL


@pytest.mark.parametrize("wrong", ["x-y", "5", "10-3", "0-7"])
def test_a_wrong_range_of_own_user_ids_is_one_line(monkeypatch, wrong):
    monkeypatch.setenv(OWN_UIDS_VARIABLE, wrong)
    with pytest.raises(UserError, match=rf"^{OWN_UIDS_VARIABLE}=") as error:
        own_uid_range()
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("caught_by", ["its cgroup", "its own user id"])
async def test_a_daemon_that_clears_its_environment_dies_with_the_bot(
    tmp_path, monkeypatch, caught_by
):
    """forking_bot.py vanish: setsid, double fork, then exec `sleep S` with an empty environment:
    no process group, session, parent link or token leads to it; its cgroup does, and so does
    its own user id (@own) where there are no cgroups."""
    if caught_by == "its cgroup":
        if cgroup_problem():
            pytest.skip(cgroup_problem())
        spec = BotSpec("vanish", (sys.executable, str(BOTS / "forking_bot.py"), "vanish"))
    else:
        if os.geteuid() != 0:
            pytest.skip("only root leases user ids")
        if other_user_can_run_bots():
            pytest.skip(other_user_can_run_bots())
        monkeypatch.setattr(BotCgroup, "create", classmethod(lambda cls, *limits: None))
        spec = probe(cwd=str(BOTS), user=OWN_UID_USER)
        spec = BotSpec(
            "vanish",
            (spec.argv[0], str(BOTS / "forking_bot.py"), "vanish"),
            **{"cwd": spec.cwd, "user": spec.user},
        )
    seconds = f"{1000 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 10**6}"
    spec = BotSpec(spec.name, (*spec.argv, seconds), cwd=spec.cwd, user=spec.user)
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


@as_root
@pytest.mark.parametrize("user", [OWN_UID_USER, "nobody"])
async def test_a_sandboxed_bot_runs_as_its_user_too(tmp_path, user):
    """bubblewrap started as the bot's user (it then needs unprivileged user namespaces)."""
    if other_user_can_run_bots():
        pytest.skip(other_user_can_run_bots())
    problem = await check_bwrap()
    if problem:
        pytest.skip(problem)
    found = await report(probe(cwd=str(BOTS), sandbox="bwrap", user=user), tmp_path)
    if user == "nobody":
        assert found["uid"] == 65534
    else:
        low, high = own_uid_range()
        assert low <= found["uid"] <= high
    assert found["capabilities"] == "0000000000000000"
    assert found["tmpdir_writable"] is True
