"""A person's match against a tournament's bots (``arena serve --allow-play``, SPEC.md 11).

The same match as ``arena play`` (arena.referee.person.play_person_match), with the tournament's
own bots started as the tournament starts them: its bot specs, each sealed from the others and
from the tournament's files, under its time control. The record goes to a folder of its own
beside the results (``played/``), never into the results file: a person's match is not a
tournament match.
"""

from __future__ import annotations

import random
import secrets
import time
from dataclasses import replace
from pathlib import Path

import trio

from arena.games import find_game
from arena.referee.bot_spec import BotSpec
from arena.referee.match import MatchStop, MatchStopped
from arena.referee.person import Person, play_person_match
from arena.referee.process import BotStartupError
from arena.referee.results import MatchResult
from arena.tournament.config import TournamentConfig
from arena.tournament.pool import hide_from_each_other

PERSON_NAME = "person"
PERSON_SEAT = 0


class PlayError(ValueError):
    """A person's match that cannot be made (an unknown game label or bot; one line)."""


def played_dir(config: TournamentConfig) -> Path:
    """Where persons' matches are recorded: ``played/`` beside the results file."""
    return config.results.parent / "played"


def person_seats(config: TournamentConfig, label: str, against: str | None) -> list[BotSpec]:
    """The bots at the other seats of ``label``'s table, sealed as the tournament seals them:
    ``against`` at every one of them, or (None) the tournament's bots drawn at random."""
    plan = next((g for g in config.games if g.label == label), None)
    if plan is None:
        raise PlayError(f"no game {label[:40]!r} in tournament {config.name!r}")
    specs = hide_from_each_other(config.bots, config.arena_files())
    others = plan.players - 1
    if against is not None:
        chosen = [s for s in specs if s.name == against]
        if not chosen:
            raise PlayError(f"no bot {against[:40]!r} in tournament {config.name!r}")
        chosen = chosen * others
    elif len(specs) >= others:
        chosen = random.sample(specs, others)
    else:
        chosen = [specs[i % len(specs)] for i in range(others)]
    taken = {PERSON_NAME}
    seats: list[BotSpec] = []
    for spec in chosen:  # one bot at two seats: two processes, with names of their own
        name, n = spec.name, 1
        while name in taken:
            n += 1
            name = f"{spec.name}-{n}"
        taken.add(name)
        seats.append(replace(spec, name=name))
    return seats


async def play_against_tournament(
    config: TournamentConfig,
    label: str,
    against: str | None,
    person: Person,
    stop: MatchStop,
) -> MatchResult:
    """Play one match of ``label`` with ``person`` at seat 0 and the tournament's bots at the
    others (see person_seats), recorded into played_dir; the bots are closed whatever happens.
    Raises PlayError, BotStartupError, or MatchStopped once ``stop`` is used."""
    bots = person_seats(config, label, against)
    plan = next(g for g in config.games if g.label == label)
    folder = played_dir(config)
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    record = folder / f"{stamp}-{label}-{secrets.token_hex(3)}.jsonl"
    outcome: MatchResult | MatchStopped | BotStartupError
    async with trio.open_nursery() as nursery:
        try:
            outcome = await play_person_match(
                find_game(plan.game_id),
                person,
                name=PERSON_NAME,
                seat=PERSON_SEAT,
                bots=bots,
                seed=secrets.randbits(63),
                options=plan.options,
                control=config.time_control,
                person_ms=None,
                record=record,
                log_dir=folder / "logs",
                stop=stop,
                nursery=nursery,
            )
        except (MatchStopped, BotStartupError) as error:
            outcome = error  # (raised out of the nursery, not wrapped in its group)
        nursery.cancel_scope.cancel()  # (the person's driver, once the match is over)
    if isinstance(outcome, Exception):
        raise outcome
    return outcome
