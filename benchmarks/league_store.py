"""The league store's queries on a big league: the version page and the next deal-set.

    python3 benchmarks/league_store.py [--matches 50000] [--versions 30] [--repeat 5]

Builds a synthetic league store (versions of ten authors, deal-sets of a 3-seat game, every
rotation stored, random placings), then times, median of ``--repeat``:

- a version's matches (what the version page reads) and its latest 20 (``/api/matches?version=N``):
  every match read and filtered (before: the scan) against ``LeagueStore.matches_of`` (after:
  the seats index);
- the matchmaker's counts of the game (deal-sets per version, meetings per pair): every deal-set
  read and counted (before) against ``LeagueStore.seatings`` (after: the counts kept);
- ``League.next_dealset`` as it is now, whole (the ladder's fold warm, as on a running server;
  it writes the deal-set it picks).
"""

from __future__ import annotations

import itertools
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from arena.league.config import league_from_table
from arena.league.league import League
from arena.league.store import LeagueStore
from arena.tournament.schedule import rotate
from arena.tournament.store import StoredMatch
from benchmarks import common

PLAYERS = 3


def build(path: Path, matches: int, versions: int, seed: int = 1) -> None:
    """A league store of ``matches`` stored matches (deal-sets of PLAYERS rotations)."""
    rng = random.Random(seed)
    store = LeagueStore.open(path, name="bench")
    authors = [store.add_author(f"author{i}", f"token-{i}") for i in range(10)]
    field = [
        store.add_version(authors[i % 10].id, "bot", status="active", log="")
        for i in range(versions)
    ]
    for _ in range(matches // PLAYERS):
        table = rng.sample(field, PLAYERS)
        dealset = store.add_dealset("g", rng.getrandbits(63), [v.id for v in table])
        for rotation in range(PLAYERS):
            placings = rng.sample(range(1, PLAYERS + 1), PLAYERS)
            store.save_match(
                dealset.id,
                rotation,
                StoredMatch(
                    match_id=f"g/s{dealset.id}/r{rotation}",
                    game="g",
                    game_id="eight-rounds",
                    table=dealset.id,
                    deal=dealset.id,
                    rotation=rotation,
                    seed=0,
                    players=PLAYERS,
                    options={},
                    bots=rotate(tuple(v.label for v in table), rotation),
                    scores=tuple(PLAYERS - p for p in placings),
                    placings=tuple(placings),
                    teams=None,
                    forfeited=(),
                    faults=(),
                    decision_ms=((1.0,),) * PLAYERS,
                ),
            )
    store.close()


def median_ms(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        begun = time.perf_counter()
        run()
        times.append(time.perf_counter() - begun)
    return statistics.median(times) * 1000


def scanned_matches(store: LeagueStore, label: str) -> list[StoredMatch]:
    return [m for m in store.matches() if label in m.bots]


def scanned_seatings(store: LeagueStore, game: str) -> tuple[Counter[int], Counter[frozenset]]:
    seated: Counter[int] = Counter()
    met: Counter[frozenset] = Counter()
    for seats in store.dealset_seats(game):
        seated.update(set(seats))
        for a, b in itertools.combinations(sorted(set(seats)), 2):
            met[frozenset((a, b))] += 1
    return seated, met


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--matches", type=int, default=50_000)
    parser.add_argument("--versions", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--folder",
        default="/dev/shm" if Path("/dev/shm").is_dir() else None,
        help="where the store is built (default /dev/shm: in memory, so that building it does "
        "not wait on the disk for every match's commit)",
    )
    args = common.parse(parser, smoke={"matches": 600, "versions": 8, "repeat": 1})
    with common.scratch(where=args.folder) as folder:
        begun = time.perf_counter()
        build(folder / "data" / "league.sqlite", args.matches, args.versions)
        built_s = time.perf_counter() - begun
        config = league_from_table(
            {"folder": "data", "games": [{"game": "eight-rounds", "label": "g", "players": 3}]},
            source="bench.toml",
            base=folder,
        )
        store = LeagueStore.open(config.store_path, name="bench")
        league = League(config, store)
        version = store.versions()[0]
        assert store.matches_of(version.id) == scanned_matches(store, version.label)
        assert tuple(map(Counter, store.seatings("g"))) == scanned_seatings(store, "g")
        league.standings()  # (the fold is warm on a running server)
        rows = [
            [
                "a version's matches",
                f"{median_ms(lambda: scanned_matches(store, version.label), args.repeat):.1f}",
                f"{median_ms(lambda: store.matches_of(version.id), args.repeat):.1f}",
            ],
            [
                "a version's latest 20 (/api/matches)",
                f"{median_ms(lambda: scanned_matches(store, version.label)[-20:], args.repeat):.1f}",
                f"{median_ms(lambda: store.matches_of(version.id, latest=20), args.repeat):.1f}",
            ],
            [
                "the matchmaker's counts",
                f"{median_ms(lambda: scanned_seatings(store, 'g'), args.repeat):.1f}",
                f"{median_ms(lambda: store.seatings('g'), args.repeat):.1f}",
            ],
            [
                "League.next_dealset, whole",
                None,
                f"{median_ms(league.next_dealset, args.repeat):.1f}",
            ],
        ]
        store.close()
    print(
        f"a league store of {args.matches} matches, {args.versions} versions "
        f"(built in {built_s:.1f} s); ms, median of {args.repeat}"
    )
    common.table(["query", "before (scan)", "after (index)"], rows)


if __name__ == "__main__":
    main()
