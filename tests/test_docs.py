"""The docs say what the code does: defaults, refresh rates and output formats stay in step."""

import json
import re
from dataclasses import fields
from pathlib import Path

from arena.referee.clock import TimeControl
from arena.referee.results import MatchResult, record_fields
from arena.render.terminal import LIVE_REFRESH_S
from protocol.codec import json_schema

ROOT = Path(__file__).resolve().parent.parent
SPEC = (ROOT / "SPEC.md").read_text()
README = (ROOT / "README.md").read_text()
# The pages that explain the commands, each with its "## The commands" reference block.
COMMAND_PAGES = [ROOT / "docs" / name for name in ("playing.md", "organising.md", "league.md")]


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
    assert f"refreshes {per_second}" in (ROOT / "docs" / "organising.md").read_text()


def test_match_json_keys_are_documented_in_order():
    paragraph = SPEC.split("**`arena match --json`**")[1].split("\n\n")[0]
    keys = re.findall(r"[:,] `(\w+)`", paragraph.replace("\n", " "))
    # (the result's record is written as its two keys, record_fields)
    written = [
        key
        for f in fields(MatchResult)
        for key in (record_fields(None) if f.name == "record" else [f.name])
    ]
    assert keys == written


def test_readme_examples_point_at_files_that_exist():
    for text in [README, *(page.read_text() for page in COMMAND_PAGES)]:
        for path in re.findall(r"python3 ((?:sample_bots|tests)/[\w/.-]+\.py)", text):
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


COMMIT_HASH = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
PERFORMANCE = ROOT / "docs" / "performance.md"


def test_the_readme_keeps_no_performance_log_and_links_the_figures():
    """Figures live in docs/performance.md, history in git: the README names no commit and
    quotes no measured rate, and links where the figures are."""
    assert not COMMIT_HASH.findall(README)
    assert not re.search(r"\d\s*(us|ms) (per|a) decision|matches/s|decisions/s", README)
    assert "(docs/performance.md)" in README and "(benchmarks/README.md)" in README


def test_the_performance_doc_gives_each_figure_its_command_date_and_load():
    """One table of current figures: every row names the script that measured it (one that
    exists), the date and the load beside it; no commit hash, no "was X, now Y" history."""
    text = PERFORMANCE.read_text()
    assert not COMMIT_HASH.findall(text)
    history = re.search(r"\b(was|were|now|before|previously)\b[^.|]{0,20}\d", text)
    assert not history, f"a figure's history: {history and history[0]}"
    table = text.split("| goal | figure |")[1].split("\n\n")[0]
    rows = [line for line in table.splitlines()[2:] if line.startswith("|")]
    assert len(rows) >= 15
    for row in rows:
        scripts = re.findall(r"benchmarks/(\w+)\.py", row)
        assert scripts, f"a figure without its command: {row[:80]}"
        for script in scripts:
            assert (ROOT / "benchmarks" / f"{script}.py").is_file(), script
        assert re.search(r"20\d\d-\d\d-\d\d", row), f"a figure without its date: {row[:80]}"
        assert re.search(r"load \d", row), f"a figure without the load: {row[:80]}"


def _documented_command_options() -> dict[str, set[str]]:
    """The options the docs' command references (COMMAND_PAGES) give each `arena` command: on
    its `arena NAME` lines and the lines that continue them, left of the comments."""
    found: dict[str, set[str]] = {}
    for page in COMMAND_PAGES:
        block = page.read_text().split("## The commands")[1].split("\n\n")[2]
        command = None
        for line in block.splitlines():
            code = line.split("#")[0].strip()
            if code.startswith("arena "):
                command = code.split()[1]
            if command and code:
                found.setdefault(command, set()).update(re.findall(r"--[a-z][\w-]*", code))
    return found


def test_the_readme_lists_every_command_once_with_an_example():
    import click

    from arena.cli import main

    block = README.split("## Commands")[1].split("\n\n")[2].splitlines()
    listed = [line.split()[1] for line in block]
    assert sorted(listed) == main.list_commands(click.Context(main, **main.context_settings))
    assert all(re.search(r"# .+: arena ", line) for line in block), "a command without example"


def test_the_docs_list_every_command_and_option_of_the_cli():
    """The docs' command references are complete and correct: each `arena` command with every
    option its --help shows (a flag pair by either name), and no option the command does not
    have."""
    import click

    from arena.cli import main

    context = click.Context(main, **main.context_settings)
    listed = _documented_command_options()
    assert set(listed) == set(main.list_commands(context))
    for name, given in listed.items():
        command = main.get_command(context, name)
        assert command is not None
        commands = [command]  # a group (`arena league`): its subcommands' options, at any depth
        for found in commands:
            if isinstance(found, click.Group):
                commands.extend(found.commands.values())
        names = [
            {*param.opts, *param.secondary_opts} - {"-h"}
            for found in commands
            for param in found.get_params(context)
            if isinstance(param, click.Option) and "--help" not in param.opts
        ]
        names = [option for i, option in enumerate(names) if option not in names[:i]]
        for option in names:
            assert option & given, f"the docs' `arena {name}` lacks {sorted(option)}"
        unknown = given - set().union(*names)
        assert not unknown, f"the docs' `arena {name}` gives {sorted(unknown)}: not in --help"


def test_each_store_says_the_schema_it_writes():
    from arena.league import store as league_store
    from arena.tournament import store as results_store

    for store in (results_store, league_store):
        assert store.__doc__ is not None
        assert f'schema = "{store.SCHEMA_VERSION}"' in store.__doc__, store.__name__
