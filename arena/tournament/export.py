"""A results file as one JSON-lines file for outside analysis (``arena export``, SPEC 10.5):
one object per stored match of the current definition, in schedule order, with what a
program needs to study it: the game and its options, the seed, the seats and their bots, every
action taken (from the match's record), the scores, placings and faults.

A tournament whose secret seed is not revealed yet (SPEC 10.3) keeps its match seeds secret:
they are exported only once it has ended; before that the export refuses, or leaves them out
when asked to (``without_seeds``), and says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

import msgspec

from arena.referee.record import ReplayError, read_record
from arena.tournament.store import ResultStore, StoredMatch

EXPORT_FORMAT = 1
_encode = msgspec.json.Encoder().encode


class ExportError(Exception):
    """The export cannot be made as asked (one line)."""


@dataclass
class ExportSummary:
    matches: int = 0
    without_record: int = 0  # matches exported without actions (no record kept, or unreadable)
    seeds_left_out: bool = False


def seeds_are_secret(store: ResultStore) -> bool:
    """Whether the file's deals are still secret: a secret seed not yet revealed (SPEC 10.3)."""
    seal = store.seal()
    return seal.commitment is not None and seal.revealed is None


def export_matches(
    store: ResultStore, out: IO[bytes], *, without_seeds: bool = False
) -> ExportSummary:
    """Write one JSON line per stored match of the file's current definition to ``out``;
    ExportError, before anything is written, for secret seeds not to be left out."""
    secret = seeds_are_secret(store)
    if secret and not without_seeds:
        raise ExportError(
            f"{store.path}: its tournament has not ended, so its deals are still secret "
            "(SPEC 10.3) and every match seed would give them away: export it once it has "
            "ended, or give --without-seeds to leave the seeds out"
        )
    summary = ExportSummary(seeds_left_out=secret)
    definition = store.definition()
    games = {g.get("label"): g.get("game") for g in definition.get("games", [])}
    for line in _lines(store, games, secret, summary):
        out.write(line + b"\n")
    return summary


def _lines(
    store: ResultStore, games: dict[str, Any], secret: bool, summary: ExportSummary
) -> Iterator[bytes]:
    for match in store.matches(include_aborted=True):
        actions = _actions(match)
        summary.matches += 1
        if actions is None:
            summary.without_record += 1
        yield _encode(_as_data(match, games, None if secret else match.seed, actions))


def _as_data(
    match: StoredMatch,
    games: dict[str, Any],
    seed: int | None,
    actions: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    return {
        "format": EXPORT_FORMAT,
        "match_id": match.match_id,
        "game": games.get(match.game, match.game_id),
        "label": match.game,
        "options": match.options,
        "seed": None if seed is None else str(seed),  # (beyond JSON's safe integers)
        "players": match.players,
        "seats": list(match.bots),
        "teams": None if match.teams is None else list(match.teams),
        "status": match.status,
        "reason": match.reason,
        "scores": list(match.scores),
        "placings": list(match.placings),
        "forfeited": list(match.forfeited),
        "faults": [
            {
                "seat": f.seat,
                "bot": f.bot,
                "kind": f.kind,
                "request": f.request_id,
                "message": f.message,
            }
            for f in match.faults
        ],
        "actions": actions,
    }


def _actions(match: StoredMatch) -> list[dict[str, Any]] | None:
    """Every action of the match in order, ``{seat, action, by}``, from its record; None when
    the match has no record, or it cannot be read."""
    if match.record is None or not match.completed:
        return None
    try:
        entries = read_record(match.record)
    except (ReplayError, OSError):
        return None
    return [
        {"seat": e.get("seat"), "action": e.get("action"), "by": e.get("by")}
        for e in entries
        if e.get("type") == "action"
    ]
