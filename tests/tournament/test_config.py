"""Tournament files: a good one loads; every kind of mistake is one line naming file and field."""

import sys
from pathlib import Path

import pytest

from arena.games import GAMES
from arena.tournament.config import ConfigError, load_config, parse_bot_option, quick_config

GOOD = f"""
name = "cup"
seed = 7
deals = 3
concurrency = 2
max_faults = 2
match_time_limit = 30.5
output = "out/cup"

[time]
decision_ms = 500
margin_ms = 20

[[bots]]
name = "alpha"
cmd = "{sys.executable} bot.py --fast"
env = {{ LEVEL = "3" }}
memory_mb = 256

[[bots]]
name = "beta"
argv = ["{sys.executable}", "other.py"]

[[games]]
game = "aon"
players = 3
deals = 1
max_tables = 5
"""


def write(tmp_path, text, name="t.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_good_file_loads_with_every_field(tmp_path):
    config = load_config(write(tmp_path, GOOD))
    assert config.name == "cup" and config.seed == 7 and config.concurrency == 2
    assert config.max_faults == 2 and config.match_time_limit_s == 30.5
    assert config.time_control.decision_ms == 500 and config.time_control.margin_ms == 20
    alpha, beta = config.bots
    assert alpha.argv == (sys.executable, "bot.py", "--fast")
    assert alpha.env == (("LEVEL", "3"),) and alpha.memory_mb == 256
    assert beta.argv == (sys.executable, "other.py")
    (game,) = config.games
    assert (game.label, game.game_id, game.players, game.deals, game.max_tables) == (
        "alles-oder-nichts",
        "alles-oder-nichts",
        3,
        1,
        5,
    )
    # Relative paths in a file are taken from the file's folder, wherever arena runs.
    assert config.results == tmp_path / "out/cup/results.sqlite"
    assert config.records_dir == tmp_path / "out/cup/records"


def test_relative_paths_are_taken_from_the_files_folder(tmp_path, monkeypatch):
    folder = tmp_path / "league"
    (folder / "bots").mkdir(parents=True)
    (folder / "bots" / "bot.py").write_text("")
    text = 'output = "out"\ngames = ["aon"]\n' + "".join(
        f'[[bots]]\nname = "{n}"\nargv = ["{sys.executable}", "bot.py"]\ncwd = "bots"\n'
        for n in ("a", "b")
    )
    path = write(folder, text)
    monkeypatch.chdir(tmp_path)  # elsewhere: the folder names must not depend on it
    config = load_config(path.relative_to(tmp_path))
    assert [Path(b.cwd).resolve() for b in config.bots] == [(folder / "bots").resolve()] * 2
    assert config.results.resolve() == (folder / "out" / "results.sqlite").resolve()


def test_defaults_and_games_all(tmp_path):
    text = GOOD.split("[[games]]")[0].replace("deals = 3\n", "")
    config = load_config(write(tmp_path, text))
    assert [g.game_id for g in config.games] == list(GAMES)
    assert all(g.deals == 2 for g in config.games)


def test_the_fingerprint_follows_the_definition_not_the_running_options(tmp_path):
    base = load_config(write(tmp_path, GOOD))
    faster = load_config(
        write(tmp_path, GOOD.replace("concurrency = 2", "concurrency = 1"), "b.toml")
    )
    reseeded = load_config(write(tmp_path, GOOD.replace("seed = 7", "seed = 8"), "c.toml"))
    split = load_config(write(tmp_path, GOOD.replace("concurrency = 2", "workers = 2"), "d.toml"))
    unpinned = load_config(
        write(tmp_path, GOOD.replace("concurrency = 2", "affinity = false"), "e.toml")
    )
    assert split.workers == 2 and base.workers is None
    assert base.affinity and not unpinned.affinity
    assert (
        base.fingerprint() == faster.fingerprint() == split.fingerprint() == unpinned.fingerprint()
    )
    assert base.fingerprint() != reseeded.fingerprint()


BAD = [
    ("seed = 7", 'seed = "seven"', 'seed: found "seven" (a string); expected an integer >= 0'),
    ("seed = 7", "seed = -1", "seed: found -1 (an integer); expected an integer >= 0"),
    ("deals = 3", "deals = 0", "deals: found 0"),
    ("concurrency = 2", "concurrency = 0", "concurrency: found 0"),
    (
        "concurrency = 2",
        "concurrency = 2\nworkers = 0",
        "workers: found 0 (an integer); expected an integer >= 1",
    ),
    (
        "concurrency = 2",
        'concurrency = 2\naffinity = "yes"',
        'affinity: found "yes" (a string); expected true or false',
    ),
    ("max_faults = 2", "max_faults = 1.5", "max_faults: found 1.5 (a number)"),
    ("match_time_limit = 30.5", "match_time_limit = 0", "match_time_limit: found 0"),
    ('name = "cup"', 'name = "my cup!"', 'name: found "my cup!"'),
    (
        'name = "cup"',
        'name = "cup"\ncolour = "red"',
        "colour: found an unknown field; expected one of name",
    ),
    ("decision_ms = 500", "decision_ms = 0", "time.decision_ms: found 0"),
    (
        "decision_ms = 500",
        "decision_ms = 500\nbank_ms = 0",
        "time.bank_ms: found 0",
    ),  # as arena match
    ("decision_ms = 500", "decison_ms = 500", "time.decison_ms: found an unknown field"),
    (
        'name = "beta"',
        'name = "alpha"',
        "bots[1]: found name 'alpha' a second time; expected each name once",
    ),
    ('name = "beta"', "", "bots[1].name: found nothing"),
    ('argv = ["', 'cmd = "x"\nargv = ["', "bots[1]: found both argv and cmd"),
    ('argv = ["', 'argv = [3, "', "bots[1].argv: found [3,"),
    ('cmd = "', "cmd = \"'unclosed ", "bots[0].cmd: found"),
    ("memory_mb = 256", "memory_mb = -5", "bots[0].memory_mb: found -5"),
    (
        'env = { LEVEL = "3" }',
        "env = { LEVEL = 3 }",
        "bots[0].env.LEVEL: found 3 (an integer); expected a string",
    ),
    ("memory_mb = 256", 'sandbox = "docker"', 'bots[0].sandbox: found "docker"'),
    (
        "memory_mb = 256",
        'cwd = "/no/such/dir"',
        'bots[0].cwd: found "/no/such/dir" (a string); expected an existing directory',
    ),
    (
        'game = "aon"',
        'game = "chess"',
        'games[0].game: found "chess" (a string); expected a game id',
    ),
    (
        "players = 3",
        "players = 9",
        "games[0].players: found 9 (an integer); expected one of 3, 4, 5, 6 for alles-oder-nichts",
    ),
    (
        "max_tables = 5",
        "max_tables = 5\noptions = { jokers = true }",
        "games[0].options.jokers: found true",
    ),
    ("max_tables = 5", "max_tables = 5\nseats = 4", "games[0].seats: found an unknown field"),
    (
        'output = "out/cup"',
        "output = 5",
        "output: found 5 (an integer); expected a non-empty string",
    ),
    (
        "seed = 7",
        'seed = 7\nseating = "random"',
        'seating: found "random" (a string); expected "duplicate" or "single"',
    ),
]


@pytest.mark.parametrize("old,new,message", BAD, ids=[b[2].split(":")[0] for b in BAD])
def test_each_mistake_is_one_line_naming_file_and_field(tmp_path, old, new, message):
    assert old in GOOD
    path = write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    text = str(caught.value)
    assert "\n" not in text
    assert text.startswith(f"{path}: ")
    assert message in text
    assert "expected" in text


def test_whole_file_mistakes(tmp_path):
    with pytest.raises(ConfigError, match=r"nope.toml: no such file"):
        load_config(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match=r"t.toml: not valid TOML: .*line 1"):
        load_config(write(tmp_path, "name = = 3"))
    one_bot = (
        GOOD.split("[[bots]]")[0] + "[[bots]]" + GOOD.split("[[bots]]")[1].split("[[games]]")[0]
    )
    with pytest.raises(
        ConfigError, match=r"bots: found .*expected at least two \[\[bots\]\] entries"
    ):
        load_config(write(tmp_path, one_bot))
    twice = GOOD + '\n[[games]]\ngame = "alles-oder-nichts"\n'
    with pytest.raises(
        ConfigError, match=r"games\[1\]: found label 'alles-oder-nichts' a second time"
    ):
        load_config(write(tmp_path, twice))
    labelled = twice + 'label = "aon-4"\n'
    assert [g.label for g in load_config(write(tmp_path, labelled)).games] == [
        "alles-oder-nichts",
        "aon-4",
    ]


def test_quick_form(tmp_path):
    config = quick_config(["a=python3 a.py", "b = python3 b.py -x"], games="aon", deals=1, seed=3)
    assert [b.name for b in config.bots] == ["a", "b"]
    assert config.bots[1].argv == ("python3", "b.py", "-x")
    assert [g.game_id for g in config.games] == ["alles-oder-nichts"]
    assert str(config.results).startswith("results/quick-")
    again = quick_config(["a=python3 a.py", "b = python3 b.py -x"], games="aon", deals=1, seed=3)
    assert again.results == config.results
    with pytest.raises(ConfigError, match="--bot nameonly: found no NAME=COMMAND"):
        parse_bot_option("nameonly")
    with pytest.raises(ConfigError, match=r"--games: found 'poker'; expected \"all\""):
        quick_config(["a=true", "b=true"], games="aon,poker")
    with pytest.raises(ConfigError, match=r"--bot: bots\[1\]: found name 'a' a second time"):
        quick_config(["a=true", "a=true"])
    with pytest.raises(
        ConfigError,
        match=r"bots\[1\].cmd: found \"no-such-program-x\" .*"
        "expected a program found on PATH",
    ):
        quick_config(["a=true", "b=no-such-program-x"])


def test_the_demo_file_loads_and_covers_all_four_games():
    root = Path(__file__).resolve().parents[2]
    config = load_config(root / "tournaments" / "demo.toml")
    assert {g.game_id for g in config.games} == {
        "alles-oder-nichts",
        "vingt-down",
        "eight-rounds",
        "all-fours",
    }
    assert len(config.bots) == 4 and config.concurrency == 2


def test_every_mistake_of_a_file_is_reported_at_once(tmp_path):
    """Six mistakes in one file: six lines in one error (and one run), in the file's order."""
    bad = (
        GOOD.replace("seed = 7", "seed = -1")
        .replace("concurrency = 2", "concurrency = 0\ncolour = 3")
        .replace("decision_ms = 500", 'decision_ms = "fast"')
        .replace('name = "alpha"', 'name = "al pha"')
        .replace("memory_mb = 256", "memory_mb = 0")
        .replace("players = 3", "players = 9")
    )
    path = write(tmp_path, bad)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    problems = caught.value.problems
    fields = [line.split(": ")[1] for line in problems]
    assert fields == [
        "colour",
        "seed",
        "concurrency",
        "time.decision_ms",
        "bots[0].name",
        "bots[0].memory_mb",
        "games[0].players",
    ]
    assert all(line.startswith(f"{path}: ") and "expected" in line for line in problems)
    lines = str(caught.value).splitlines()
    assert lines[0] == f"{path}: 7 mistakes" and [line.strip() for line in lines[1:]] == problems
    # A good bot is still checked beside a broken one, and a broken one is not counted twice.
    path = write(
        tmp_path, GOOD.replace('name = "beta"', "name = 3").replace("deals = 1", "deals = 0")
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert [line.split(": ")[1] for line in caught.value.problems] == [
        "bots[1].name",
        "games[0].deals",
    ]


def test_the_cli_prints_every_mistake_on_its_own_line(tmp_path):
    from click.testing import CliRunner

    from arena.cli import main

    path = write(
        tmp_path, GOOD.replace("seed = 7", "seed = -1").replace("players = 3", "players = 9")
    )
    done = CliRunner().invoke(main, ["tournament", str(path)])
    assert done.exit_code == 2
    lines = done.output.splitlines()
    assert lines[0] == f"Error: {path}: 2 mistakes"
    assert lines[1].startswith(f"  {path}: seed: found -1") and "games[0].players" in lines[2]
    assert "Traceback" not in done.output


def test_the_quick_form_takes_players_and_options_per_game():
    bots = [f"{n}={sys.executable} bot.py" for n in "abcd"]
    config = quick_config(
        bots, games="aon,vingt", players=["aon=3"], options=["vingt.max_deals=2"], deals=1
    )
    plans = {g.game_id: g for g in config.games}
    assert plans["alles-oder-nichts"].players == 3
    assert plans["vingt-down"].options["max_deals"] == 2
    with pytest.raises(ConfigError) as error:
        quick_config(
            bots, games="aon", players=["eight=4", "aon=9", "aon"], options=["aon.nope=1", "x"]
        )
    lines = str(error.value).splitlines()
    assert any("eight-rounds is not among the games played" in line for line in lines)
    assert any("--players aon=9: expected one of 3, 4, 5, 6" in line for line in lines)
    assert any("--players aon: expected GAME=N" in line for line in lines)
    assert any("unknown option 'nope'" in line for line in lines)
    assert any("--option x: expected GAME.KEY=VALUE" in line for line in lines)


def test_a_bot_may_turn_its_seal_off_and_bound_its_processes(tmp_path):
    """``sandbox = "none"`` and ``max_processes`` (SPEC 7); a wrong one is one line; the
    fingerprint of a file without them is as it was, and the arena's files are what the pool
    hides from every bot."""
    text = GOOD.replace('name = "beta"\n', 'name = "beta"\nsandbox = "none"\nmax_processes = 9\n')
    config = load_config(write(tmp_path, text))
    assert [(b.sandbox, b.max_processes) for b in config.bots] == [(None, None), ("none", 9)]
    assert (
        "max_processes" not in load_config(write(tmp_path, GOOD, "g.toml")).definition()["bots"][1]
    )
    assert config.definition()["bots"][1]["max_processes"] == 9
    for field, value, expected in (
        ("sandbox", '"docker"', '"bwrap" or "none"'),
        ("max_processes", "0", "an integer >= 1"),
    ):
        bad = GOOD.replace('name = "beta"\n', f'name = "beta"\n{field} = {value}\n')
        with pytest.raises(ConfigError, match=rf"bots\[1\]\.{field}: .*{expected}") as error:
            load_config(write(tmp_path, bad, "bad.toml"))
        assert "\n" not in str(error.value)
    files = config.arena_files()
    assert str(config.output) in files and str(config.results) in files
    assert str(tmp_path / "t.toml") in files  # the tournament file itself
