"""A match record as the match page's data: the deal, then one frame per decision.

Pure: record entries in, JSON-ready dicts out. The frames are derived by replaying the actions
through the rules engine (never by trusting the record's own copies of views or events), so the
page shows exactly what the rules say each seat could see:

- ``seat=None``: everything (every hand, every event, every decision);
- ``seat=k``: what seat k saw: ``view(k)``, the events whose audience holds k, its own decisions
  in full; of another seat's decision only who decided, what kind, how long it took and a fault's
  kind (its legal actions, choice, reply text and fault message could name hidden cards).

A record that is still being written (a running match) gives the frames played so far.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from arena.games import GameSpec, GameState, find_game
from arena.games.cards import Dealer, Rng
from arena.referee.record import ReplayError, read_record

_encoder = msgspec.json.Encoder()


class MatchViewError(Exception):
    """A record that cannot be shown; one line naming the file and why."""


def read_entries(
    path: Path, *, partial: bool, at: int | None = None, length: int | None = None
) -> list[dict[str, Any]]:
    """A record's entries (the record package's one reader, read_record): the file ``path``, or
    the gzip member at byte ``at`` of a records file (``length`` bytes; None: up to the end).
    ``partial``: a record still being written, whose last line may be cut off mid-write (it is
    dropped); otherwise every line must be JSON."""
    try:
        return read_record(Path(path), at=at, length=length, partial=partial)
    except ReplayError as error:
        raise MatchViewError(str(error)) from None


def _plain(data: Any) -> Any:
    """``data`` as it reads back from JSON (tuples become lists)."""
    return msgspec.json.decode(_encoder.encode(data))


def _new_state(header: Mapping[str, Any]) -> tuple[GameSpec, GameState]:
    try:
        spec = find_game(str(header["game"]))
        seed = int(header["seed"])
        state = spec.new_match(int(header["players"]), header["options"], seed, Dealer(Rng(seed)))
    except Exception as error:  # a bad header of any kind is one message, not a traceback
        raise MatchViewError(f"the record's header cannot start a match: {error}") from None
    return spec, state


def match_frames(entries: Sequence[Mapping[str, Any]], seat: int | None) -> dict[str, Any]:
    """The match page's data for ``seat`` (None: all hands) from a record's entries."""
    header = entries[0]
    spec, state = _new_state(header)
    if seat is not None and not (0 <= seat < state.players):
        raise MatchViewError(f"seat {seat}: the match has seats 0 to {state.players - 1}")
    shown = 0

    def view() -> Any:
        return _plain(state.view(seat))

    def new_events() -> list[dict[str, Any]]:
        nonlocal shown
        out = []
        for event in state.events[shown:]:
            if seat is None or event.visible_to(seat):
                item = dict(_plain(event.data))
                if seat is None and event.audience is not None:
                    item["_audience"] = list(event.audience)
                out.append(item)
        shown = len(state.events)
        return out

    frames: list[dict[str, Any]] = [
        {"index": 0, "decision": None, "events": new_events(), "view": view()}
    ]
    pending: dict[str, Any] | None = None  # the decision being made: its request and replies
    asked = [0] * state.players  # per seat, the requests it was sent (its decisions' numbers)
    ms_of: dict[tuple[Any, Any], float] = {}  # (seat, request id) -> ms of its accepted reply
    loose_faults: list[dict[str, Any]] = []  # faults outside a decision (e.g. a late stale reply)
    for entry in entries[1:]:
        kind = entry["type"]
        if kind in ("request", "autopilot"):
            number = None
            if kind == "request" and isinstance(entry.get("seat"), int):
                if 0 <= entry["seat"] < state.players:
                    asked[entry["seat"]] += 1
                    number = asked[entry["seat"]]
            pending = {
                "number": number,
                "seat": entry.get("seat"),
                "decision": entry.get("decision"),
                "legal": entry.get("legal"),
                "id": entry.get("id"),
                "time_left_ms": entry.get("time_left_ms"),
                "faults": [],
                "replies": [],
            }
        elif kind == "reply":
            if entry.get("verdict") == "ok" and entry.get("ms") is not None:
                ms_of[(entry.get("seat", -1), entry.get("pending", -1))] = entry["ms"]
            if pending is not None:
                pending["replies"].append(
                    {
                        "seat": entry.get("seat"),
                        "ms": entry.get("ms"),
                        "verdict": entry.get("verdict"),
                        "text": entry.get("text"),
                        # what the bot wrote to stderr meanwhile (SPEC 8; older records: none)
                        "stderr": entry.get("stderr"),
                    }
                )
        elif kind == "fault":
            fault = {
                "seat": entry.get("seat"),
                "bot": entry.get("bot"),
                "kind": entry.get("kind"),
                "message": entry.get("message"),
                "forfeited": entry.get("forfeited"),
            }
            (pending["faults"] if pending is not None else loose_faults).append(fault)
        elif kind == "action":
            acting = entry.get("seat")
            action = entry.get("action")
            if acting != state.seat_to_move or action not in state.legal_actions():
                break  # not what the rules allow: show the match up to here
            legal = list(state.legal_actions())
            decision = state.decision
            state.apply(action)
            info = pending or {"faults": [], "replies": []}
            faults = loose_faults + info["faults"]
            loose_faults = []
            request_id = entry.get("id")
            ms = None if request_id is None else ms_of.get((acting, request_id))
            own = seat is None or acting == seat
            frames.append(
                {
                    "index": len(frames),
                    "decision": {
                        "seat": acting,
                        "decision": decision,
                        "by": entry.get("by", "bot"),
                        # the seat's decision number (#N of replay --decisions, --ask N)
                        "number": info.get("number"),
                        "ms": ms,
                        "legal": legal if own else None,
                        "action": action if own else None,
                        "replies": info["replies"] if own else [],
                        "faults": [
                            f
                            if seat is None or f["seat"] == seat
                            else {"seat": f["seat"], "kind": f["kind"]}
                            for f in faults
                        ],
                    },
                    "events": new_events(),
                    "view": view(),
                }
            )
            pending = None
    result = next((e for e in entries if e["type"] == "result"), None)
    seats = header.get("seats") or []
    return {
        "match_id": header.get("match_id"),
        "game": spec.id,
        "game_name": spec.name if hasattr(spec, "name") else spec.id,
        "players": state.players,
        "options": _plain(state.options),
        "scoring_events": list(state.SCORING_EVENTS),
        "seats": [
            {"seat": s.get("seat"), "bot": s.get("bot"), "team": s.get("team")}
            for s in seats
            if isinstance(s, dict)
        ],
        "seat": seat,
        "over": state.is_over,
        "frames": frames,
        "result": None
        if result is None
        else {
            key: result.get(key)
            for key in ("scores", "placings", "game_placings", "teams", "forfeited", "termination")
        },
    }


def first_deal(
    game_id: str, players: int, options: Mapping[str, Any], seed: int
) -> list[list[str]] | None:
    """Every seat's cards of the first deal, from the seed alone (no record needed): the cards
    dealt (``deal`` events) before the first card is played or the deal ends (the game's
    DEAL_ENDS). Where the deal comes in parts with decisions between them (Vingt-down's trump
    choice), the rules are stepped with the first legal action: what is dealt does not depend on
    it, the seed alone decides the cards."""
    spec = find_game(game_id)
    state = spec.new_match(players, options, seed, Dealer(Rng(seed)))
    hands: list[list[str]] = [[] for _ in range(players)]
    seen = 0
    for _ in range(200):
        for event in state.events[seen:]:
            kind = event.data.get("type")
            if kind == "play" or kind in state.DEAL_ENDS:
                return [sorted_like(hand, state) for hand in hands]
            if kind == "deal" and isinstance(event.data.get("seat"), int):
                hands[event.data["seat"]].extend(event.data.get("cards", []))
        seen = len(state.events)
        if state.is_over:
            break
        state.apply(state.legal_actions()[0])
    return [sorted_like(hand, state) for hand in hands]


def sorted_like(cards: list[str], state: GameState) -> list[str]:
    """Cards in the deck's canonical order (suit by suit, ranks ascending)."""
    order = state.DECK.order
    return sorted(cards, key=lambda card: order.get(card, len(order)))
