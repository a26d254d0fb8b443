"""Tournaments on a Dask cluster (``--cluster``), for real: a LocalCluster and ``dask scheduler``
/ ``dask worker`` processes on 127.0.0.1. The same stored results as a local run; a worker
killed mid-run loses and duplicates nothing; a bot folder reaches a worker that cannot see it.
Plus the parts without Dask: the ``cluster`` field, packing, and the line without Dask.
Generous limits; nothing is timed."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import ssl
import stat
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest
import trio

from arena.referee.bot_spec import BotSpec
from arena.referee.record import replay_record
from arena.referee.spawn import own_uid_range
from arena.tournament.config import ConfigError, load_config
from arena.tournament.executors.packing import (
    COMPLETE_MARK,
    PackError,
    Shipment,
    pack_bots,
    pack_folder,
    relocate,
    unpack,
)
from arena.tournament.schedule import build_schedule
from arena.tournament.store import ResultStore
from arena.tournament.summary import RunSummary
from tests.tournament.test_tournament_cli import PATIENCE_S, arena, wait_for_matches
from tests.tournament.test_workers import outcome, same_key, seeded_tournament

ROOT = Path(__file__).resolve().parents[2]
needs_dask = pytest.mark.skipif(
    __import__("importlib").util.find_spec("distributed") is None,
    reason="Dask (the cluster extra) is not installed",
)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# -- without Dask ----------------------------------------------------------------------------------


def test_the_cluster_field_takes_an_address_or_local_n_and_is_not_in_the_fingerprint(tmp_path):
    base = seeded_tournament(tmp_path, "c").read_text()
    plain = load_config(write(tmp_path / "a.toml", base))
    config = load_config(write(tmp_path / "b.toml", 'cluster = "tcp://10.0.0.5:8786"\n' + base))
    assert config.cluster == "tcp://10.0.0.5:8786" and config.matches_per_worker is None
    table = 'cluster = { address = "local:3", matches_per_worker = 2 }\n'
    config = load_config(write(tmp_path / "c.toml", table + base))
    assert (config.cluster, config.matches_per_worker) == ("local:3", 2)
    assert config.fingerprint() == plain.fingerprint()
    for bad, field in (
        ('cluster = "http//nowhere"', "cluster: found"),
        ('cluster = "local:0"', "cluster: found"),
        ("cluster = 8786", "cluster: found 8786 (an integer)"),
        ('cluster = { address = "local:2", slots = 2 }', "cluster.slots"),
        ('cluster = { address = "local:2", matches_per_worker = 0 }', "matches_per_worker"),
    ):
        with pytest.raises(ConfigError) as error:
            load_config(write(tmp_path / "bad.toml", bad + "\n" + base))
        assert field in str(error.value) and "bad.toml" in str(error.value), str(error.value)


def test_without_dask_cluster_says_how_to_install_it_in_one_line(tmp_path):
    path = seeded_tournament(tmp_path, "nodask")
    hide = "import sys; sys.modules['distributed'] = None; from arena.cli import main; main()"
    process = subprocess.run(
        [sys.executable, "-c", hide, "tournament", str(path), "--cluster", "local:2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
    )
    assert process.returncode == 2
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install -e '.[cluster]'" in lines[0], process.stderr


def test_a_bad_cluster_option_is_one_line(tmp_path):
    process = arena("tournament", seeded_tournament(tmp_path, "bad"), "--cluster", "nowhere")
    out, err = process.communicate(timeout=PATIENCE_S)
    assert process.returncode == 2 and "--cluster: found" in err and "local:N" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("options", "code", "expected"),
    [
        (("--cluster", "tls://127.0.0.1:9", "--cluster-tls", "a,b"), 2, "--cluster-tls: found 2"),
        (("--cluster", "tls://127.0.0.1:9", "--cluster-tls", "a,b,c"), 2, "a: no such readable"),
        (("--cluster", "local:1", "--cluster-tls", "{me},{me},{me}"), 2, "with a tls://HOST:PORT"),
        (("--cluster", "tls://127.0.0.1:9"), 1, "needs the cluster's TLS files"),
    ],
)
def test_a_tls_cluster_without_its_files_is_one_line(tmp_path, options, code, expected):
    if code == 1 and __import__("importlib").util.find_spec("distributed") is None:
        pytest.skip("Dask (the cluster extra) is not installed")
    path = seeded_tournament(tmp_path, "tls")
    options = tuple(o.replace("{me}", str(path)) for o in options)
    process = arena("tournament", path, *options)
    _out, err = process.communicate(timeout=PATIENCE_S)
    lines = err.strip().splitlines()
    assert process.returncode == code and len(lines) == 1, err
    assert expected in lines[0] and "Traceback" not in err, err


def bot_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "src"
    (folder / "lib").mkdir(parents=True)
    (folder / "lib" / "data.txt").write_text("payload\n")
    run = folder / "run.sh"
    run.write_text("#!/bin/sh\nexec python3 bot.py\n")
    run.chmod(0o755)
    os.symlink("lib/data.txt", folder / "link.txt")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "x.pyc").write_bytes(b"junk")
    return folder


def test_a_packed_folder_unpacks_the_same_into_the_cache_checked_against_its_hash(tmp_path):
    folder = bot_folder(tmp_path)
    (folder / "out").mkdir()
    (folder / "out" / "results.sqlite").write_text("not shipped")
    package = pack_folder(folder, leave_out=[folder / "out"])
    assert package == pack_folder(folder, leave_out=[folder / "out"])  # same bytes every time
    assert package.sha256 == hashlib.sha256(package.data).hexdigest()

    cache = tmp_path / "cache"
    with pytest.raises(PackError, match="hash to"):
        unpack(cache, package.sha256, package.data[:-1] + b"x")
    assert not cache.exists() or not any(cache.iterdir())  # nothing written
    entry = unpack(cache, package.sha256, package.data)
    assert entry == cache / package.sha256 and (entry / COMPLETE_MARK).is_file()
    assert (entry / "lib" / "data.txt").read_text() == "payload\n"
    assert os.access(entry / "run.sh", os.X_OK)
    assert os.readlink(entry / "link.txt") == "lib/data.txt"
    assert not (entry / "__pycache__").exists() and not (entry / "out").exists()
    assert unpack(cache, package.sha256, b"") == entry  # there already: the bytes are not needed

    spec = BotSpec(
        name="b",
        argv=(str(folder / "run.sh"), "--data", str(folder / "lib"), "x"),
        cwd=str(folder),
        env=(("PYTHONPATH", f"/opt:{folder}/lib"),),
    )
    shipments, packages = pack_bots([spec, BotSpec(name="c", argv=("python3",))])
    assert list(packages) == [shipments[0].package] and shipments[1] == Shipment(shipments[1].spec)
    moved = relocate(shipments[0], entry)
    assert moved.cwd == str(entry)
    assert moved.argv == (str(entry / "run.sh"), "--data", str(entry / "lib"), "x")
    assert moved.env == (("PYTHONPATH", f"/opt:{entry}/lib"),)
    assert relocate(shipments[1], None) == shipments[1].spec


def test_a_symlink_out_of_a_bot_folder_is_refused_naming_the_bot(tmp_path):
    folder = bot_folder(tmp_path)
    os.symlink("/etc/passwd", folder / "escape")
    with pytest.raises(PackError, match="bot b: .*escape.*points outside"):
        pack_bots([BotSpec(name="b", argv=("python3",), cwd=str(folder))])


# -- on a real Dask cluster ------------------------------------------------------------------------


def test_batches_shrink_to_single_matches_at_the_end_so_the_workers_finish_together():
    from arena.tournament.executors.dask_cluster import TAIL_SPLIT, DaskCluster, _Dispatch

    matches = list(range(5000))  # what a batch holds does not matter to its size
    dispatch = _Dispatch(DaskCluster("local:2"), None, None, None, iter(matches), None, None)
    threads = 2
    assert dispatch._more(threads) and len(dispatch._take(threads)) == 1  # no length known yet
    dispatch.mean_match_s = 0.02  # a 3 s task: 150 matches
    sizes, left = [], len(matches) - 1
    while dispatch._more(threads):
        batch = dispatch._take(threads)
        assert len(batch) <= max(1, -(-left // (TAIL_SPLIT * threads)))  # its share of the rest
        sizes.append(len(batch))
        left -= len(batch)
    assert left == 0 and sum(sizes) == len(matches) - 1
    assert sizes[0] == 150 and sizes == sorted(sizes, reverse=True) and sizes[-4:] == [1] * 4


@needs_dask
def test_the_worker_plugin_pauses_dasks_profiler_and_slows_its_tick_until_it_goes():
    from arena.tournament.executors.dask_worker import TICK_MS, _lighten, _restore

    class Callback:
        def __init__(self, ms: float) -> None:
            self.callback_time, self.running = ms, True

        def is_running(self) -> bool:
            return self.running

        def stop(self) -> None:
            self.running = False

        def start(self) -> None:
            self.running = True

    class Worker:
        periodic_callbacks = {
            "profile": Callback(10),
            "profile-cycle": Callback(1000),
            "tick": Callback(20),
            "heartbeat": Callback(1000),
        }

    callbacks = Worker.periodic_callbacks
    undo = _lighten(Worker())
    assert not callbacks["profile"].running and not callbacks["profile-cycle"].running
    assert callbacks["tick"].callback_time == TICK_MS and callbacks["heartbeat"].running
    _restore(undo)
    assert callbacks["profile"].running and callbacks["profile-cycle"].running
    assert callbacks["tick"].callback_time == 20


def stored_outcomes(path):
    with ResultStore.open_read(load_config(path).results) as store:
        return {m.match_id: outcome(m) for m in store.matches(include_aborted=True)}


@needs_dask
def test_a_tournament_on_a_local_cluster_stores_what_a_local_run_stores(tmp_path):
    results = {}
    for name, options in (
        ("here", ("--workers", "1")),
        ("dask", ("--cluster", "local:2", "--restart")),
    ):
        path = seeded_tournament(tmp_path, name)
        if name == "dask":
            same_key(tmp_path / "here.toml", path)
        process = arena("tournament", path, *options)
        out, err = process.communicate(timeout=PATIENCE_S)
        assert process.returncode == 0, err
        results[name] = stored_outcomes(path)
    assert "on the Dask cluster local:2" in out and out.count("  worker tls://127.0.0.1:") == 2
    assert "Dask's own time" in out and "Traceback" not in err
    assert out.count("referee latency median") == 2  # per worker, from the stored figures
    assert len(results["here"]) == 24 and results["here"] == results["dask"]
    # where each worker keeps its bots' stderr (here: this machine), with the bots' logs in it
    logs = {
        line.split("its bots' stderr there in ")[1].rstrip("/")
        for line in out.splitlines()
        if "its bots' stderr there in " in line
    }
    assert len(logs) == 1 and any(Path(logs.pop()).glob("*.stderr.log"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@needs_dask
def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(tmp_path):
    from distributed import Client, LocalCluster

    from arena.tournament.executors.dask_cluster import DaskCluster

    path = seeded_tournament(tmp_path, "kill")
    path.write_text(path.read_text().replace("deals = 1", "deals = 3"))
    config = load_config(path)
    todo = build_schedule(config.seed, [b.name for b in config.bots], config.games)
    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=50,
    )
    client = Client(cluster)
    try:
        pids = client.run(os.getpid)
        kept: list[str] = []
        victims: list[str] = []

        def keep(stored):
            assert stored.completed, stored.reason
            kept.append(stored.match_id)
            if len(kept) == 3:  # a worker with a batch of ours on it, killed mid-batch
                busy = {w: keys for w, keys in client.processing().items() if keys}
                victims.append(min(busy, key=lambda w: pids[w]))
                os.kill(pids[victims[0]], signal.SIGKILL)

        summary = RunSummary()
        executor = DaskCluster(cluster.scheduler_address, target_task_s=1.0)
        trio.run(executor.play, config, todo, [b.name for b in config.bots], keep, summary)
    finally:
        client.close()
        cluster.close()
    assert Counter(kept) == Counter(m.match_id for m in todo)  # every match, each once
    assert len(summary.cluster_workers) >= 2  # the victim played some, the others the rest
    assert summary.cluster_lost == victims  # said, not silently absorbed (issue 38)
    # its batches in flight were played again elsewhere, and counted (how many depends on
    # their size then)
    assert 1 <= summary.cluster_rescheduled < len(todo)
    # and the end of the run says so, in the SPEC's words (10.8)
    from arena.cli.tournament import _cluster_lines

    lines = _cluster_lines(summary)
    assert f"  worker {victims[0]} lost during the run" in lines
    again = summary.cluster_rescheduled
    assert (
        f"  cluster: {again} match{'es' if again > 1 else ''} of lost workers rescheduled, "
        "played again on other workers (none stored twice)"
    ) in lines


@needs_dask
def test_losing_every_worker_is_said_as_such_not_as_a_lost_scheduler(tmp_path, monkeypatch):
    """A scheduler left without workers (each killed, none coming back) ends the run with a
    line that says what happened: the scheduler is up, its workers were lost."""
    from arena.tournament.errors import TournamentError
    from arena.tournament.executors import dask_cluster

    monkeypatch.setattr(dask_cluster, "WORKER_WAIT_S", 3.0)
    path = seeded_tournament(tmp_path, "lost")
    path.write_text(path.read_text().replace("deals = 1", "deals = 40"))
    config = load_config(path)
    todo = build_schedule(config.seed, [b.name for b in config.bots], config.games)
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=str(ROOT), TRICK_ARENA_CACHE=str(tmp_path / "cache"))
    quiet = {
        "stdout": subprocess.DEVNULL,
        "stderr": subprocess.DEVNULL,
        "cwd": tmp_path,
        "env": env,
    }
    scheduler = [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1"]
    worker = [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1"]
    started = [subprocess.Popen([*scheduler, "--port", str(port), "--no-dashboard"], **quiet)]
    started.append(
        subprocess.Popen(
            [*worker, "--no-dashboard", "--no-nanny", "--local-directory", str(tmp_path)],
            **quiet,
        )
    )
    kept: list[str] = []

    def keep(stored):
        kept.append(stored.match_id)
        if len(kept) == 2:
            started[1].kill()  # the only worker, without a nanny to bring it back

    summary = RunSummary()
    try:
        executor = dask_cluster.DaskCluster(address, target_task_s=1.0)
        with pytest.raises(TournamentError) as caught:
            trio.run(executor.play, config, todo, [b.name for b in config.bots], keep, summary)
        alive = started[0].poll() is None
    finally:
        stop(started)
    message = str(caught.value)
    assert alive and "\n" not in message
    assert f"every Dask worker of the scheduler at {address} was lost" in message
    assert "the scheduler is up" in message and "went away" not in message
    assert "run the same command again to resume" in message
    assert summary.cluster_lost and 2 <= len(kept) < len(todo)


def cluster_certificate(folder: Path) -> tuple[Path, Path]:
    """The certificate and key of a cluster, made as SPEC 10.8 says (one self-signed pair that
    every machine of the cluster holds)."""
    pem, key = folder / "cluster.pem", folder / "cluster.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:3072", "-nodes", "-days", "30"]
        + ["-subj", "/CN=trick-arena-cluster", "-keyout", str(key), "-out", str(pem)],
        check=True,
        capture_output=True,
    )
    return pem, key


def hidden_mount_works(folder: Path) -> bool:
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount -t tmpfs none {folder} && test ! -e {folder}/x"],
        capture_output=True,
    )
    return probe.returncode == 0


def three_bots_play(
    tmp_path: Path, name: str, address: str, source: Path, argv, tls_files: str = ""
) -> list:
    """Three bots run from ``source`` (``argv(i)`` after this Python) play one deal of AoN on
    the Dask cluster at ``address`` (with ``tls_files``, the tournament file's TLS settings for
    it), records on; the stored matches."""
    bots = "".join(
        f'[[bots]]\nname = "p{i}"\nargv = {json.dumps([sys.executable, *map(str, argv(i))])}\n'
        f'cwd = "{source}"\n'
        for i in range(3)
    )
    path = write(
        tmp_path / f"{name}.toml",
        f'name = "{name}"\nseed = 3\noutput = "{tmp_path / "out"}"\nrecords = true\n'
        f'games = [{{ game = "aon", players = 3 }}]\ndeals = 1\n'
        f'cluster = {{ address = "{address}"{", " if tls_files else ""}{tls_files} }}\n\n{bots}',
    )
    process = arena("tournament", path)
    out, err = process.communicate(timeout=PATIENCE_S)
    assert process.returncode == 0, (out, err)
    assert bool(tls_files) == ("without TLS" not in err)
    with ResultStore.open_read(load_config(path).results) as store:
        return store.matches(include_aborted=True)


def stop(started: list[subprocess.Popen]) -> None:
    """Stop a scheduler and its workers as Ctrl-C would (killed if they do not go)."""
    for process in reversed(started):
        process.send_signal(signal.SIGINT)
    for process in reversed(started):
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


@needs_dask
def test_a_bot_folder_reaches_a_worker_that_cannot_see_it(tmp_path):
    """The scheduler and one worker are real ``dask`` processes; the worker runs in its own
    mount namespace with the bot's folder hidden under an empty tmpfs and its own empty cwd, so
    the bot can only run from the package shipped into the worker's cache."""
    source = tmp_path / "botsrc"
    source.mkdir()
    shutil.copy(ROOT / "sample_bots" / "python" / "random_bot.py", source / "player.py")
    (source / "x").write_text("")
    if shutil.which("unshare") is None or not hidden_mount_works(source):
        pytest.skip("no mount namespaces here (unshare -m)")
    cache, cwd = tmp_path / "cache", tmp_path / "worker-cwd"
    cwd.mkdir()
    port = free_port()
    address = f"tls://127.0.0.1:{port}"
    pem, key = cluster_certificate(tmp_path)
    tls = ["--tls-ca-file", str(pem), "--tls-cert", str(pem), "--tls-key", str(key)]
    env = dict(os.environ, PYTHONPATH=str(ROOT), TRICK_ARENA_CACHE=str(cache))
    started = []
    try:
        started.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "distributed.cli.dask_scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--protocol",
                    "tls",
                    *tls,
                    "--no-dashboard",
                ],
                env=env,
                cwd=cwd,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        worker = (
            f"mount -t tmpfs none {source} && exec {sys.executable} -m "
            f"distributed.cli.dask_worker {address} --nthreads 1 --no-dashboard --no-nanny "
            f"--local-directory {cwd} {' '.join(tls)}"
        )
        started.append(
            subprocess.Popen(
                ["unshare", "-m", "sh", "-c", worker],
                env=env,
                cwd=cwd,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        tls_files = f'tls_ca_file = "{pem.name}", tls_cert = "{pem.name}", tls_key = "{key.name}"'
        stored = three_bots_play(
            tmp_path, "far", address, source, lambda i: ["player.py", i], tls_files=tls_files
        )
    finally:
        stop(started)
    assert len(stored) == 3 and all(m.completed and not m.faults for m in stored), stored
    entries = [e for e in cache.iterdir() if e.is_dir() and e.name != "logs"]
    assert (
        len(entries) == 1
        and (entries[0] / "player.py").read_bytes()
        == (ROOT / "sample_bots" / "python" / "random_bot.py").read_bytes()
    )
    for match in stored:  # records came back, appended to a records file as a local run's
        record = Path(match.record_path)
        assert record.parent == tmp_path / "out" / "records" and match.record_span is not None
        at, length = match.record_span
        assert replay_record(record, at=at, length=length).header["match_id"] == match.match_id


def dask_processes(address: str, port: int, cwd: Path, env: dict) -> list[subprocess.Popen]:
    """A ``dask scheduler`` and one ``dask worker`` on 127.0.0.1."""
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "cwd": cwd, "env": env}
    scheduler = [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1"]
    worker = [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1"]
    return [
        subprocess.Popen([*scheduler, "--port", str(port), "--no-dashboard"], **quiet),
        subprocess.Popen([*worker, "--no-dashboard", "--local-directory", str(cwd)], **quiet),
    ]


@needs_dask
def test_a_scheduler_that_goes_away_stops_the_run_in_one_line_and_the_command_resumes(tmp_path):
    path = seeded_tournament(tmp_path, "gone")
    path.write_text(path.read_text().replace("deals = 1", "deals = 3"))
    config = load_config(path)
    total = len(build_schedule(config.seed, [b.name for b in config.bots], config.games))
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=str(ROOT), TRICK_ARENA_CACHE=str(tmp_path / "cache"))
    started = dask_processes(address, port, tmp_path, env)
    try:
        process = arena("tournament", path, "--cluster", address)
        wait_for_matches(process, config.results, 2)
        started[0].kill()  # the scheduler
        out, err = process.communicate(timeout=PATIENCE_S)
    finally:
        for dask in started:
            dask.kill()
            dask.wait(timeout=30)
    assert process.returncode == 1, (out, err)
    warning, *lines = err.strip().splitlines()
    assert warning == (
        f"warning: the Dask scheduler {address} is reached without TLS: anyone who can connect "
        "to it runs code on every worker; use tls:// (SPEC.md 10.8)"
    )
    assert len(lines) == 1 and f"the Dask scheduler at {address} went away" in lines[0], err
    assert "run the same command again to resume" in lines[0]
    with ResultStore.open_read(config.results) as store:
        before = {m.match_id: m for m in store.matches()}
    assert 2 <= len(before) < total

    again = arena("tournament", path, "--cluster", "local:1")
    out, err = again.communicate(timeout=PATIENCE_S)
    assert again.returncode == 0, err
    assert f"{len(before)} already stored" in out
    with ResultStore.open_read(config.results) as store:
        after = {m.match_id: m for m in store.matches()}
    assert len(after) == total and all(after[k] == v for k, v in before.items())


@pytest.fixture
def passable_folder():
    """A folder every user may pass through (tmp_path's parents may not be), removed after."""
    folder = Path(tempfile.mkdtemp(prefix="arena-cache-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@needs_dask
@pytest.mark.skipif(os.geteuid() != 0, reason="only a worker run as root switches bots' users")
def test_a_root_worker_runs_a_shipped_bot_as_a_user_of_its_own(tmp_path, passable_folder):
    """A worker run as root starts bots as users of their own (SPEC 7), who must read the
    folder it unpacked (it was 0700, so no shipped bot could start); its cache lets them pass
    but not list it. The bot reports its user in its ready version, which the records keep."""
    from ordinary_user import as_user

    source = tmp_path / "botsrc"
    shutil.copytree(
        ROOT / "tests" / "bots", source, ignore=shutil.ignore_patterns("__pycache__", "broken")
    )
    # (Its parents passable by the bots' users, as root's default /var/cache/... would be.)
    cache = passable_folder / "bots"
    cwd = tmp_path / "worker-cwd"
    cwd.mkdir()
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=str(ROOT), TRICK_ARENA_CACHE=str(cache))
    env.pop("ARENA_BOT_USER", None)  # root's default: @own
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "cwd": cwd, "env": env}
    scheduler = [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1"]
    worker = [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1"]
    started = [subprocess.Popen([*scheduler, "--port", str(port), "--no-dashboard"], **quiet)]
    try:
        # (In a mount namespace where this Python is reachable for the bots' users too.)
        started.append(
            subprocess.Popen(
                [*worker, "--no-dashboard", "--no-nanny", "--local-directory", str(cwd)],
                preexec_fn=as_user(None),
                **quiet,
            )
        )
        stored = three_bots_play(
            tmp_path, "root", address, source, lambda i: ["probe_bot.py", "report"]
        )
    finally:
        stop(started)
    assert len(stored) == 3 and all(m.completed and not m.faults for m in stored), stored
    at, length = stored[0].record_span
    header = replay_record(Path(stored[0].record_path), at=at, length=length).header
    uids = {json.loads(seat["version"])["uid"] for seat in header["seats"]}
    low, high = own_uid_range()
    assert all(low <= uid <= high for uid in uids) and len(uids) == 3
    assert stat.S_IMODE(cache.stat().st_mode) == 0o711  # passable, not listable
    (entry,) = [e for e in cache.iterdir() if e.is_dir() and e.name != "logs"]
    assert stat.S_IMODE(entry.stat().st_mode) == 0o755
    assert stat.S_IMODE((entry / "probe_bot.py").stat().st_mode) & 0o044 == 0o044
    assert stat.S_IMODE((cache / "logs").stat().st_mode) == 0o700  # its logs: root's alone


@needs_dask
def test_local_n_takes_no_client_without_its_certificate_and_listens_on_loopback_only():
    """``local:N``'s scheduler and workers speak TLS only, with a certificate made for the
    cluster: a client without it (none, plain TCP, or another certificate of its own) cannot
    connect, so cannot run anything there; every socket they listen on is 127.0.0.1's."""
    import psutil
    from distributed import Client, Security

    from arena.tournament.executors.dask_cluster import _local_cluster

    distributed = __import__("distributed")
    cluster = _local_cluster(distributed, 2)
    try:
        address = cluster.scheduler_address
        port = int(address.rsplit(":", 1)[1])
        assert address.startswith("tls://127.0.0.1:")
        with Client(cluster, security=cluster.security, timeout=30) as own:  # it works, with it
            workers = own.run(os.getpid)
            assert len(workers) == 2 and all(w.startswith("tls://127.0.0.1:") for w in workers)
        own_context = cluster.security.get_connection_args("client")["ssl_context"]
        for target in [address, *workers]:  # TLS without a certificate: refused
            assert str(tls_probe(target)).startswith("refused: "), target
            assert isinstance(tls_probe(target, own_context), bytes)  # (with it: Dask speaks)
        strangers = [
            (f"tcp://127.0.0.1:{port}", None),  # plain TCP to the same port
            (address, Security.temporary()),  # a certificate of its own
            *((worker, Security.temporary()) for worker in workers),  # a worker directly
        ]
        for target, security in strangers:
            ran = []
            with pytest.raises((OSError, TimeoutError)):
                with Client(target, security=security, timeout=3) as stranger:
                    ran.append(stranger.run(os.getpid))
            assert ran == []
        listening = [
            c.laddr
            for process in [psutil.Process(), *(psutil.Process(pid) for pid in workers.values())]
            for c in process.net_connections()
            if c.status == psutil.CONN_LISTEN
        ]
        assert any(a.port == port for a in listening)
        assert {a.ip for a in listening} == {"127.0.0.1"}, listening
    finally:
        cluster.close()


def tls_probe(address: str, context: ssl.SSLContext | None = None) -> bytes | str:
    """What a TLS client (by default one without a certificate) gets from ``tls://HOST:PORT``
    after its handshake: the first bytes Dask sends a client it accepts, or "refused: " and
    why (the server's alert, or the connection closed)."""
    host, port = address.removeprefix("tls://").rsplit(":", 1)
    if context is None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((host, int(port)), timeout=10) as raw:
            with context.wrap_socket(raw) as tls:
                tls.sendall(b"\0" * 16)
                return tls.recv(16)
    except (ssl.SSLError, ConnectionResetError, BrokenPipeError) as error:
        return f"refused: {error}"  # (a timeout is an error: it was neither refused nor served)


def test_the_cluster_tls_files_are_all_three_beside_a_tls_address(tmp_path):
    base = seeded_tournament(tmp_path, "t").read_text()
    for name in ("ca.pem", "cert.pem", "key.pem"):
        (tmp_path / name).write_text("PEM")
    fields = 'tls_ca_file = "ca.pem", tls_cert = "cert.pem", tls_key = "key.pem"'
    table = f'cluster = {{ address = "tls://10.0.0.5:8786", {fields} }}\n'
    config = load_config(write(tmp_path / "ok.toml", table + base))
    assert config.cluster_tls == tuple(str(tmp_path / n) for n in ("ca.pem", "cert.pem", "key.pem"))
    assert config.fingerprint() == load_config(write(tmp_path / "p.toml", base)).fingerprint()
    for bad, expected in (
        (f'{{ address = "tcp://10.0.0.5:8786", {fields} }}', "tls://HOST:PORT"),
        ('{ address = "tls://10.0.0.5:8786", tls_ca_file = "ca.pem" }', "all of tls_ca_file"),
        (f'{{ address = "tls://h:1", {fields.replace("key.pem", "nope.pem")} }}', "nope.pem: no"),
        ('{ address = "tls://h:1", tls_ca_file = 3, tls_cert = "a", tls_key = "b" }', "path"),
    ):
        with pytest.raises(ConfigError) as error:
            load_config(write(tmp_path / "bad.toml", f"cluster = {bad}\n" + base))
        assert expected in str(error.value) and "bad.toml" in str(error.value), str(error.value)
