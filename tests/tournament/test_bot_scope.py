"""Issue 38, item 4: a bot is what its folder holds (SPEC 10.4). A change to a module the bot
imports is a new program; a change to another bot's folder is not; declared build products and
logs, the arena's output folders and results files never count; a results file begun by an
older arena (argv's files hashed only) keeps counting its matches on those terms."""

from __future__ import annotations

import json
import sqlite3
import sys
from dataclasses import replace
from pathlib import Path

from arena.bots.samples import write_demo
from arena.referee.bot_spec import BotSpec
from arena.tournament.config import BotScope, load_config, program_hashes
from arena.tournament.store import ResultStore
from tests.tournament.test_sealed_deals import arena

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = (ROOT / "tests" / "bots" / "random_bot.py").read_text()
BOTLIB = (ROOT / "tests" / "bots" / "botlib.py").read_text()


def bot_folder(folder: Path, module_text: str = "SEED = 1\n") -> None:
    """A bot that imports a module of its own folder (as the heuristic bot imports tactics/)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "botlib.py").write_text(BOTLIB)
    (folder / "tactics.py").write_text(module_text)
    (folder / "bot.py").write_text("import tactics  # noqa\n" + RANDOM_BOT)


def spec(name: str, script: str, cwd: Path) -> BotSpec:
    return BotSpec(name=name, argv=(sys.executable, script, "1"), cwd=str(cwd))


def test_the_scope_is_the_bots_own_folder_not_the_shared_cwd(tmp_path):
    bot_folder(tmp_path / "mine")
    bot_folder(tmp_path / "other")
    mine, other = spec("mine", "mine/bot.py", tmp_path), spec("other", "other/bot.py", tmp_path)
    before = program_hashes(mine), program_hashes(other)
    assert list(before[0])[0] == "mine/"  # the folder, named from the cwd (then the interpreter)
    (tmp_path / "mine" / "tactics.py").write_text("SEED = 2\n")  # an imported module
    after = program_hashes(mine), program_hashes(other)
    assert after[0] != before[0] and after[1] == before[1]
    (tmp_path / "README").write_text("the shared cwd changes: no bot does")
    assert program_hashes(mine) == after[0]


def test_a_bot_toml_folder_declared_files_and_what_never_counts(tmp_path):
    root = tmp_path / "bots"
    bot_folder(root / "deep" / "src")
    (root / "deep" / "bot.toml").write_text('name = "deep"\nrun = ["python3", "src/bot.py"]\n')
    (root / "deep" / "data.bin").write_bytes(b"\x01")
    deep = spec("deep", "deep/src/bot.py", root)
    before = program_hashes(deep)
    assert list(before)[0] == "deep/"  # the bot.toml's folder, above the program's
    (root / "deep" / "data.bin").write_bytes(b"\x02")
    assert program_hashes(deep) != before

    # Declared: exactly these, less the excluded build products and logs.
    scope = BotScope(files=("deep/src", "deep/data.bin"), exclude=("*.log", "build/*"))
    declared = program_hashes(deep, scope=scope)
    assert set(declared) == {"deep/src/", "deep/data.bin"}  # (not the interpreter)
    (root / "deep" / "src" / "run.log").write_text("a log the bot writes")
    (root / "deep" / "src" / "build").mkdir()
    (root / "deep" / "src" / "build" / "bot.o").write_bytes(b"obj")
    (root / "deep" / "src" / "__pycache__").mkdir()
    (root / "deep" / "src" / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"c")
    # a tournament's output folder and results file inside a bot's folder never count
    (root / "deep" / "src" / "results").mkdir()
    (root / "deep" / "src" / "results" / ".arena-lock").write_text("x")
    (root / "deep" / "src" / "results" / "r.sqlite").write_text("x")
    (root / "deep" / "src" / "r.sqlite-wal").write_text("x")
    assert program_hashes(deep, scope=scope) == declared
    (root / "deep" / "src" / "tactics.py").write_text("SEED = 3\n")
    assert program_hashes(deep, scope=scope) != declared


def test_the_demos_bots_each_have_their_own_folder(tmp_path):
    demo = write_demo(tmp_path)
    first = load_config(demo).programs
    assert first["heuristic"] == {
        "sample_bots/heuristic/": first["heuristic"]["sample_bots/heuristic/"]
    }
    tactics = tmp_path / "sample_bots" / "heuristic" / "tactics" / "common.py"
    tactics.write_text(tactics.read_text() + "\n# a change to the heuristic bot's tactics\n")
    second = load_config(demo).programs
    assert second["heuristic"] != first["heuristic"]
    assert {k: v for k, v in second.items() if k != "heuristic"} == {
        k: v for k, v in first.items() if k != "heuristic"
    }


def tournament(folder: Path) -> Path:
    bot_folder(folder / "mine")
    bot_folder(folder / "other")
    path = folder / "t.toml"
    path.write_text(
        'name = "scope"\nseed = 4\ndeals = 1\nconcurrency = 1\noutput = "out"\n'
        'games = [{ game = "aon", players = 3 }]\n\n'
        + "".join(
            f'[[bots]]\nname = "{name}"\nargv = ["{sys.executable}", "{name}/bot.py", "{i}"]\n'
            'cwd = "."\n'
            for i, name in enumerate(("mine", "other", "third"))
        )
    )
    bot_folder(folder / "third")
    return path


def test_a_changed_imported_module_refuses_the_resume_naming_the_bot(tmp_path):
    path = tournament(tmp_path)
    assert arena("tournament", path).returncode == 0
    (tmp_path / "mine" / "tactics.py").write_text("SEED = 2\n")
    refused = arena("tournament", path)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "bot 'mine' changed since its matches were stored (mine/ differs)" in refused.stderr
    assert "its 3 stored matches are not the new program's" in refused.stderr
    # A new version is another bot: the old matches stay in the file, uncounted, and said so.
    path.write_text(path.read_text().replace('name = "mine"\n', 'name = "mine"\nversion = "2"\n'))
    again = arena("tournament", path)
    assert again.returncode == 0, again.stderr
    assert "kept 0 stored matches, 3 to play; 3 stored matches of an earlier definition" in (
        again.stdout
    )


def test_a_results_file_of_an_older_arena_keeps_its_matches(tmp_path):
    """Begun when only argv's files were hashed: as that arena left it (its definition without
    `bots_hashed`, its match keys of argv-file hashes), it resumes with every match kept."""
    path = tournament(tmp_path)
    assert arena("tournament", path).returncode == 0
    results = tmp_path / "out" / "results.sqlite"
    config = load_config(path)
    old = replace(config, programs=config.legacy_programs, legacy_hashing=True)
    new_keys = {m.match_id: m.key for m in config.keyed(list(_schedule(config)))}
    old_keys = {m.match_id: m.key for m in old.keyed(list(_schedule(config)))}
    db = sqlite3.connect(results)
    db.execute("PRAGMA foreign_keys = OFF")
    for match_id, key in new_keys.items():
        db.execute(
            "UPDATE matches SET match_key = ? WHERE match_key = ?", (old_keys[match_id], key)
        )
        db.execute("UPDATE faults SET match_key = ? WHERE match_key = ?", (old_keys[match_id], key))
    db.execute(
        "UPDATE meta SET value = ? WHERE key = 'definition'", (json.dumps(old.definition()),)
    )
    db.execute("UPDATE meta SET value = ? WHERE key = 'fingerprint'", (old.fingerprint(),))
    db.commit()
    db.close()
    assert "bots_hashed" not in old.definition()

    resumed = arena("tournament", path)
    assert resumed.returncode == 0, resumed.stderr
    assert "kept 3 stored matches, 0 to play" in resumed.stdout
    assert "begun by an arena that hashed only the files a bot's argv names" in resumed.stdout
    with ResultStore.open_read(results) as store:
        assert "bots_hashed" not in store.definition()  # on those terms while it holds them


def _schedule(config):
    from arena.tournament.schedule import build_schedule

    return build_schedule(config.seed, [b.name for b in config.bots], config.games, config.seating)


def test_a_program_outside_the_cwd_is_hashed_alone_never_its_folder(tmp_path):
    """/usr/bin/env's folder is not a bot's: without a file of its own inside its cwd, a bot is
    the files its argv names."""
    env = BotSpec(name="e", argv=("/usr/bin/env", "node", "x.js"))
    assert set(program_hashes(env)) == {"/usr/bin/env"}
    bot_folder(tmp_path / "mine")
    inside = BotSpec(name="m", argv=("./mine/bot.py",), cwd=str(tmp_path))
    (tmp_path / "mine" / "bot.py").chmod(0o755)
    assert list(program_hashes(inside)) == ["mine/"]  # a program in its cwd: its folder
