"""bot.toml validation and the content hash (arena/bots/manifest.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.bots.manifest import (
    BotFolderError,
    ManifestError,
    bot_label,
    content_hash,
    copy_folder,
    folder_entries,
    load_manifest,
)

GOOD = """
name = "mini"
author = "Ann Example"
version = "1.2.0"
run = ["./bin/mini", "--fast"]
build = "sh -c 'echo building; true'"
build_timeout_s = 30

[limits]
memory_mb = 256
cpu_seconds = 20
file_mb = 4

[env]
MINI_LEVEL = "3"
"""


def write_bot(folder: Path, manifest: str, files: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.toml").write_text(manifest)
    for name, text in (files or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def problems_of(folder: Path) -> list[str]:
    with pytest.raises(ManifestError) as caught:
        load_manifest(folder)
    return caught.value.problems


def test_a_full_manifest_becomes_a_bot_spec(tmp_path):
    folder = write_bot(tmp_path / "mini", GOOD)
    manifest = load_manifest(folder)
    assert (manifest.name, manifest.author, manifest.version) == ("mini", "Ann Example", "1.2.0")
    assert manifest.build == ("sh", "-c", "echo building; true")
    assert manifest.build_timeout_s == 30
    spec = manifest.bot_spec("0123456789ab")
    assert spec.name == "mini"
    assert spec.argv == (
        str(folder / "bin" / "mini"),
        "--fast",
    )  # relative program: inside the folder
    assert spec.cwd == str(folder)
    assert spec.version == "1.2.0+0123456789ab"
    assert (spec.memory_mb, spec.cpu_seconds, spec.file_mb) == (256, 20, 4)
    assert spec.env == (("MINI_LEVEL", "3"),)
    assert bot_label(spec) == "mini@1.2.0+0123456789ab"


def test_a_bare_program_is_left_for_path_lookup_and_defaults_apply(tmp_path):
    folder = write_bot(
        tmp_path / "p", 'name = "p"\nauthor = "A"\nversion = "1"\nrun = "python3 bot.py"\n'
    )
    manifest = load_manifest(folder)
    assert manifest.run_argv() == ("python3", "bot.py")
    assert manifest.build is None and manifest.build_timeout_s == 300
    spec = manifest.bot_spec("abcdefabcdef")
    assert (spec.memory_mb, spec.cpu_seconds, spec.file_mb, spec.env) == (None, None, None, ())


def test_every_problem_is_reported_one_line_each_naming_file_and_field(tmp_path):
    folder = write_bot(
        tmp_path / "bad",
        """
name = "my bot"
version = 3
run = ""
bulid = "make"
build_timeout_s = 5

[limits]
memory_mb = -1
disk = 3

