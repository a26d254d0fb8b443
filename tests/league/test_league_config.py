"""The league file: every mistake at once, one line each, naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.league.config import load_league
from arena.tournament.config import ConfigError
from tests.league.conftest import arena, league_toml


def test_a_good_file_reads(tmp_path: Path) -> None:
    config = load_league(league_toml(tmp_path, extra='sandbox = "none"'))
    assert config.name == "testleague"
    assert [g.label for g in config.games] == ["eight-rounds"]
    assert [b.name for b in config.house_bots] == ["house1", "house2", "house3"]
    assert config.store_path == tmp_path / "data" / "league.sqlite"
    assert config.organiser.registration == "closed"


def test_every_mistake_is_named(tmp_path: Path) -> None:
    path = tmp_path / "league.toml"
    path.write_text(
        """
name = "x"
colour = "blue"
sandbox = "docker"
[organiser]
registration = "maybe"
[limits]
files = 0
[[games]]
game = "snap"
[[games]]
game = "eight-rounds"
deals = 4
"""
    )
    with pytest.raises(ConfigError) as caught:
        load_league(path)
    text = str(caught.value)
    for field in (
        "colour",
        "sandbox",
        "organiser.registration",
        "limits.files",
        "games[0].game",
        "games[1].deals",
    ):
        assert f"{path}: {field}" in text, field


def test_the_cli_says_it_in_one_line_per_mistake(tmp_path: Path) -> None:
    path = tmp_path / "league.toml"
    path.write_text("games = 3\n")
    done = arena("league", "serve", str(path), "--port", "0")
    assert done.returncode == 2
    assert f"{path}: games" in done.stderr and "Traceback" not in done.stderr


def test_a_house_bot_taken_out_of_the_file_retires_and_comes_back(tmp_path: Path) -> None:
    from arena.league.league import League
    from arena.league.store import LeagueStore

    def statuses(house: int) -> dict[str, str]:
        config = load_league(league_toml(tmp_path, house=house))
        store = LeagueStore.open(config.store_path, name=config.name)
        try:
            League(config, store).register_house_bots()
            return {v.label: v.status for v in store.versions()}
        finally:
            store.close()

    assert set(statuses(3).values()) == {"active"}
    assert statuses(2)["house.house3.v1"] == "retired"
    assert statuses(3)["house.house3.v1"] == "active"


# The same mistakes in the fields both files share ([[games]], [[bots]], [time]), read by the
# tournament file's public readers: each one line naming the file and the field, said alike.
SHARED_MISTAKES = """
[time]
decision_ms = 0
colour = 1
[[games]]
game = "snap"
[[games]]
game = "eight-rounds"
players = 9
[[bots]]
name = "has space"
argv = ["python3", "x.py"]
[[bots]]
name = "b"
argv = 7
"""
SHARED_FIELDS = (
    "time.decision_ms",
    "time.colour",
    "games[0].game",
    "games[1].players",
    "bots[0].name",
    "bots[1].argv",
)


def _problems(path: Path, kind: str) -> list[str]:
    from arena.tournament.config import load_config

    with pytest.raises(ConfigError) as caught:
        load_league(path) if kind == "league" else load_config(path)
    for line in caught.value.problems:
        assert "\n" not in line and line.startswith(f"{path}: "), line
    return [line.removeprefix(f"{path}: ") for line in caught.value.problems]


def test_shared_fields_are_read_and_refused_alike_in_league_and_tournament_files(
    tmp_path: Path,
) -> None:
    league = tmp_path / "league.toml"
    league.write_text('name = "l"\n' + SHARED_MISTAKES)
    tournament = tmp_path / "tournament.toml"
    tournament.write_text('name = "t"\n' + SHARED_MISTAKES)
    said = {kind: _problems(path, kind) for kind, path in (("league", league), ("t", tournament))}
    for field in SHARED_FIELDS:
        in_league = [line for line in said["league"] if line.startswith(f"{field}: found ")]
        in_tournament = [line for line in said["t"] if line.startswith(f"{field}: found ")]
        assert in_league, (field, said["league"])
        assert in_league == in_tournament, field  # the same words for the same mistake

    done = arena("league", "serve", str(league), "--port", "0")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    for field in SHARED_FIELDS:
        assert sum(line.startswith(f"{league}: {field}: ") for line in lines) == 1, field
