"""The sample bots and the demo tournament file, for ``arena init``.

From a checkout they are sample_bots/ and tournaments/demo.toml at its root; an installed wheel
carries the same files under arena/demo/ (setup.py copies them in at build time).
"""

from __future__ import annotations

import shutil
from pathlib import Path

# What is never copied: caches, and what building a sample bot in place writes (the C bot's
# binary; the starter kits' target/ (Rust), classes/ (Java) and binaries (C++, Go)). setup.py's
# SKIP, which keeps them out of the wheel, has the same list (tests/test_writing_a_bot.py).
BUILD_OUTPUTS = (
    "__pycache__",
    "*.pyc",
    "*.o",
    "random_bot",
    "random_bot_c",
    "target",
    "classes",
    "starter_bot",
)
SKIP = shutil.ignore_patterns(*BUILD_OUTPUTS)
DEMO_FILE = Path("tournaments") / "demo.toml"


class InitError(Exception):
    """The demo cannot be written (one line, names the path)."""


def demo_source() -> Path:
    """The folder holding sample_bots/ and tournaments/demo.toml."""
    package = Path(__file__).resolve().parents[1]  # the arena package's folder
    for candidate in (package / "demo", package.parent):
        if (candidate / "sample_bots").is_dir() and (candidate / DEMO_FILE).is_file():
            return candidate
    raise InitError(f"the sample bots are missing from this installation ({package})")


def write_demo(target: Path, *, force: bool = False) -> Path:
    """Copy the sample bots and the demo tournament file into ``target``; return the file's path.

    Existing files are never overwritten unless ``force``."""
    source = demo_source()
    bots, demo = target / "sample_bots", target / DEMO_FILE
    if not force:
        for path in (bots, demo):
            if path.exists():
                raise InitError(f"{path} already exists (use --force to overwrite it)")
    try:
        target.mkdir(parents=True, exist_ok=True)
        shutil.copytree(source / "sample_bots", bots, ignore=SKIP, dirs_exist_ok=True)
        demo.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / DEMO_FILE, demo)
    except OSError as exc:
        raise InitError(f"{target}: cannot write the demo: {exc.strerror or exc}") from None
    return demo
