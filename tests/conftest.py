import os

import pytest
from hypothesis import settings

# CI draws the same examples every run (a failure there is a bug, not a bad draw); elsewhere
# Hypothesis explores anew. `.ci/run` sets CI.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# Run as root, the arena starts bots as nobody (SPEC.md section 7), who may not read this
# checkout's Python (often under /root): the suite's bots run as root, and
# tests/untrusted/test_users.py tests the default itself.
if os.geteuid() == 0:
    os.environ.setdefault("ARENA_BOT_USER", "root")


def pytest_addoption(parser):
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite tests/golden/*.json from the current engines (only on purpose)",
    )

    parser.addoption(
        "--update-snapshots",
        action="store_true",
        help="rewrite tests/snapshots/ from the current CLI's help and messages (only on purpose)",
    )


@pytest.fixture
def update_golden(request):
    return request.config.getoption("--update-golden")


@pytest.fixture
def update_snapshots(request):
    return request.config.getoption("--update-snapshots")


def pytest_terminal_summary(terminalreporter):
    """The record-audit mutation test's figures (tests/referee/test_record_audit.py): its
    catalogue's size and catch rate, shown with every run (they come back from xdist workers
    as the test's user properties)."""
    lines = [
        value
        for reports in terminalreporter.stats.values()
        for report in reports
        for name, value in getattr(report, "user_properties", ())
        if name == "record_audit" and getattr(report, "when", "call") == "call"
    ]
    if lines:
        terminalreporter.write_sep("-", "record audit: single edits of real records")
        for line in sorted(set(lines)):
            terminalreporter.write_line(line)
