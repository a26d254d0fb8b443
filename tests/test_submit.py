"""``arena submit``: build, check, install as a new version, or refuse and install nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.bots.installed import BotsDirError, installed_versions, read_installed, tournament_bots
from arena.bots.manifest import ManifestError, content_hash
from arena.bots.submit import CheckOutcome, SubmitError, arena_check, submit
from arena.referee.bot_spec import BotSpec

REPO = Path(__file__).resolve().parents[1]
SAMPLE_BOTS = REPO / "sample_bots"


def protocol_bot(name: str, answer: str) -> str:
    """A tiny bot: ready on hello, ``answer`` (a Python expression over ``message``) on each request."""
    return f"""\
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({{"type": "ready", "name": "{name}"}}), flush=True)
    elif message["type"] == "request":
        print({answer}, flush=True)
    elif message["type"] == "bye":
        break
"""


# A minimal bot: answers every request with its first legal action.
MINI_BOT = protocol_bot(
    "mini", 'json.dumps({"type": "action", "id": message["id"], "action": message["legal"][0]})'
)


def mini_bot(folder: Path, *, name: str = "mini", extra: str = "", source: str = MINI_BOT) -> Path:
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(source)
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nauthor = "Test"\nversion = "1.0"\n'
        f"run = {json.dumps([sys.executable, 'bot.py'])}\n{extra}"
    )
    return folder


class HandshakeChecker:
    """A minimal real check: start the bot, say hello and bye, expect a ready line. Records what it saw."""

    def __init__(self) -> None:
        self.seen: list[tuple[BotSpec, list[str]]] = []

    def __call__(self, spec: BotSpec) -> CheckOutcome:
        self.seen.append((spec, sorted(os.listdir(spec.cwd))))
        hello = {
            "type": "hello",
            "protocol": 1,
            "name": spec.name,
            "limits": {"startup_ms": 10000, "decision_ms": 1000},
        }
        try:
            done = subprocess.run(
                spec.argv,
                cwd=spec.cwd,
                env={**os.environ, **dict(spec.env)},
                input=json.dumps(hello) + '\n{"type": "bye"}\n',
                capture_output=True,
                text=True,
                timeout=60,
            )
        except OSError as error:
            return CheckOutcome(False, f"cannot start: {error}")
        first = (done.stdout.splitlines() or [""])[0]
        try:
            passed = json.loads(first).get("type") == "ready"
        except ValueError:
            passed = False
        return CheckOutcome(passed, "handshake ok" if passed else f"no ready line: {done.stdout!r}")


def nothing_installed(bots_dir: Path) -> bool:
    """No version folder and no staging leftovers."""
    entries = [p for p in bots_dir.rglob("*")] if bots_dir.exists() else []
    return all(p == bots_dir / ".staging" for p in entries)


def test_a_good_submission_is_built_checked_and_installed_under_name_and_hash(tmp_path):
    folder = mini_bot(tmp_path / "src", extra='build = ["sh", "-c", "echo built > built.txt"]\n')
    bots = tmp_path / "bots"
    checker = HandshakeChecker()
    outcome = submit(folder, bots, checker=checker)

    digest = content_hash(folder)
    installed = bots / "mini" / digest
    assert not outcome.already_installed
    assert outcome.installed.folder == installed
    assert outcome.label == f"mini@1.0+{digest}"
    assert outcome.build is not None and outcome.build.ok
    assert outcome.check == CheckOutcome(True, "handshake ok")
    assert (installed / "built.txt").read_text() == "built\n"  # the build output is installed
    assert not (folder / "built.txt").exists()  # the author's folder is untouched
    # The check ran on the built staging copy, before it was moved into place.
    [(checked_spec, listing)] = checker.seen
    assert "built.txt" in listing and checked_spec.cwd != str(installed)
    assert not installed.parent.joinpath(".staging").exists()
    assert list((bots / ".staging").iterdir()) == []
    record = read_installed(installed)
    assert record.checked and record.content_hash == digest
    assert record.spec == BotSpec(
        name="mini", argv=(sys.executable, "bot.py"), cwd=str(installed), version=f"1.0+{digest}"
    )


def test_resubmitting_identical_content_is_a_no_op(tmp_path):
    folder = mini_bot(tmp_path / "src")
    bots = tmp_path / "bots"
    first = submit(folder, bots, checker=HandshakeChecker())
    before = first.installed.folder.stat().st_mtime_ns
    checker = HandshakeChecker()
    again = submit(folder, bots, checker=checker)
    assert again.already_installed
    assert again.installed.folder == first.installed.folder
    assert checker.seen == []  # nothing built or checked again
    assert first.installed.folder.stat().st_mtime_ns == before
    assert [v.content_hash for v in installed_versions(bots)["mini"]] == [
        first.installed.content_hash
    ]


def test_changed_code_is_a_new_version_and_the_old_one_is_kept(tmp_path):
    folder = mini_bot(tmp_path / "src")
    bots = tmp_path / "bots"
    old = submit(folder, bots, checker=HandshakeChecker())
    (folder / "bot.py").write_text(MINI_BOT + "# smarter now\n")
    new = submit(folder, bots, checker=HandshakeChecker())

    assert not new.already_installed
    assert new.installed.content_hash != old.installed.content_hash
    assert (old.installed.folder / "bot.py").read_text() == MINI_BOT  # never overwritten
    assert (new.installed.folder / "bot.py").read_text().endswith("# smarter now\n")
    versions = installed_versions(bots)["mini"]
    assert [v.content_hash for v in versions] == [
        old.installed.content_hash,
        new.installed.content_hash,
    ]
    [latest] = tournament_bots(bots)
    assert latest.version == f"1.0+{new.installed.content_hash}"
    assert latest.name == f"mini@1.0+{new.installed.content_hash}"
    assert latest.cwd == str(new.installed.folder)


def test_a_broken_manifest_lists_every_problem_and_installs_nothing(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "bot.toml").write_text(
        'name = "bad name!"\nversion = ""\nrun = []\n[limits]\nmemory_mb = "lots"\n'
    )
    bots = tmp_path / "bots"
    with pytest.raises(ManifestError) as caught:
        submit(folder, bots, checker=HandshakeChecker())
    fields = [line.split(": ")[1] for line in caught.value.problems]
    assert fields == ["name", "author", "version", "run", "limits.memory_mb"]
    assert not bots.exists()


def test_a_failing_build_shows_its_output_and_installs_nothing(tmp_path):
    build = [
        sys.executable,
        "-c",
        "import sys; print('compiling bot.c'); print('bot.c:3: error: expected ;', file=sys.stderr); sys.exit(2)",
    ]
    folder = mini_bot(tmp_path / "src", extra=f"build = {json.dumps(build)}\n")
    bots = tmp_path / "bots"
    checker = HandshakeChecker()
    with pytest.raises(SubmitError) as caught:
        submit(folder, bots, checker=checker)
    message = str(caught.value)
    assert message.splitlines()[0].startswith("mini: build failed (")
    assert "exit status 2; nothing installed" in message.splitlines()[0]
    assert "compiling bot.c" in message and "bot.c:3: error: expected ;" in message
    assert checker.seen == []
    assert nothing_installed(bots)


@pytest.mark.parametrize(
    "lines, left_out", [(100, "... (60 lines left out) ..."), (200000, "bytes left out) ...")]
)
def test_a_long_build_output_shows_its_first_and_last_lines(tmp_path, lines, left_out):
    script = f"for i in range({lines}): print('line', i)\nraise SystemExit(1)"
    folder = mini_bot(
        tmp_path / "src", extra=f"build = {json.dumps([sys.executable, '-c', script])}\n"
    )
    with pytest.raises(SubmitError) as caught:
        submit(folder, tmp_path / "bots", checker=None)
    shown = str(caught.value).splitlines()
    assert shown[1] == "build output:"
    assert shown[2:17] == [f"line {i}" for i in range(15)]  # where the first error would be
    assert shown[17].startswith("... (") and shown[17].endswith(left_out)
    assert shown[18:] == [f"line {i}" for i in range(lines - 25, lines)]


def test_a_build_that_runs_too_long_is_killed_with_everything_it_started(tmp_path):
    # The build starts a grandchild that would outlive it, records its pid, then hangs.
    script = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen(['sleep', '300'])\n"
        "open('child.pid', 'w').write(str(child.pid))\n"
        "print('waiting forever', flush=True)\n"
        "time.sleep(300)\n"
    )
    build = json.dumps([sys.executable, "build.py"])
    folder = mini_bot(tmp_path / "src", extra=f"build = {build}\nbuild_timeout_s = 1\n")
    (folder / "build.py").write_text(script)
    bots = tmp_path / "bots"
    pid_file_seen: list[int] = []

    original_rmtree = shutil.rmtree

    def keep_pid_then_remove(path, *args, **kwargs):
        pid_file = Path(path) / "child.pid"
        if pid_file.exists():
            pid_file_seen.append(int(pid_file.read_text()))
        return original_rmtree(path, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("arena.bots.submit.shutil.rmtree", keep_pid_then_remove)
        with pytest.raises(SubmitError) as caught:
            submit(folder, bots, checker=HandshakeChecker())
    first_line = str(caught.value).splitlines()[0]
    assert "timed out after 1s (build_timeout_s in bot.toml); nothing installed" in first_line
    assert "waiting forever" in str(caught.value)
    assert nothing_installed(bots)
    [pid] = pid_file_seen
    assert not process_alive(pid)


def process_alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie awaiting its reaper counts as gone)."""
    deadline = time.monotonic() + 10  # the kill is sent before submit returns; allow reaping
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        if state == "Z":
            return False
        time.sleep(0.05)
    return True


