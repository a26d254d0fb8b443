"""A match record drawn for the terminal: the deal, trick by trick, faults and the result.

Pure: a checked :class:`~arena.referee.record.Replay` in, rich renderables out.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from arena.referee.record import Replay


def _format_event(data: dict[str, Any], played_by: dict[str, int] | None = None) -> str:
    """One event as a line; a trick's cards are labelled with the seats that played them, taken
    from the trick's ``play`` events (``played_by``: card -> seat), never guessed from a direction."""
    kind = data.get("type", "?")
    if kind == "trick" and {"leader", "cards", "winner"} <= data.keys():
        played_by = played_by or {}
        shown = [
            f"{card} (seat {played_by[card]})" if card in played_by else str(card)
            for card in data["cards"]
        ]
        return f"trick: {', '.join(shown)} -> seat {data['winner']}"
    rest = ", ".join(f"{key}={value}" for key, value in data.items() if key != "type")
    return f"{kind}: {rest}" if rest else kind


def render_replay(replay: Replay, seat: int | None) -> Group:
    """The match as ``seat`` saw it (its events, its hand) or with all hands (seat None)."""
    header = replay.header
    names = ", ".join(f"{s['seat']}: {s['bot']}" for s in header["seats"])
    title = f"{header['game']} · {header['players']} players · seed {header['seed']}"
    parts: list[Any] = [
        Panel(
            f"seats {names}\noptions {header['options']}"
            + (f"\nas seen by seat {seat}" if seat is not None else "\nall hands shown"),
            title=title,
        )
    ]
    state = replay.spec.new_match(header["players"], header["options"], header["seed"])
    shown_events = 0
    lines: list[Text] = []

    def hands() -> None:
        if seat is None:
            all_hands = state.view(None).get("hands")
            if isinstance(all_hands, list):
                for n, hand in enumerate(all_hands):
                    lines.append(
                        Text(f"  hand of seat {n}: {' '.join(map(str, hand))}", style="cyan")
                    )
        else:
            hand = state.view(seat).get("hand")
            if isinstance(hand, list):
                lines.append(Text(f"  your hand: {' '.join(map(str, hand))}", style="cyan"))

    previous: dict[str, Any] = {}
    played_by: dict[str, int] = {}  # card -> seat, for the trick being played

    def flush_events() -> None:
        nonlocal shown_events, previous
        for event in state.events[shown_events:]:
            if seat is not None and not event.visible_to(seat):
                continue
            kind = event.data.get("type")
            if kind == "play":
                played_by[event.data["card"]] = event.data["seat"]
            if kind in ("play", "deal"):
                continue  # the trick line shows every card; the hands are shown above
            if seat is None and event.audience is not None:
                # Seen from above, the others' reduced copy of an event ("bid {seat}" after
                # "bid {seat, bid}") adds nothing.
                if previous.get("type") == kind and event.data.items() <= previous.items():
                    continue
                previous = event.data
            if kind in ("round_start", "hand_start", "deal_start"):
                lines.append(Text(_format_event(event.data), style="bold"))
                hands()
            elif kind == "trick":
                lines.append(Text(_format_event(event.data, played_by), style="green"))
                played_by.clear()
            else:
                lines.append(Text(_format_event(event.data)))
        shown_events = len(state.events)

    flush_events()
    for entry in replay.entries:
        if entry["type"] == "action":
            state.apply(entry["action"])
            if entry.get("by") == "autopilot":
                lines.append(
                    Text(
                        f"  (autopilot played {entry['action']} for seat {entry['seat']})",
                        style="magenta",
                    )
                )
            flush_events()
        elif entry["type"] == "fault" and (seat is None or entry["seat"] == seat):
            lines.append(Text(f"fault ({entry['kind']}): {entry['message']}", style="yellow"))
    parts.extend(lines)
    result = replay.result or {}
    table = Table(title="result")
    for column in ("seat", "bot", "score", "place", "note"):
        table.add_column(column)
    for s in header["seats"]:
        n = s["seat"]
        note = "forfeited" if n in result.get("forfeited", []) else ""
        table.add_row(
            str(n),
            s["bot"],
            str(result.get("scores", ["?"] * (n + 1))[n]),
            str(result.get("placings", ["?"] * (n + 1))[n]),
            note,
        )
    parts.append(table)
    return Group(*parts)