[env]
1X = "a"
Y = 2
""",
    )
    problems = problems_of(folder)
    where = str(folder / "bot.toml")
    assert all(line.startswith(where + ": ") and "\n" not in line for line in problems)
    fields = [line[len(where) + 2 :].split(":", 1)[0] for line in problems]
    assert fields == [
        "bulid",
        "name",
        "author",
        "version",
        "run",
        "build_timeout_s",
        "limits.memory_mb",
        "limits.disk",
        "env.1X",
        "env.Y",
    ]
    text = "\n".join(problems)
    assert "did you mean build?" in text
    assert 'name: found "my bot" (a string); expected 1-40 letters' in text
    assert "author: found nothing" in text
    assert "version: found 3 (an integer)" in text
    assert "limits.memory_mb: found -1 (an integer); expected an integer >= 1" in text


@pytest.mark.parametrize(
    "line, field, expected",
    [
        ("run = 7", "run", "a command"),
        ('run = ["./bot", 3]', "run", "a command"),
        ('run = "python3 \'unclosed"', "run", "splits into words"),
        ('run = "../other/bot"', "run", "inside the bot folder"),
        ('run = "./bot"\nbuild = []', "build", "a command"),
        (
            'run = "./bot"\nbuild = "make"\nbuild_timeout_s = 0',
            "build_timeout_s",
            "> 0 and <= 3600",
        ),
        (
            'run = "./bot"\nbuild = "make"\nbuild_timeout_s = true',
            "build_timeout_s",
            "> 0 and <= 3600",
        ),
        ('run = "./bot"\nlimits = 5', "limits", "[limits] table"),
        ('run = "./bot"\nenv = "A=1"', "env", "[env] table"),
        ('run = "./bot"\n[limits]\ncpu_seconds = 1.5', "limits.cpu_seconds", "an integer >= 1"),
    ],
)
def test_each_field_is_checked(tmp_path, line, field, expected):
    folder = write_bot(tmp_path / "b", f'name = "b"\nauthor = "A"\nversion = "1"\n{line}\n')
    [problem] = problems_of(folder)
    assert problem.startswith(f"{folder / 'bot.toml'}: {field}: found ")
    assert expected in problem


def test_a_missing_or_unparsable_manifest_says_so(tmp_path):
    (tmp_path / "empty").mkdir()
    [problem] = problems_of(tmp_path / "empty")
    assert (
        problem
        == f"{tmp_path / 'empty' / 'bot.toml'}: missing (a bot folder needs a bot.toml manifest)"
    )
    folder = write_bot(tmp_path / "broken", 'name = "x\n')
    [problem] = problems_of(folder)
    assert problem.startswith(f"{folder / 'bot.toml'}: not valid TOML: ")
    [problem] = problems_of(tmp_path / "nowhere")
    assert "not a folder" in problem


# --- the content hash --------------------------------------------------------------------------


def make_sources(folder: Path, order: list[str]) -> Path:
    contents = {
        "bot.toml": GOOD,
        "src/main.c": "int main(void) { return 0; }\n",
        "Makefile": "all:\n",
    }
    folder.mkdir()
    for name in order:
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_text(contents[name])
    return folder


def test_the_hash_depends_on_content_not_on_location_or_creation_order(tmp_path):
    one = make_sources(tmp_path / "one", ["bot.toml", "src/main.c", "Makefile"])
    two = make_sources(tmp_path / "two", ["Makefile", "src/main.c", "bot.toml"])
    assert content_hash(one) == content_hash(two)
    assert len(content_hash(one)) == 12 and all(c in "0123456789abcdef" for c in content_hash(one))


@pytest.mark.parametrize("change", ["edit", "rename", "chmod", "add_empty_dir", "add_file"])
def test_any_change_to_the_sources_changes_the_hash(tmp_path, change):
    folder = make_sources(tmp_path / "bot", ["bot.toml", "src/main.c", "Makefile"])
    before = content_hash(folder)
    if change == "edit":
        (folder / "src/main.c").write_text("int main(void) { return 1; }\n")
    elif change == "rename":
        (folder / "Makefile").rename(folder / "makefile")
    elif change == "chmod":
        (folder / "Makefile").chmod(0o755)
    elif change == "add_empty_dir":
        (folder / "data").mkdir()
    else:
        (folder / "notes.txt").write_text("")
    assert content_hash(folder) != before


def test_vcs_folders_and_caches_are_neither_hashed_nor_copied(tmp_path):
    folder = make_sources(tmp_path / "bot", ["bot.toml", "src/main.c", "Makefile"])
    before = content_hash(folder)
    for junk in (
        ".git/HEAD",
        "__pycache__/x.cpython-311.pyc",
        "src/helper.pyc",
        ".DS_Store",
        ".arena/submission.json",
    ):
        (folder / junk).parent.mkdir(exist_ok=True)
        (folder / junk).write_text("junk")
    assert content_hash(folder) == before
    (tmp_path / "copy").mkdir()
    copy_folder(folder, tmp_path / "copy")
    copied = sorted(str(p.relative_to(tmp_path / "copy")) for p in (tmp_path / "copy").rglob("*"))
    assert copied == ["Makefile", "bot.toml", "src", "src/main.c"]
    assert content_hash(tmp_path / "copy") == before


def test_a_copy_keeps_modes_times_and_inside_symlinks(tmp_path):
    folder = make_sources(tmp_path / "bot", ["bot.toml", "src/main.c", "Makefile"])
    (folder / "run.sh").write_text("#!/bin/sh\n")
    (folder / "run.sh").chmod(0o755)
    os.utime(folder / "src/main.c", (1_000_000, 1_000_000))
    (folder / "main-link.c").symlink_to("src/main.c")
    (tmp_path / "copy").mkdir()
    copy_folder(folder, tmp_path / "copy")
    copy = tmp_path / "copy"
    assert os.access(copy / "run.sh", os.X_OK)
    assert (copy / "src/main.c").stat().st_mtime == 1_000_000
    assert os.readlink(copy / "main-link.c") == "src/main.c"
    assert content_hash(copy) == content_hash(folder)
    assert [entry.path for entry in folder_entries(copy)] == [
        "Makefile",
        "bot.toml",
        "main-link.c",
        "run.sh",
        "src",
        "src/main.c",
    ]


@pytest.mark.parametrize("target", ["/etc/passwd", "../outside.txt", "src/../../x"])
def test_a_symlink_leaving_the_folder_is_refused(tmp_path, target):
    folder = make_sources(tmp_path / "bot", ["bot.toml", "src/main.c", "Makefile"])
    (folder / "link").symlink_to(target)
    with pytest.raises(BotFolderError, match=r"link: symlink to .* points outside the bot folder"):
        content_hash(folder)


def test_a_symlink_that_leaves_the_folder_through_another_link_is_refused(tmp_path):
    folder = make_sources(tmp_path / "bot", ["bot.toml", "src/main.c", "Makefile"])
    (tmp_path / "secret.txt").write_text("not part of the bot")
    (folder / "here").symlink_to(".")
    (folder / "sneaky").symlink_to("here/../secret.txt")  # lexically inside, really not
    with pytest.raises(
        BotFolderError, match=r"sneaky: symlink to 'here/../secret.txt' points outside"
    ):
        content_hash(folder)