def test_a_bot_that_fails_the_check_is_refused_with_the_report(tmp_path):
    folder = mini_bot(tmp_path / "src", source="import sys\nprint('hello there')\n")
    bots = tmp_path / "bots"
    with pytest.raises(SubmitError) as caught:
        submit(folder, bots, checker=HandshakeChecker())
    lines = str(caught.value).splitlines()
    assert lines[0] == "mini: failed arena check; nothing installed"
    assert "no ready line: 'hello there\\n'" in lines[1]
    assert nothing_installed(bots)


def test_a_run_program_the_build_did_not_make_is_refused(tmp_path):
    folder = mini_bot(tmp_path / "src")
    (folder / "bot.toml").write_text(
        'name = "mini"\nauthor = "T"\nversion = "1"\nrun = "./mini"\nbuild = "true"\n'
    )
    bots = tmp_path / "bots"
    with pytest.raises(SubmitError, match=r"bot.toml: run: mini does not exist after the build"):
        submit(folder, bots, checker=HandshakeChecker())
    (folder / "bot.toml").write_text(
        'name = "mini"\nauthor = "T"\nversion = "1"\nrun = "no-such-program-xyz"\n'
    )
    with pytest.raises(SubmitError, match=r"run: program 'no-such-program-xyz' is not installed"):
        submit(folder, bots, checker=HandshakeChecker())
    assert nothing_installed(bots)


