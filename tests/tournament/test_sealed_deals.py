"""Secret deals, verifiable afterwards (issue 35, SPEC 10.3): real tournaments of real bots into
real results files. A tournament file without `seed` deals from a secret seed: its commitment
is printed at the start and stored, no definition or bot message holds the seed while the
tournament runs, and seed and salt are revealed when it ends; anyone can then check them and
re-derive every deal. An organiser's seed is public, and the run says so."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from arena.games.cards import derive_seed
from arena.referee.record import read_record
from arena.tournament.config import load_config
from arena.tournament.seal import commitment_of
from arena.tournament.store import ResultStore

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = ROOT / "tests" / "bots" / "random_bot.py"


def arena(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def tournament_file(tmp_path: Path, *, seed: int | None = None, deals: int = 1) -> Path:
    bots = "".join(
        f'[[bots]]\nname = "r{i}"\nargv = ["{sys.executable}", "{RANDOM_BOT}", "{i}"]\n'
        for i in range(3)
    )
    path = tmp_path / "sealed.toml"
    seed_line = "" if seed is None else f"seed = {seed}\n"
    path.write_text(
        f'name = "sealed"\n{seed_line}deals = {deals}\n'
        f'concurrency = 2\nworkers = 1\noutput = "{tmp_path / "out"}"\n'
        'games = [{ game = "aon", players = 3 }, { game = "eight-rounds", players = 3 }]\n\n'
        f"{bots}"
    )
    return path


def meta(results: Path) -> dict[str, str]:
    with sqlite3.connect(f"{results.as_uri()}?mode=ro", uri=True) as db:
        return dict(db.execute("SELECT key, value FROM meta"))


def line_with(text: str, start: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(start))


def test_a_secret_seed_is_sealed_while_it_runs_and_revealed_when_it_ends(tmp_path):
    path = tournament_file(tmp_path)
    results = load_config(path).results
    first = arena("tournament", path, "--games", "aon")  # half of it: not ended
    assert first.returncode == 0, first.stderr
    commitment = line_with(first.stdout, "deals sealed: commitment ").split()[3]
    assert "deals revealed" not in first.stdout
    stored = meta(results)
    assert stored["commitment"] == commitment
    assert json.loads(stored["definition"])["seed"] is None  # what the web pages show
    assert "seed_revealed" not in stored
    secret = json.loads(stored["seed_secret"])
    with ResultStore.open_read(results) as store:
        matches = store.matches()
    for match in matches:  # every record header carries the commitment
        assert match.record is not None and match.record.span is not None
        header = read_record(match.record)[0]
        assert header["commitment"] == commitment
    checked = arena("replay", "--check", results)  # the seed not known yet: records only
    assert (
        checked.returncode == 0 and "the seed is secret until the tournament ends" in checked.stdout
    )

    second = arena("tournament", path)  # the rest: it ends
    assert second.returncode == 0, second.stderr
    assert line_with(second.stdout, "deals sealed: commitment ").split()[3] == commitment
    revealed = line_with(second.stdout, "deals revealed: seed ")
    seed, salt = int(revealed.split()[3].rstrip(",")), revealed.split()[5]
    assert (seed, salt) == (secret["seed"], secret["salt"])
    assert len(salt) == 64  # 256 bits: a 63-bit seed cannot be found from the commitment
    # Anyone can check it: SHA-256 of "trick-arena-seed:<salt>:<seed>" (SPEC 10.3) ...
    assert hashlib.sha256(f"trick-arena-seed:{salt}:{seed}".encode()).hexdigest() == commitment
    assert commitment_of(seed, salt) == commitment
    stored = meta(results)
    assert json.loads(stored["seed_revealed"]) == {"seed": seed, "salt": salt}
    assert "seed_secret" not in stored
    # ... and re-derive every deal from it.
    with ResultStore.open_read(results) as store:
        everything = store.matches()
    assert len(everything) == 2 * 3  # one deal of each game, three rotations
    for match in everything:
        assert match.seed == derive_seed(seed, f"{match.game}/t{match.table}/d{match.deal}")
    checked = arena("replay", "--check", results)
    assert checked.returncode == 0, checked.stderr
    assert f"the revealed seed {seed} opens the commitment {commitment}" in checked.stdout

    again = arena("tournament", path)  # the same tournament again: nothing to play
    assert again.returncode == 0 and "deals revealed already" in again.stdout
    assert "done: 0 played, 6 already stored" in again.stdout


def test_a_revealed_seed_deals_no_more_and_the_refusal_changes_nothing(tmp_path):
    path = tournament_file(tmp_path)
    results = load_config(path).results
    assert arena("tournament", path).returncode == 0
    before = meta(results)
    grown = tournament_file(tmp_path, deals=2)  # more deals would be predictable now
    refused = arena("tournament", grown)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.count("\n") == 1
    assert "this tournament has ended and its secret seed was revealed" in refused.stderr
    assert "--restart to set its 6 stored matches aside" in refused.stderr
    assert meta(results) == before  # the definition, the seal: as they were
    restarted = arena("tournament", grown, "--restart")
    assert restarted.returncode == 0, restarted.stderr
    fresh = line_with(restarted.stdout, "deals sealed: commitment ").split()[3]
    assert fresh != before["commitment"]  # a new secret seed for the new deals
    assert "done: 12 played" in restarted.stdout


def test_an_organisers_seed_is_public_and_the_run_says_so_once(tmp_path):
    path = tournament_file(tmp_path, seed=7)
    done = arena("tournament", path)
    assert done.returncode == 0, done.stderr
    told = [line for line in done.stdout.splitlines() if "a bot that knows the seed" in line]
    assert len(told) == 1 and told[0].startswith("seed 7 is set")
    stored = meta(load_config(path).results)
    assert "commitment" not in stored and json.loads(stored["definition"])["seed"] == 7
    assert "deals sealed" not in done.stdout and "deals revealed" not in done.stdout


def test_a_results_file_begun_before_sealed_seeds_keeps_its_seed(tmp_path):
    """An older arena dealt from seed 0 when the file gave none: such a file resumes with that
    seed, so its stored matches still count, and the run says the deals are public."""
    old = tournament_file(tmp_path, seed=0)  # what an older arena stored for a file without seed
    assert arena("tournament", old, "--games", "aon").returncode == 0
    path = tournament_file(tmp_path)
    resumed = arena("tournament", path)
    assert resumed.returncode == 0, resumed.stderr
    assert "keeps seed 0, which its stored matches were dealt from" in resumed.stdout
    assert "kept 3 stored matches, 3 to play" in resumed.stdout
    assert "commitment" not in meta(load_config(path).results)


def test_a_quick_tournament_is_sealed_too_and_resumes_with_its_secret(tmp_path):
    args = [
        "tournament",
        "--bot",
        f"a={sys.executable} {RANDOM_BOT} 1",
        "--bot",
        f"b={sys.executable} {RANDOM_BOT} 2",
        "--games",
        "aon",
        "--players",
        "aon=3",
        "--deals",
        "1",
        "--results",
        tmp_path / "q" / "results.sqlite",
    ]
    first = arena(*args)
    assert first.returncode == 0, first.stderr
    assert "deals sealed: commitment" in first.stdout and "deals revealed: seed" in first.stdout
    again = arena(*args)
    assert "deals revealed already" in again.stdout and "done: 0 played" in again.stdout


def test_arena_match_sends_no_seed_and_warns_about_a_given_one(tmp_path):
    record = tmp_path / "m.jsonl"
    bot = f"{sys.executable} {RANDOM_BOT} 3"
    given = arena(
        "match",
        "aon",
        "--bot",
        bot,
        "--players",
        "3",
        "--seed",
        "123456789",
        "--record",
        record,
        "--json",
    )
    assert given.returncode == 0, given.stderr
    assert "--seed 123456789: a bot that knows the seed can know every card" in given.stderr
    header = read_record(record)[0]
    assert header["seed"] == 123456789 and "123456789" not in header["match_id"]
    secret = arena("match", "aon", "--bot", bot, "--players", "3", "--json")
    assert secret.returncode == 0 and "knows the seed" not in secret.stderr
    assert json.loads(secret.stdout)["match_id"] == "match"  # the id bots get: no seed in it


def test_processes_that_only_play_never_get_the_tournament_seed(tmp_path):
    config = load_config(tournament_file(tmp_path, seed=99))
    assert config.seed == 99 and config.for_players().seed is None
