"""The newcomer path of docs/writing-a-bot.md, run as written, and the starter kits it offers.

Each language's commands in the guide's section 2 (copy the sample folder, build it, `arena
check` it) run in a temporary folder that holds a copy of sample_bots/, never in the checkout.
A build runs once per test session, whichever worker asks first, under a lock; a block whose
programs are not installed skips, naming them. The Rust, Java, C++ and Go kits then play a match
of every game, and every choice they make is the one the guide's rules give
(tests/starter_kit_rules.py).
"""

from __future__ import annotations

import ast
import fcntl
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from fnmatch import fnmatch
from pathlib import Path

import pytest
import starter_kit_rules

from arena.bots.manifest import load_manifest
from arena.bots.samples import BUILD_OUTPUTS
from arena.games import GAMES
from arena.referee.clock import TimeControl
from arena.referee.match import run_match
from arena.referee.process import BotProcess
from arena.referee.record import read_record

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "writing-a-bot.md"
KITS = ("rust", "java", "cpp", "go")


def section_blocks(number: int) -> dict[str, list[str]]:
    """The indented command blocks of the guide's section ``number``, by ### heading (fenced code
    is not a command)."""
    text = GUIDE.read_text()
    section = text.split(f"\n## {number}. ")[1].split("\n## ")[0]
    blocks: dict[str, list[str]] = {}
    heading, fenced, previous = "", False, ""
    for line in section.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif fenced:
            pass
        elif line.startswith("### "):
            heading = line[4:].strip()
        elif line.startswith("    ") and (previous == "" or previous.startswith("    ")):
            blocks.setdefault(heading, []).append(line.strip())
        previous = "" if not line.strip() else line
    return blocks


BLOCKS = section_blocks(2)


def block_of(language: str) -> tuple[str, list[str]]:
    """The heading and commands of ``language``'s block (its folder: ``cp -r sample_bots/<it>``)."""
    for heading, lines in BLOCKS.items():
        if lines[0].startswith(f"cp -r sample_bots/{language} "):
            return heading, lines
    raise AssertionError(f"the guide's section 2 has no block that copies sample_bots/{language}")


def commands(lines: list[str]) -> list[list[str]]:
    """The words of each command of a block (a line ending in a backslash goes on)."""
    joined = "\n".join(lines).replace("\\\n", " ")
    return [shlex.split(line) for line in joined.splitlines()]


def missing_programs(heading: str, lines: list[str]) -> list[str]:
    """The programs a block runs (its commands', the bots' of `arena check --` and `--bot`, a
    compiler for make) that are not installed."""
    programs = set()
    for words in commands(lines):
        programs.add(words[0])
        if words[:3] == ["arena", "check", "--"]:
            programs.add(words[3])
        for flag, value in zip(words, words[1:]):
            if flag == "--bot":  # a command line, or NAME=COMMAND
                programs.add(shlex.split(re.sub(r"^\w+=", "", value))[0])
    if "make" in programs:  # the C++ kit's Makefile runs c++, the C bot's cc
        programs.add("c++" if heading.startswith("C++") else "cc")
    needed = {p for p in programs if "/" not in p and p not in ("cd", "arena")}  # built, builtin
    return sorted(program for program in needed if shutil.which(program) is None)