def test_the_same_version_installed_meanwhile_by_another_submit_is_kept(tmp_path):
    folder = mini_bot(tmp_path / "src")
    bots = tmp_path / "bots"
    others: list = []

    def check_while_another_submit_installs(spec: BotSpec) -> CheckOutcome:
        others.append(submit(folder, bots, checker=None))  # the same content, installed first
        return CheckOutcome(True, "ok")

    outcome = submit(folder, bots, checker=check_while_another_submit_installs)
    [other] = others
    assert outcome.already_installed and not other.already_installed
    assert outcome.installed == other.installed
    assert not other.installed.checked  # the first install stands untouched
    assert list((bots / ".staging").iterdir()) == []


def test_an_unwritable_place_is_a_clear_refusal(tmp_path):
    folder = mini_bot(tmp_path / "src")
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "mini").write_text("a file where the bot's folder should go")
    with pytest.raises(
        SubmitError, match=r"bots/mini/[0-9a-f]{12}: cannot install: .*; nothing installed"
    ):
        submit(folder, bots, checker=None)
    (tmp_path / "plain-file").write_text("")
    with pytest.raises(SubmitError, match=r"plain-file: cannot create a staging folder in it"):
        submit(folder, tmp_path / "plain-file", checker=None)


def test_a_bots_directory_inside_the_bot_folder_is_refused(tmp_path):
    folder = mini_bot(tmp_path / "src")
    with pytest.raises(SubmitError, match=r"bots: the bots directory is inside the bot folder"):
        submit(folder, folder / "bots", checker=None)
    assert not (folder / "bots").exists()


