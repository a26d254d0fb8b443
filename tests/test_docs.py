"""The docs say what the code does: defaults, refresh rates and output formats stay in step."""

import json
import re
from dataclasses import fields
from pathlib import Path

from arena.referee.clock import TimeControl
from arena.referee.results import MatchResult
from arena.render.terminal import LIVE_REFRESH_S
from protocol.codec import json_schema

ROOT = Path(__file__).resolve().parent.parent
SPEC = (ROOT / "SPEC.md").read_text()
README = (ROOT / "README.md").read_text()


def _spec_time_defaults() -> dict[str, int | None]:
    """The time control defaults of SPEC 10.1's `time` row: `decision_ms` (1000), `bank_ms` (none)."""
    row = next(line for line in SPEC.splitlines() if line.startswith("| `time` |"))
    found = dict(re.findall(r"`(\w+_ms)` \((\w+)\)", row))
    return {key: None if value == "none" else int(value) for key, value in found.items()}


def test_schema_limits_defaults_equal_the_spec():
    spec = _spec_time_defaults()
    hello = json.loads(next(line for line in SPEC.splitlines() if '"type":"hello"' in line)[6:])
    limits = json_schema()["$defs"]["Limits"]["properties"]
    assert set(spec) <= set(limits)
    for key, value in spec.items():
        assert limits[key].get("default") == value, key
        assert hello["limits"][key] == value, key  # SPEC 4.3's example hello
    assert limits["max_line_bytes"]["default"] == hello["limits"]["max_line_bytes"] == 1 << 20


def test_time_control_defaults_equal_the_spec():
    control = TimeControl()
    for key, value in _spec_time_defaults().items():
        assert getattr(control, key) == value, key
    assert "1000 ms per decision, a 50 ms margin, no\nbank, 10 s to start" in SPEC


def test_live_refresh_rate_is_stated_alike():
    per_second = {0.5: "twice a second", 0.25: "four times a second"}[LIVE_REFRESH_S]
    assert f"refreshed {per_second}" in SPEC
    assert f"refreshes {per_second}" in README


def test_match_json_keys_are_documented_in_order():
    paragraph = SPEC.split("**`arena match --json`**")[1].split("\n\n")[0]
    keys = re.findall(r"[:,] `(\w+)`", paragraph.replace("\n", " "))
    assert keys == [f.name for f in fields(MatchResult)]


def test_readme_examples_point_at_files_that_exist():
    for path in re.findall(r"python3 ((?:sample_bots|tests)/[\w/.-]+\.py)", README):
        assert (ROOT / path).is_file(), path


def test_writing_a_bot_counts_the_messages_it_lists():
    guide = (ROOT / "docs" / "writing-a-bot.md").read_text()
    count = re.search(r"A bot must handle (\w+)\s+messages", guide).group(1)
    table = guide.split("| the referee sends | the bot answers |")[1].split("\n\n")[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert {"three": 3, "four": 4}[count] == len(rows)


def test_the_test_command_installs_the_lock_and_ci_runs_it():
    """The README's test command installs constraints.txt's exact releases, and .ci/run runs
    the same install and the same checks: a new release elsewhere cannot break either."""
    command = next(
        line.strip() for line in README.splitlines() if "pytest" in line and "&&" in line
    )
    install, *checks = command.split(" && ")
    assert install.startswith("python3 -m pip install -c constraints.txt -e '.[")
    ci = (ROOT / ".ci" / "run").read_text()
    assert install.replace("pip install", "pip install --quiet") in ci
    assert " && ".join(checks) in ci
    pins = [line for line in (ROOT / "constraints.txt").read_text().splitlines() if "==" in line]
    names = {pin.split("==")[0].lower().replace("_", "-") for pin in pins}
    assert {"trio", "msgspec", "click", "rich", "openskill", "pytest", "mypy", "ruff"} <= names
    assert all(re.fullmatch(r"[\w.-]+==[\w.+-]+", pin) for pin in pins), "only exact pins"


def test_the_code_cites_only_files_in_the_repository():
    """A docstring or comment that names a file of this repository names one that exists."""
    cited = re.compile(
        r"\b((?:arena|benchmarks|protocol|sample_bots|tests|docs)/[\w./-]+\.(?:md|py|toml|json))\b"
    )
    for source in [*ROOT.glob("arena/**/*.py"), *ROOT.glob("protocol/*.py")]:
        for path in cited.findall(source.read_text()):
            generated = path.endswith("submission.json")  # written into an archive, not kept here
            assert generated or (ROOT / path).exists(), f"{source.relative_to(ROOT)} cites {path}"
