"""Tournaments played in worker processes (``--workers``), end to end with real processes: the
same stored results as one process, SIGKILL of the parent and Ctrl-C leave no worker or bot
behind, errors inside a worker end the run with the usual line. Generous limits; nothing is timed.
"""

import os
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest
import trio
import trio.testing

from arena.referee.bot_spec import BotSpec
from arena.referee.record import record_lines
from arena.referee.results import FaultRecord
from arena.tournament import workers
from arena.tournament.config import TournamentConfig, load_config
from arena.tournament.errors import TournamentError
from arena.tournament.schedule import build_schedule
from arena.tournament.store import ResultStore, StoredMatch
from arena.tournament.summary import RunSummary
from arena.tournament.workers import (
    SPAWN_WAIT_S,
    Finished,
    FrameReader,
    Play,
    Setup,
    _from_worker,
    _to_worker,
    frame,
    slots_per_worker,
)
from tests.referee.test_record_gzip import without_times
from tests.tournament.test_tournament_cli import (
    PATIENCE_S,
    RANDOM_BOT,
    arena,
    bot_processes,
    release,
    stop_at_matches,
    tournament_file,
    wait_until_no_bots,
)

ROOT = Path(__file__).resolve().parents[2]
SEEDED_BOT = ROOT / "sample_bots" / "python" / "random_bot.py"  # seeded per match


def children(pid):
    """Pids of the live processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
            if fields.get("PPid", "").strip() == str(pid) and not fields["State"].startswith("Z"):
                found.append(int(entry.name))
    return found


def cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # it has just ended
        return b""


def alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_until_dead(pids):
    deadline = time.monotonic() + 30
    while [p for p in pids if alive(p)]:
        assert time.monotonic() < deadline, f"processes left: {[p for p in pids if alive(p)]}"
        time.sleep(0.1)


def workers_of(process, count):
    """The ``count`` worker processes of a running ``arena tournament`` (its children running the
    module), once all have started."""
    deadline = time.monotonic() + PATIENCE_S
    while True:
        found = [
            pid for pid in children(process.pid) if b"arena.tournament.workers" in cmdline(pid)
        ]
        assert len(found) <= count
        if len(found) == count:
            return found
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no worker processes"
        time.sleep(0.05)


def outcome(match):
    """What a match's result is, without its timings (which differ from run to run)."""
    return (
        match.bots,
        match.seed,
        match.scores,
        match.placings,
        match.teams,
        match.forfeited,
        match.faults,
        match.status,
        match.reason,
        tuple(len(s) for s in match.decision_ms),
    )


def test_frames_round_trip_config_matches_and_results(tmp_path):
    config = load_config(tournament_file(tmp_path))
    match = build_schedule(config.seed, [b.name for b in config.bots], config.games)[0]
    setup = Setup(config, ["r0", "r1"], 2)

    async def check():
        send, receive = trio.testing.memory_stream_pair()
        await send.send_all(frame(setup) + frame(Play(match)))
        await send.aclose()
        reader = FrameReader(receive, _to_worker)
        assert await reader.next() == setup
        assert await reader.next() == Play(match)
        assert await reader.next() is None

    trio.run(check)
    assert isinstance(setup.config, TournamentConfig) and setup.config.results == config.results
    assert isinstance(_from_worker.decode(frame(Finished(_stored_example(match), 3))[4:]), Finished)


def _stored_example(match):
    return StoredMatch(
        match.match_id,
        match.game,
        match.game_id,
        match.table,
        match.deal,
        match.rotation,
        match.seed,
        match.players,
        {"x": 1},
        match.seats,
        (1, 2, 3),
        (1, 2, 3),
        None,
        (),
        (FaultRecord.read(0, "r0", "timeout", 4, "m"),),
        ((1.5,), (), (2.0,)),
    )


def test_slots_split_concurrency_over_workers():
    assert slots_per_worker(2, 2) == [1, 1]
    assert slots_per_worker(5, 2) == [3, 2]
    assert slots_per_worker(3, 8) == [1, 1, 1]
    assert slots_per_worker(4, 1) == [4]