def test_skipping_the_check_is_recorded(tmp_path):
    outcome = submit(mini_bot(tmp_path / "src"), tmp_path / "bots", checker=None)
    assert outcome.check is None and not outcome.installed.checked


# --- the real arena check, and the sample bots, one per starter language -------------------------


def source_listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize(
    "language, needs", [("python", ("python3",)), ("javascript", ("node",)), ("c", ("make", "cc"))]
)
def test_each_sample_bot_submits_through_the_real_check(tmp_path, language, needs):
    for program in needs:
        if shutil.which(program) is None:
            pytest.skip(f"{program} is not installed: cannot submit the {language} sample bot")
    folder = SAMPLE_BOTS / language
    before = source_listing(folder)
    outcome = submit(folder, tmp_path / "bots", checker=arena_check)
    assert outcome.installed.manifest.name == f"random-{language}"
    assert outcome.installed.checked
    assert outcome.check is not None and outcome.check.passed
    assert outcome.check.report.startswith("arena check: ") and " 0 failed" in outcome.check.report
    assert source_listing(folder) == before  # built in the copy, not here
    if language == "c":
        assert outcome.installed.spec.argv == (str(outcome.installed.folder / "random_bot"),)
        assert os.access(outcome.installed.folder / "random_bot", os.X_OK)


def test_the_check_can_run_the_bot_in_the_sandbox(tmp_path):
    import trio

    from arena.referee.process import check_bwrap

    problem = trio.run(check_bwrap)
    if problem:
        pytest.skip(problem)
    outcome = submit(
        SAMPLE_BOTS / "python",
        tmp_path / "bots",
        checker=lambda spec: arena_check(spec, sandbox="bwrap"),
    )
    assert outcome.check is not None and outcome.check.passed
    assert outcome.installed.spec.sandbox is None  # the organiser decides per tournament


GARBLING_BOT = protocol_bot("garbler", '"I think I\'ll play the queen"')


def test_the_real_check_refuses_a_bot_that_answers_garbage(tmp_path):
    folder = mini_bot(tmp_path / "src", name="garbler", source=GARBLING_BOT)
    bots = tmp_path / "bots"
    with pytest.raises(SubmitError) as caught:
        submit(folder, bots, checker=arena_check)
    lines = str(caught.value).splitlines()
    assert lines[0] == "garbler: failed arena check; nothing installed"
    assert lines[1].startswith("arena check: ") and " 0 failed" not in lines[1]
    fail = next(line for line in lines if line.startswith("  FAIL "))
    assert "I think I'll play the queen" in fail and "not a valid message" in fail
    assert any(line.startswith("  hint: Write exactly one JSON object per line") for line in lines)
    logs = Path(lines[-1].split("the bot's standard error: ", 1)[1])
    assert logs.is_dir()  # kept for the author to read
    shutil.rmtree(logs)
    assert nothing_installed(bots)