def bash(script: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run ``script`` as bash would from ``cwd``, with this interpreter's scripts (`arena`,
    `python3`) first on PATH, as after installing."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return subprocess.run(
        ["bash", "-c", script],
        cwd=cwd,
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def wheel_skip_patterns() -> list[str]:
    """The patterns setup.py's SKIP leaves out of the wheel's copy of sample_bots/."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "SKIP":
            return [arg.value for arg in node.value.args]  # type: ignore[attr-defined]
    raise AssertionError("setup.py has no SKIP")


def test_the_wheel_and_arena_init_leave_out_the_same_build_outputs():
    assert wheel_skip_patterns() == list(BUILD_OUTPUTS)


@contextmanager
def locked(path: Path) -> Iterator[None]:
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def guide_folder(tmp_path_factory) -> Path:
    """A folder shared by this session's workers, holding a copy of sample_bots/ as a checkout
    has it (the wheel's SKIP patterns leave out anything built in the checkout)."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "guide"
    folder.mkdir(exist_ok=True)
    with locked(folder / ".copy.lock"):
        if not (folder / "sample_bots").is_dir():
            ignore = shutil.ignore_patterns(*wheel_skip_patterns())
            shutil.rmtree(folder / ".sample_bots", ignore_errors=True)  # a copy cut short
            shutil.copytree(ROOT / "sample_bots", folder / ".sample_bots", ignore=ignore)
            (folder / ".sample_bots").rename(folder / "sample_bots")
    return folder


def prepared(guide_folder: Path, heading: str, lines: list[str]) -> Path:
    """Run a block's commands but its last (`arena check`) once per session; the folder the last
    one runs in."""
    missing = missing_programs(heading, lines)
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: cannot follow the guide for {heading}")
    slug = re.sub(r"\W+", "-", heading).strip("-").lower()
    done = guide_folder / f".{slug}.done"
    with locked(guide_folder / f".{slug}.lock"):
        if not done.exists():
            script = "\n".join(["set -e", *lines[:-1], f"pwd > {shlex.quote(str(done))}.new"])
            ran = bash(script, guide_folder, timeout=600)
            assert ran.returncode == 0, f"{heading}: {script}\n{ran.stdout}\n{ran.stderr}"
            Path(f"{done}.new").rename(done)
    return Path(done.read_text().strip())


@pytest.mark.parametrize("heading", sorted(BLOCKS))
def test_each_language_of_the_guide_copies_builds_and_passes_arena_check(guide_folder, heading):
    lines = BLOCKS[heading]
    assert lines[0].startswith("cp -r sample_bots/") and lines[-1].startswith("arena check -- ")
    here = prepared(guide_folder, heading, lines)
    done = bash(lines[-1], here, timeout=300)
    assert done.returncode == 0, f"{lines[-1]}\n{done.stdout[-3000:]}\n{done.stderr}"
    assert re.search(r"\b\d+ passed, 0 failed: ready for a tournament", done.stdout)


def test_the_newcomer_path_runs_as_written(guide_folder):
    """Section 2's Python bot, then every command of sections 3 (check), 4 (a match and its
    replay) and 6 (a quick tournament, submit) in order, where the guide runs them."""
    heading, first = block_of("python")
    later = [
        line for number in (3, 4, 6) for block in section_blocks(number).values() for line in block
    ]
    assert [words[:2] for words in commands(later)] == [
        ["arena", "check"], ["make", "-C"], ["arena", "match"], ["arena", "replay"],
        ["arena", "replay"], ["arena", "replay"], ["arena", "replay"],
        ["arena", "tournament"], ["arena", "submit"],
    ]  # fmt: skip
    missing = missing_programs("", first + later)
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: cannot follow the guide's newcomer path")
    here = prepared(guide_folder, heading, first)
    done = bash("\n".join(["set -e", *later]), here, timeout=600)
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert "ready for a tournament" in done.stdout  # arena check, and submit's check
    assert "record checked: every line agrees with the rules" in done.stdout  # the replay
    assert "  #1 seat 0 (random_bot) bid [" in done.stdout  # --decisions
    assert "random_bot asked again at 1 decision of seat 0 (random_bot)" in done.stdout
    assert "decision 3 (request 3, " in done.stdout  # --ask 3
    assert re.search(r"random_bot changes none of the \d+ decisions of seat 0", done.stdout)
    assert "done: " in done.stdout  # the tournament
    assert "installed random-python@1.0.0+" in done.stdout  # submit


def test_the_guide_offers_every_sample_language_and_kit():
    copied = {lines[0].split()[2] for lines in BLOCKS.values()}
    assert copied == {
        f"sample_bots/{name}" for name in ("python", "python_helper", "javascript", "c", *KITS)
    }


@pytest.mark.parametrize("kit", KITS)
def test_each_kits_manifest_builds_and_runs_as_the_guide_does(kit):
    """bot.toml's build and run are the guide's commands in the bot's folder (`arena submit`
    builds and runs the bot with them)."""
    _, lines = block_of(kit)
    manifest = load_manifest(ROOT / "sample_bots" / kit)
    assert lines[1] == f"cd my_{kit}_bot"
    assert lines[2:-1] == [shlex.join(manifest.build or ())]
    assert lines[-1] == "arena check -- " + shlex.join(manifest.run)
    assert manifest.name == f"starter-{kit}"
    assert (ROOT / "sample_bots" / kit / "README.md").is_file()
    # docs/submitting-a-bot.md's table of sample folders shows the same run and build.
    table = (ROOT / "docs" / "submitting-a-bot.md").read_text()
    row = next(line for line in table.splitlines() if line.startswith(f"| `sample_bots/{kit}` |"))
    run, build = (tomllib.loads(f"v = {cell.strip(' `')}")["v"] for cell in row.split("|")[2:4])
    written = tomllib.loads((ROOT / "sample_bots" / kit / "bot.toml").read_text())
    assert (run, build) == (written["run"], written["build"])


@pytest.mark.parametrize("kit", KITS)
def test_a_kits_build_outputs_stay_out_of_git_and_the_wheel(guide_folder, kit):
    heading, lines = block_of(kit)
    built = prepared(guide_folder, heading, lines)
    source = ROOT / "sample_bots" / kit
    outputs = [
        path.relative_to(built)
        for path in sorted(built.rglob("*"))
        if path.is_file() and not (source / path.relative_to(built)).exists()
    ]
    assert outputs, f"building the {kit} kit wrote no file"
    skip = wheel_skip_patterns()
    for output in outputs:
        assert any(fnmatch(part, pattern) for part in output.parts for pattern in skip), (
            f"setup.py's SKIP would put {kit}/{output} into the wheel"
        )
    if shutil.which("git") and (ROOT / ".git").exists():
        paths = [f"sample_bots/{kit}/{output}" for output in outputs]
        ignored = subprocess.run(
            ["git", "check-ignore", "--no-index", *paths], cwd=ROOT, capture_output=True, text=True
        ).stdout.split()
        assert sorted(ignored) == sorted(paths), "not ignored by git: " + ", ".join(
            sorted(set(paths) - set(ignored))
        )


# Generous: these matches are about the choices, never about speed.
CONTROL = TimeControl(decision_ms=20000, startup_ms=60000)


# Vingt-down with its drop option, so that every decision kind of every game comes up.
OPTIONS = {"vingt-down": {"drop_out": True}}


@pytest.mark.parametrize("kit", KITS)
async def test_a_kit_plays_every_game_by_the_guides_rules(guide_folder, kit, tmp_path):
    heading, lines = block_of(kit)
    built = prepared(guide_folder, heading, lines)
    spec = load_manifest(built).bot_spec("test")
    most = max(game.default_players for game in GAMES.values())
    seats = [
        await BotProcess.start(spec, time_control=CONTROL, log_dir=tmp_path / "logs")
        for _ in range(most)
    ]
    decisions: dict[str, int] = {}
    try:
        for number, game in enumerate(GAMES.values()):
            record = tmp_path / f"{game.id}.jsonl"
            result = await run_match(
                game,
                seats[: game.default_players],
                seed=40 + number,
                options=OPTIONS.get(game.id),
                match_id=f"{kit}-{game.id}",
                time_control=CONTROL,
                record_path=record,
            )
            assert result.faults == (), [fault.message for fault in result.faults]
            for decision, count in _choices_by_the_rules(game, record).items():
                decisions[decision] = decisions.get(decision, 0) + count
    finally:
        for seat in seats:
            await seat.close()
    kinds = {"bid", "declare", "play", "trump", "exchange", "drop", "patience", "beg", "give"}
    assert set(decisions) == kinds, decisions
    assert decisions["play"] > 300


def _choices_by_the_rules(game, record: Path) -> dict[str, int]:
    """Replay ``record`` through the rules: every action the bots chose must be the guide's.
    Returns how many choices of each decision kind were compared."""
    entries = read_record(record)
    header = entries[0]
    state = game.new_match(header["players"], header["options"], header["seed"])
    compared: dict[str, int] = {}
    for entry in entries:
        if entry["type"] != "action":
            continue
        decision, view, legal = state.decision, state.view(entry["seat"]), state.legal_actions()
        expected = starter_kit_rules.choose(decision, view, legal)
        assert entry["action"] == expected, (
            f"{game.id}, seat {entry['seat']}, {decision} with legal {legal}: "
            f"chose {entry['action']}, the rules say {expected}; view {view}"
        )
        state.apply(entry["action"])
        if len(legal) > 1:  # a choice: one legal action is answered without the rules
            compared[decision] = compared.get(decision, 0) + 1
    return compared
