"""What one seat is told, in words: the messages the referee writes to a seat (SPEC.md 4.1) as
short lines for a person at the table (``arena play``, SPEC.md 11).

Pure: a message in, lines of text out, each at most ``width`` characters. It reads only what the
seat was sent (its events, its view, its legal actions), so it can show no more than that seat
may know. Events of a kind it has no words for are shown as their fields.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

# Field names of a seat's view shown in the table's summary, in this order, with their label.
VIEW_FIELDS = (
    ("round", "round"),
    ("deal", "deal"),
    ("hand_number", "hand"),
    ("contract", "contract"),
    ("trump", "trump"),
    ("trump_card", "trump card"),
    ("kick", "kick"),
    ("bids", "bids"),
    ("declarations", "declared"),
    ("exchanged", "exchanged"),
    ("drops", "dropped"),
    ("tricks", "tricks"),
    ("tricks_won", "tricks (team)"),
    ("card_points", "card points (team)"),
    ("round_points", "this round"),
    ("team_scores", "team scores"),
    ("scores", "scores"),
)
DEAL_STARTS = ("round_start", "deal_start", "hand_start", "redeal")
DEAL_ENDS = ("round_end", "deal_end", "hand_end")


def _cards(cards: Sequence[Any]) -> str:
    return " ".join(map(str, cards)) if cards else "-"


def _values(values: Any) -> str:
    if isinstance(values, list):
        return " ".join("?" if v is None else str(v) for v in values)
    if isinstance(values, dict):  # e.g. the patience layout: a suit's row, low to high
        return "  ".join(
            f"{k} "
            + (
                "-"
                if v is None
                else "-".join(map(str, v.values()))
                if isinstance(v, dict)
                else str(v)
            )
            for k, v in values.items()
        )
    return str(values)


def others_move(message: dict[str, Any], seat: int | None) -> bool:
    """Whether a message tells of another seat's move or a trick's end: a person's table pauses
    after it, so the play can be followed one move at a time."""
    if message.get("type") != "event":
        return False
    event = message.get("event") or {}
    return event.get("type") == "trick" or event.get("seat", seat) != seat


class Narrator:
    """Tells one seat's messages as lines; remembers the seats' names from match_start."""

    def __init__(self, width: int = 80) -> None:
        self.width = width
        self.seat: int | None = None
        self.names: list[str] = []

    def who(self, seat: Any) -> str:
        if seat == self.seat:
            return "you"
        if isinstance(seat, int) and 0 <= seat < len(self.names):
            return f"{self.names[seat]} ({seat})"
        return f"seat {seat}"

    def wrap(self, text: str, indent: str = "") -> list[str]:
        return textwrap.wrap(text, self.width, subsequent_indent=indent or "  ") or [""]

    def lines(self, message: dict[str, Any]) -> list[str]:
        """A message as lines (a request's view and choices: :meth:`table` and :meth:`choices`)."""
        kind = message.get("type")
        if kind == "match_start":
            self.seat = message.get("seat")
            seats = message.get("seats") or []
            self.names = [str(s.get("name", "?")) for s in seats]
            teams = [s.get("team") for s in seats]
            listed = ", ".join(
                f"{s.get('seat')} {s.get('name')}"
                + ("" if s.get("team") is None else f" (team {s.get('team')})")
                for s in seats
            )
            out = self.wrap(f"{message.get('game')}: you are seat {self.seat}. Seats: {listed}")
            if any(team is not None for team in teams):
                out += self.wrap("Partners share a team's score.")
            return out
        if kind == "event":
            return self.event(message.get("event") or {})
        if kind == "fault":
            return self.wrap(f"fault ({message.get('kind')}): {message.get('message')}")
        if kind == "match_end":
            scores = message.get("scores") or []
            placings = message.get("placings") or []
            out = [f"Match over ({message.get('reason')})."]
            for seat, score in enumerate(scores):
                place = placings[seat] if seat < len(placings) else "?"
                out.append(f"  {self.who(seat)}: {score} points, place {place}")
            return out
        return []

    def event(self, data: dict[str, Any]) -> list[str]:
        kind = str(data.get("type", "?"))
        who = self.who(data.get("seat"))
        if kind in DEAL_STARTS:
            fields = ", ".join(f"{k} {v}" for k, v in data.items() if k != "type")
            return ["", f"== {kind.replace('_', ' ')}: {fields} =="[: self.width]]
        if kind == "deal":
            return self.wrap(f"dealt to {who}: {_cards(data.get('cards', []))}")
        if kind == "play":
            return [f"{who} played {data.get('card')}"]
        if kind == "trick":
            cards = _cards(data.get("cards", []))
            return self.wrap(
                f"trick ({cards}) won by {self.who(data.get('winner'))}"
                + (f", {data['points']} points" if "points" in data else "")
            )
        if kind == "bid":
            bid = data.get("bid", "(secret)")
            return [f"{who} bid {bid}"]
        if kind == "declare":
            return [f"{who} declared {data.get('declaration')}"]
        if kind == "trump":
            by = data.get("chosen_by", data.get("how"))
            card = f", card {data['card']}" if data.get("card") else ""
            chosen = f" ({self.who(by)})" if isinstance(by, int) else f" ({by})" if by else ""
            return [f"trump: {data.get('suit')}{card}{chosen}"]
        if kind == "exchange":
            out = [f"{who} exchanged {data.get('count')} cards"]
            if "discarded" in data:
                out += self.wrap(
                    f"  discarded {_cards(data['discarded'])}, drew {_cards(data.get('drawn', []))}"
                )
            return out
        if kind == "kick":
            points = (
                f", {data['points']} points to team {data.get('team')}"
                if data.get("points")
                else ""
            )
            return [f"kicked: {data.get('card')} (trump suit {data.get('suit')}){points}"]
        if kind == "award":
            return self.wrap(
                f"team {data.get('team')} scores {data.get('points')} for {data.get('reason')}"
                f" (teams: {_values(data.get('scores', []))})"
            )
        if kind in ("beg", "stand", "give", "run", "pass", "drop"):
            rest = ", ".join(f"{k} {v}" for k, v in data.items() if k not in ("type", "seat"))
            return [f"{who}: {kind}" + (f" ({rest})" if rest else "")]
        if kind in DEAL_ENDS or kind == "match_won":
            out = [f"-- {kind.replace('_', ' ')} --"]
            for key, value in data.items():
                if key != "type":
                    out += self.wrap(f"  {key}: {_values(value)}", "    ")
            return out
        rest = ", ".join(f"{k} {_values(v)}" for k, v in data.items() if k != "type")
        return self.wrap(f"{kind.replace('_', ' ')}: {rest}" if rest else kind)

    def table(self, view: dict[str, Any]) -> list[str]:
        """The seat's view as a short summary: the trick on the table, the fields players look
        at, then the seat's own hand."""
        out: list[str] = []
        trick = view.get("trick") or []
        if trick:
            shown = ", ".join(
                f"{self.who(p.get('seat'))} {p.get('card')}" if isinstance(p, dict) else str(p)
                for p in trick
            )
            out += self.wrap(f"on the table: {shown}")
        patience = view.get("patience")
        if isinstance(patience, dict):
            out += self.wrap(f"patience: {_values(patience)}")
        short, rows = [], []  # single values on one line, a value per seat on a line each
        for key, label in VIEW_FIELDS:
            value = view.get(key)
            if isinstance(value, list):
                if any(v not in (None, False, 0) for v in value) or key == "scores":
                    rows.append(f"{label}: {_values(value)}")
            elif value is not None:
                short.append(f"{label} {value}")
        out += self.wrap(" · ".join(short)) if short else []
        for row in rows:
            out += self.wrap(row)
        if "discarded" in view:
            out += self.wrap(f"you discarded: {_cards(view.get('discarded') or [])}")
        out += self.wrap(f"your hand: {_cards(view.get('hand') or [])}")
        return out

    def choices(self, decision: str, legal: Sequence[str]) -> list[str]:
        """The legal actions, numbered from 1, in columns that fit the width."""
        items = [f"{n}) {action}" for n, action in enumerate(legal, 1)]
        cell = max(len(item) for item in items) + 2 if items else 1
        columns = max(1, self.width // cell)
        out = [f"Your {decision}: type a number or the action"]
        for start in range(0, len(items), columns):
            out.append(
                "".join(item.ljust(cell) for item in items[start : start + columns]).rstrip()
            )
        return out


def pick(text: str, legal: Sequence[str]) -> str | None:
    """The action a person typed: a number from the list (from 1), the action itself, or the
    part after its ``:`` (``secret`` for ``declare:secret``), in any case; None if none fits."""
    typed = text.strip()
    if not typed:
        return None
    if typed.isdigit():
        number = int(typed)
        return legal[number - 1] if 1 <= number <= len(legal) else None
    lowered = typed.lower()
    for action in legal:
        if action.lower() == lowered:
            return action
    tails = [a for a in legal if a.lower().partition(":")[2] == lowered]
    return tails[0] if len(tails) == 1 else None