def test_the_command_runs_the_check_by_default(tmp_path):
    done = arena(
        "submit", str(SAMPLE_BOTS / "python"), "--to", str(tmp_path / "bots"), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "checking the built bot with arena check" in done.stderr
    assert done.stdout.startswith("arena check: ") and " 0 failed" in done.stdout
    assert "installed random-python@1.0.0+" in done.stdout and "unchecked" not in done.stdout


# --- the bots directory as a tournament source --------------------------------------------------


def test_tournament_bots_lists_the_newest_version_of_each_name_and_ignores_staging(tmp_path):
    bots = tmp_path / "bots"
    for name in ("zeta", "alpha"):
        submit(mini_bot(tmp_path / name, name=name), bots, checker=None)
    (bots / ".staging" / "leftover").mkdir(parents=True)
    (bots / "README.txt").write_text("organiser's notes")
    specs = tournament_bots(bots)
    assert [spec.name.split("@")[0] for spec in specs] == ["alpha", "zeta"]
    assert all(
        spec.name.endswith("@" + spec.version) and spec.version.startswith("1.0+") for spec in specs
    )


def test_a_damaged_bots_directory_is_named_not_skipped(tmp_path):
    bots = tmp_path / "bots"
    outcome = submit(mini_bot(tmp_path / "src"), bots, checker=None)
    record = outcome.installed.folder / ".arena" / "submission.json"
    record.write_text("{not json")
    with pytest.raises(BotsDirError, match=r"submission.json: unreadable install record"):
        tournament_bots(bots)
    record.unlink()
    with pytest.raises(BotsDirError, match=r"submission.json: missing"):
        tournament_bots(bots)
    with pytest.raises(BotsDirError, match=r"not a folder"):
        tournament_bots(tmp_path / "nowhere")


# --- the command line ---------------------------------------------------------------------------


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=300,
    )


def test_the_command_installs_then_says_nothing_to_do(tmp_path):
    folder = mini_bot(tmp_path / "src")
    first = arena(
        "submit", str(folder), "--to", str(tmp_path / "bots"), "--skip-check", cwd=tmp_path
    )
    assert first.returncode == 0, first.stderr
    digest = content_hash(folder)
    assert first.stdout.strip() == (
        f"installed mini@1.0+{digest} at {tmp_path / 'bots' / 'mini' / digest} "
        f"(unchecked: --skip-check)"
    )
    again = arena(
        "submit", str(folder), "--to", str(tmp_path / "bots"), "--skip-check", cwd=tmp_path
    )
    assert again.returncode == 0
    assert "is already installed" in again.stdout and "nothing to do" in again.stdout


def test_the_command_refuses_a_broken_manifest_with_one_line_per_problem(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "bot.toml").write_text('name = 5\nrun = "./bot"\n')
    done = arena("submit", str(folder), "--to", str(tmp_path / "bots"), cwd=tmp_path)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0] == f"Error: {folder / 'bot.toml'}: 3 problems; nothing installed"
    assert [line.split(": ")[1] for line in lines[1:]] == ["name", "author", "version"]
    assert not (tmp_path / "bots").exists()