def test_worker_count_defaults_to_cores_up_to_concurrency(monkeypatch):
    import os

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    base = TournamentConfig(name="t", seed=0, bots=(), games=(), concurrency=1)
    assert base.worker_count() == 1
    assert TournamentConfig(name="t", seed=0, bots=(), games=(), concurrency=8).worker_count() == 2
    assert (
        TournamentConfig(
            name="t", seed=0, bots=(), games=(), concurrency=8, workers=3
        ).worker_count()
        == 3
    )
    assert (
        TournamentConfig(
            name="t", seed=0, bots=(), games=(), concurrency=2, workers=5
        ).worker_count()
        == 2
    )


def seeded_tournament(tmp_path, name, *, records=False):
    bots = "".join(
        f'[[bots]]\nname = "p{i}"\nargv = ["{sys.executable}", "{SEEDED_BOT}", "{i}"]\n'
        for i in range(4)
    )
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f'name = "same"\nseed = 5\noutput = "{tmp_path / name}"\n'
        f'games = ["aon", "vingt-down", "eight-rounds", "all-fours"]\ndeals = 1\n'
        f"records = {'true' if records else 'false'}\n\n{bots}"
    )
    return path


def same_key(played, path):
    """Give tournament file ``path`` the results file of ``played``, whose key of the match ids
    sent to the bots it then keeps (SPEC 10.5), so that with ``--restart`` it plays the same
    tournament again: the bots are sent the same ids."""
    results = load_config(path).results
    results.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(load_config(played).results, results)


def played_lines(match):
    """A stored match's record lines less what depends on the clock or on which pooled process
    played it (request ids run on across a process's matches, and the replies' texts hold them),
    or on when the arena read a bot's stderr (the random bot logs each match's end after it:
    a decision's stderr, SPEC 8, may then hold it)."""
    lines = record_lines(
        Path(match.record_path), at=match.record_span[0], length=match.record_span[1]
    )
    return [
        {k: v for k, v in line.items() if k not in ("id", "pending", "text", "stderr")}
        for line in without_times(lines)
    ]


def test_workers_store_the_same_results_as_one_process(tmp_path):
    results = {}
    records = {}
    for name, options in (
        ("one", ("--concurrency", "1", "--workers", "1")),
        ("two", ("--concurrency", "3", "--workers", "2", "--restart")),
    ):
        path = seeded_tournament(tmp_path, name, records=True)
        if name == "two":
            same_key(tmp_path / "one.toml", path)
        process = arena("tournament", path, *options)
        out, err = process.communicate(timeout=PATIENCE_S)
        assert process.returncode == 0, err
        expected = "1 process" if name == "one" else "2 processes (this one and 1 worker process)"
        assert expected in out
        with ResultStore.open_read(load_config(path).results) as store:
            stored = store.matches(include_aborted=True)
        results[name] = {m.match_id: outcome(m) for m in stored}
        # Each match's record, read from its span in its process's records files (a file per
        # match at once: matches played side by side never share one).
        records[name] = {m.match_id: played_lines(m) for m in stored}
        files = {m.record_path for m in stored}
        assert len(files) == 1 if name == "one" else len(files) >= 2
    config = load_config(path)
    assert (
        len(results["one"])
        == len(build_schedule(config.seed, [b.name for b in config.bots], config.games))
        == 3 * 4 + 3 * 4
    )
    assert results["one"] == results["two"]
    assert records["one"] == records["two"]  # the same lines, whichever file holds them


