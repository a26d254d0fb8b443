"""Every benchmark script runs at its ``--smoke`` size and prints its table, so that none rots
unseen; benchmarks/README.md maps every script, and each imports as a module of the package.

The figures of a smoke run are too small to mean anything: only that the script works is
checked here (wall-clock figures belong to the scripts, docs/performance.md).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"
SCRIPTS = sorted(
    path.stem for path in BENCHMARKS.glob("*.py") if path.stem not in ("__init__", "common")
)
RULE = re.compile(r"-+(  -+)*")


def tables(lines: list[str]) -> list[tuple[str, list[str]]]:
    """The tables benchmarks.common.table printed: (header, rows) for each rule of dashes that
    has a header above it and rows below it, as many columns as the rule."""
    found = []
    for at, line in enumerate(lines):
        if at == 0 or not RULE.fullmatch(line):
            continue
        columns = line.count("  -") + 1
        starts = [0] + [match.end() - 1 for match in re.finditer("  -", line)]
        header = lines[at - 1]
        rows = []
        for row in lines[at + 1 :]:
            # a row has a cell where each column starts, the widths of the rule
            if len(row) < starts[-1] or any(row[s - 2 : s] != "  " for s in starts[1:]):
                break
            rows.append(row)
        if len(starts) == columns and all(header[s - 2 : s] == "  " for s in starts[1:]):
            found.append((header, rows))
    return found


@pytest.mark.parametrize("name", SCRIPTS)
def test_the_smoke_size_runs_and_prints_its_table(name, tmp_path):
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / f"{name}.py"), "--smoke"],
        cwd=tmp_path,  # where a script writes beside the current folder
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{name} --smoke failed:\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    skipped = [line for line in lines if line.startswith("skipped: ")]
    printed = tables(lines)
    assert printed or skipped, f"{name} printed no table and no reason to skip:\n{done.stdout}"
    for header, rows in printed:
        assert rows, f"{name}: a table without rows under {header!r}"
    assert not re.search(r"\bnan\b", done.stdout), f"{name} printed nan:\n{done.stdout}"
    assert list(tmp_path.iterdir()) == [], f"{name} left files behind in the current folder"


def test_a_table_is_read_as_printed(capsys):
    sys.path.insert(0, str(ROOT))
    from benchmarks import common

    common.table(["game", "decisions/s", "note"], [("aon", "1,234", None), ("vingt-down", 5, "x")])
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "game        decisions/s  note",
        "----------  -----------  ----",
        "aon               1,234     -",
        "vingt-down            5     x",
    ]
    assert tables(lines) == [(lines[0], lines[2:])]
    assert tables(lines[:2]) == [(lines[0], [])]


def test_every_script_imports_as_a_module_of_the_package():
    """``python3 -m benchmarks.NAME`` works: each module imports with the package's name (its
    main runs only as __main__), from another folder than the checkout."""
    names = ", ".join(repr(f"benchmarks.{name}") for name in SCRIPTS)
    code = f"import importlib\nfor name in [{names}]:\n    importlib.import_module(name)\n"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT / "tests",
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_suite_readme_maps_every_script():
    readme = (BENCHMARKS / "README.md").read_text()
    for name in SCRIPTS:
        assert f"benchmarks/{name}.py" in readme, f"benchmarks/README.md does not name {name}.py"
    for cited in re.findall(r"benchmarks/([a-z_]+)\.py", readme):  # NAME: the template
        assert cited == "common" or cited in SCRIPTS, f"benchmarks/README.md names {cited}.py"
