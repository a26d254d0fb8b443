"""What a sealed bot is shown and hidden (arena/referee/confine.py), without processes; the seal
itself is proved by attack in tests/untrusted/test_attack.py."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from arena.referee.bot_spec import BotSpec
from arena.referee.confine import SealPlan, bwrap_argv, hidden_from, program_folders
from arena.referee.lines import printable
from arena.tournament.pool import hide_from_each_other

ROOT = Path(__file__).resolve().parents[2]


def test_each_bot_is_hidden_the_arenas_files_and_the_other_bots_folders(tmp_path):
    own, other, shared = tmp_path / "a", tmp_path / "b", tmp_path / "shared"
    for folder in (own, other, shared):
        folder.mkdir()
    (other / "secret.py").write_text("")
    specs = [
        # Its command line names the other bot's file: that shows it nothing (an author's
        # bot.toml writes the command line of a submitted bot).
        BotSpec("a", (sys.executable, str(other / "secret.py")), cwd=str(own)),
        BotSpec("b", (sys.executable, "x.py"), cwd=str(other)),
        BotSpec("c", (sys.executable, "x.py"), cwd=str(shared)),
        BotSpec("d", (sys.executable, "y.py"), cwd=str(shared)),
    ]
    arena = [str(tmp_path / "out"), str(tmp_path / "t.toml")]
    hidden = {spec.name: spec.hidden for spec in hide_from_each_other(specs, arena)}
    assert hidden["a"] == (*arena, str(other), str(shared))
    assert hidden["b"] == (*arena, str(own), str(shared))
    # Bots sharing a folder see each other's files there; the others' are hidden.
    assert hidden["c"] == hidden["d"] == (*arena, str(own), str(other))


def test_a_folder_holding_a_bots_own_is_hidden_only_if_it_is_the_arenas():
    # Another bot's folder holding this bot's is not hidden (it would hide its own); the arena's
    # output folder holding it is (its own folder is shown again inside), but never its own.
    assert hidden_from(["/t/bots/b"], ["/t/bots", "/t/other"], ["/t/out", "/t/bots/b"]) == (
        "/t/out",
        "/t/other",
    )
    assert hidden_from([], ["/t/x"], ["/t/out"]) == ("/t/out", "/t/x")


def test_program_folders_are_those_of_the_files_its_command_line_names(tmp_path):
    (tmp_path / "bot.py").write_text("")
    (tmp_path / "lib").mkdir()
    argv = (sys.executable, "bot.py", "lib", "--fast", "bot.py")
    assert program_folders(argv, str(tmp_path)) == [
        str(Path(sys.executable).parent),
        str(tmp_path),
    ]


def test_bubblewrap_hides_only_what_it_can_see_and_shows_the_bots_folder_again():
    """Hidden paths under the private /tmp are not there to hide; a hidden folder holding the
    bot's own is hidden, then the bot's folder bound again inside it, then made read-only."""
    parent = ROOT / "results"  # (outside /tmp, which is the bot's own anyway)
    parent.mkdir(exist_ok=True)
    cache = Path(tempfile.mkdtemp(prefix="confine-", dir=parent))
    try:
        entry = cache / "abc"
        entry.mkdir()
        plan = SealPlan(
            workdir=str(entry),
            own_folder=str(entry),
            program_folders=(),
            hidden=(str(cache), "/tmp/not-there-anyway"),
            file_mb=4,
            owner=None,
        )
        argv = bwrap_argv(plan, ["bot"], strict=False)
        text = " ".join(argv)
        assert "/tmp/not-there-anyway" not in text
        hide, show, seal = (
            text.index(f"--tmpfs {cache} "),
            text.rindex(f"--bind {entry} {entry}"),
            text.index(f"--remount-ro {cache} "),
        )
        assert hide < show < seal
        assert argv[-2:] == ["--", "bot"]
    finally:
        shutil.rmtree(cache)


def test_printable_escapes_what_a_terminal_acts_on_and_nothing_else():
    said = "ok\tfine é ✓ \x1b[2J\x07\r\x9b\u202e"
    assert printable(said) == "ok\tfine é ✓ \\x1b[2J\\x07\\x0d\\x9b\\u202e"
    assert printable(printable(said)) == printable(said)