def test_sigkill_of_the_parent_ends_workers_and_bots_and_a_rerun_completes(tmp_path):
    path = tournament_file(tmp_path, deals=8, concurrency=2)
    config = load_config(path)
    expected = {
        m.match_id for m in build_schedule(config.seed, [b.name for b in config.bots], config.games)
    }
    process = arena("tournament", path, "--workers", "2")
    workers = workers_of(process, 1)  # the arena process plays the other share itself
    stop_at_matches(process, path, 4)
    assert bot_processes(tmp_path)
    own_bots = [pid for pid in children(process.pid) if pid not in workers]
    assert own_bots and all(RANDOM_BOT.name.encode() in cmdline(pid) for pid in own_bots)
    deadline = time.monotonic() + PATIENCE_S  # the worker's bots come once it has imported
    while not [p for p in children(workers[0]) if RANDOM_BOT.name.encode() in cmdline(p)]:
        assert time.monotonic() < deadline and process.poll() is None, "the worker has no bots"
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=PATIENCE_S)
    release(path)
    wait_until_dead(workers)  # it sees the end of its input and closes its bots
    wait_until_no_bots(tmp_path)
    with ResultStore.open_read(config.results) as store:
        before = {m.match_id: m for m in store.matches()}
    assert 4 <= len(before) < len(expected)

    rerun = arena("tournament", path, "--workers", "2")
    out, err = rerun.communicate(timeout=PATIENCE_S)
    assert rerun.returncode == 0, err
    assert f"{len(before)} already stored" in out
    with ResultStore.open_read(config.results) as store:
        after = store.matches(include_aborted=True)
    ids = [m.match_id for m in after]
    assert len(ids) == len(set(ids)) == len(expected) and set(ids) == expected
    assert all(m.completed for m in after)
    for match in after:
        if match.match_id in before:
            assert match == before[match.match_id]
    wait_until_no_bots(tmp_path)


def test_ctrl_c_with_workers_stops_cleanly(tmp_path):
    path = tournament_file(tmp_path, deals=30, concurrency=2)
    config = load_config(path)
    process = arena("tournament", path, "--workers", "2")
    workers = workers_of(process, 1)
    stop_at_matches(process, path, 2)  # a Ctrl-C while every bot is thinking
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=PATIENCE_S)
    release(path)
    assert process.returncode == 130, err
    assert "stopped:" in out and "Traceback" not in err
    assert not [pid for pid in workers if alive(pid)]  # waited for before the parent exits
    assert bot_processes(tmp_path) == []
    with ResultStore.open_read(config.results) as store:
        stored = store.matches(include_aborted=True)
    assert len(stored) >= 2 and all(m.completed for m in stored)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_bot_that_cannot_start_stops_the_run_before_any_match(tmp_path, workers):
    quitter = ROOT / "tests" / "bots" / "exit_at_once_bot.py"
    path = tournament_file(tmp_path, deals=2, concurrency=2)
    path.write_text(
        path.read_text()
        .replace(
            f'argv = ["{sys.executable}", "{RANDOM_BOT}", "2"',
            f'argv = ["{sys.executable}", "{quitter}", "2"',
        )
        .replace(  # a script path that is not there: the interpreter says so on stderr
            f'argv = ["{sys.executable}", "{RANDOM_BOT}", "1"',
            f'argv = ["{sys.executable}", "no/such/bot.py", "1"',
        )
    )
    process = arena("tournament", path, "--workers", workers)
    out, err = process.communicate(timeout=PATIENCE_S)
    assert process.returncode == 2, (out, err)
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[0] == (
        "Error: preflight: 2 of 3 bots cannot start, so the run stopped before its next match "
        "(fix them and run the same command again)"
    )
    assert len(lines) == 4, err  # one line per broken bot, then what is stored
    assert lines[3].startswith("0 completed matches are stored in ") and "kept" in lines[3]
    assert lines[1].startswith(f"bot 'r1': `{sys.executable} no/such/bot.py 1 {tmp_path}` in a")
    assert "can't open file" in lines[1] and "no/such/bot.py" in lines[1]
    assert lines[2].startswith("bot 'r2': ") and "ended before saying ready" in lines[2]
    assert "it wrote nothing to stderr" in lines[2]
    assert bot_processes(tmp_path) == []
    with ResultStore.open_read(load_config(path).results) as store:
        assert store.matches(include_aborted=True) == []


def test_a_bot_given_up_during_the_run_makes_it_exit_non_zero(tmp_path):
    once = ROOT / "tests" / "bots" / "start_once_bot.py"
    path = tournament_file(tmp_path, deals=2, concurrency=1)
    path.write_text(
        path.read_text().replace(
            f'argv = ["{sys.executable}", "{RANDOM_BOT}", "2", "{tmp_path}"',
            f'argv = ["{sys.executable}", "{once}", "{tmp_path / "marker"}"',
        )
    )
    process = arena("tournament", path, "--workers", "1")
    out, err = process.communicate(timeout=PATIENCE_S)
    assert process.returncode == 1, (out, err)
    assert "Traceback" not in err
    (summary,) = [line for line in out.splitlines() if line.startswith("given up:")]
    assert summary.startswith("given up: 1 bot stopped starting during the run and forfeited")
    assert "r2: " in summary and "already started once" in summary
    with ResultStore.open_read(load_config(path).results) as store:
        stored = store.matches()
    assert len(stored) == 6 and all(m.completed for m in stored)  # the others' matches count


