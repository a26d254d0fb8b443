import os

import pytest

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


@pytest.fixture
def update_golden(request):
    return request.config.getoption("--update-golden")