def test_the_command_rejects_bad_arguments_as_usage_errors(tmp_path):
    done = arena("submit", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert done.returncode == 2
    assert "does not exist" in done.stderr and "Traceback" not in done.stderr
    folder = mini_bot(tmp_path / "src")
    done = arena("submit", str(folder), "--skip-check", "--sandbox", "bwrap", cwd=tmp_path)
    assert done.returncode == 2
    assert "--sandbox applies to the check: it cannot go with --skip-check" in done.stderr


# --- a tournament that takes a bots directory -----------------------------------------------------


def test_a_tournament_file_takes_a_bots_dir_and_never_mixes_versions(tmp_path, monkeypatch):
    from arena.tournament.config import ConfigError, load_config
    from arena.tournament.store import ResultStore, StoreError

    monkeypatch.chdir(tmp_path)
    bots = tmp_path / "bots"
    alpha = submit(mini_bot(tmp_path / "alpha", name="alpha"), bots, checker=None)
    beta = submit(mini_bot(tmp_path / "beta", name="beta"), bots, checker=None)
    file = tmp_path / "t.toml"
    file.write_text(
        'name = "t"\nbots_dir = "bots"\ngames = ["alles-oder-nichts"]\n'
        f'[[bots]]\nname = "single"\nargv = {json.dumps([sys.executable, "bot.py"])}\n'
        f'cwd = "alpha"\n'
    )
    config = load_config(file)
    alpha_label = f"alpha@{alpha.installed.spec.version}"
    assert [bot.name for bot in config.bots] == [alpha_label, beta.label, "single"]
    assert config.bots[0].version == alpha.installed.spec.version
    store = ResultStore.open_for_run(
        config.results,
        name=config.name,
        fingerprint=config.fingerprint(),
        definition=config.definition(),
        restart=False,
    )
    store.close()

    (tmp_path / "alpha" / "bot.py").write_text(MINI_BOT + "# v2\n")
    newer = submit(tmp_path / "alpha", bots, checker=None)
    changed = load_config(file)
    assert changed.bots[0].name == f"alpha@{newer.installed.spec.version}" != alpha_label
    with (
        pytest.raises(  # "single" runs alpha's bot.py, which changed: its results are not continued
            StoreError,  # (its folder, alpha, is the bot: SPEC 10.4)
            match=r"bot 'single' changed since its matches were stored \(\S*alpha/ differs\)",
        )
    ):
        ResultStore.open_for_run(
            changed.results,
            name=changed.name,
            fingerprint=changed.fingerprint(),
            definition=changed.definition(),
            restart=False,
        )

    file.write_text('name = "t"\nbots_dir = { path = "bots", sandbox = "bwrap" }\n')
    assert [bot.sandbox for bot in load_config(file).bots] == ["bwrap", "bwrap"]
    file.write_text('name = "t"\nbots_dir = { path = "bots", sandbox = "docker" }\n')
    with pytest.raises(
        ConfigError, match=r'bots_dir.sandbox: found "docker" \(a string\); expected "bwrap"'
    ):
        load_config(file)
    file.write_text('name = "t"\nbots_dir = "nowhere"\n')
    with pytest.raises(ConfigError, match=r"t.toml: bots_dir: \S*/nowhere: not a folder"):
        load_config(file)


def test_the_bots_command_lists_the_latest_version_or_all(tmp_path):
    folder = mini_bot(tmp_path / "src")
    bots = tmp_path / "bots"
    old = submit(folder, bots, checker=None)
    (folder / "bot.py").write_text(MINI_BOT + "# v2\n")
    new = submit(folder, bots, checker=HandshakeChecker())
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "250"}
    command = [sys.executable, "-m", "arena", "bots", "--dir", str(bots)]
    latest = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert latest.returncode == 0, latest.stderr
    rows = [line for line in latest.stdout.splitlines() if "mini@" in line]
    assert len(rows) == 1 and new.label in rows[0] and " yes " in rows[0]
    every = subprocess.run(command + ["--all"], capture_output=True, text=True, env=env, timeout=60)
    rows = [line for line in every.stdout.splitlines() if "mini@" in line]
    assert [old.label in rows[0], new.label in rows[1]] == [True, True]
    assert " no " in rows[0]
    missing = subprocess.run(
        command[:-1] + [str(tmp_path / "nowhere")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert missing.returncode == 2 and "nowhere: not a folder" in missing.stderr


def test_a_tournament_over_a_bots_dir_names_every_bot_with_its_version(tmp_path):
    bots = tmp_path / "bots"
    labels = {
        submit(mini_bot(tmp_path / name, name=name), bots, checker=None).label
        for name in ("alpha", "beta", "gamma")
    }
    (tmp_path / "t.toml").write_text(
        'name = "t"\nbots_dir = "bots"\ndeals = 1\nconcurrency = 1\n'
        'games = ["alles-oder-nichts"]\noutput = "out"\n'
    )
    run = arena("tournament", "t.toml", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    shown = arena("standings", "--json", "out/results.sqlite", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    tables = json.loads(shown.stdout)
    named = {row["bot"] for table in tables.values() for row in table["rows"]}
    assert named == labels