def test_a_missing_bot_program_is_a_mistake_in_the_file(tmp_path):
    path = tournament_file(tmp_path, deals=2, concurrency=2)
    path.write_text(
        path.read_text().replace(
            f'argv = ["{sys.executable}", "{RANDOM_BOT}", "2"',
            f'argv = ["{tmp_path / "missing"}", "2"',
        )
    )
    process = arena("tournament", path)
    out, err = process.communicate(timeout=PATIENCE_S)
    assert process.returncode == 2, (out, err)
    assert "argv: found" in err and "missing" in err and "expected an executable program" in err
    assert "Traceback" not in err


def test_matches_cut_by_the_time_limit_in_workers_are_stored_as_aborted(tmp_path):
    slow = ROOT / "tests" / "bots" / "broken" / "slow.py"  # 2 s per decision
    bots = "".join(
        f'[[bots]]\nname = "{name}"\nargv = ["{sys.executable}", "{script}", "{i}", "{tmp_path}"]\n'
        for i, (name, script) in enumerate((("r0", RANDOM_BOT), ("r1", RANDOM_BOT), ("slow", slow)))
    )
    path = tmp_path / "slow.toml"
    path.write_text(
        f'name = "slow"\nconcurrency = 2\nworkers = 2\nmatch_time_limit = 1\n'
        f'output = "{tmp_path / "out"}"\ngames = [{{ game = "aon", players = 3 }}]\n'
        f"deals = 1\n\n[time]\ndecision_ms = 5000\n\n{bots}"
    )
    process = arena("tournament", path)
    out, err = process.communicate(timeout=PATIENCE_S)
    assert process.returncode == 1, err  # every match aborted: nothing was played
    assert "2 processes (this one and 1 worker process)" in out
    assert "0 played" in out and "3 aborted" in out
    assert "every match of this run was aborted (3): nothing was played" in out
    with ResultStore.open_read(load_config(path).results) as store:
        stored = store.matches(include_aborted=True)
    assert len(stored) == 3 and not any(m.completed for m in stored)
    assert {m.reason for m in stored} == {"cut by the match time limit of 1 s"}
    assert not [
        pid
        for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
        if str(tmp_path).encode() in cmdline(pid) and alive(pid)
    ]  # no bot of ours


class _StartedBot:
    """What the pool keeps of a started bot (a fake: no process)."""

    def __init__(self, spec):
        self.spec, self.alive = spec, True

    async def close(self):
        self.alive = False


@pytest.mark.parametrize(("bot_start_s", "spawned_at"), [(0.2, 0.2), (30.0, SPAWN_WAIT_S)])
async def test_worker_processes_start_once_this_process_has_its_bots(
    tmp_path, monkeypatch, autojump_clock, bot_start_s, spawned_at
):
    """The arena process's own bots start first, not beside a worker's interpreter start and
    imports; a bot slow to start delays the workers by SPAWN_WAIT_S at most."""
    spawned = []

    async def start_bot(spec, **_options):
        await trio.sleep(bot_start_s)
        return _StartedBot(spec)

    async def start_worker(index, core):
        spawned.append((index, trio.current_time()))
        raise TournamentError("no worker process in this test")

    monkeypatch.setattr(workers.BotProcess, "start", start_bot)
    monkeypatch.setattr(workers, "_start_worker", start_worker)
    bots = tuple(BotSpec(f"b{i}", ("unused",)) for i in range(3))
    config = TournamentConfig(name="t", seed=0, bots=bots, games=(), concurrency=2, output=tmp_path)
    with pytest.raises(TournamentError, match="no worker process"):
        with workers.unwrapped(TournamentError):
            await workers.play_in_workers(
                config, [], [b.name for b in bots], 2, lambda _m: None, RunSummary()
            )
    assert spawned == [(1, pytest.approx(spawned_at))]
