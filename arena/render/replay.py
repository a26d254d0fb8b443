"""A match record drawn for the terminal: the deal, trick by trick, faults and the result.

Pure: a checked :class:`~arena.referee.record.Replay` in, rich renderables out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from arena.games.core import Event
from arena.referee.lines import printable
from arena.referee.record import Replay
from arena.tournament.store import StoredMatch

if TYPE_CHECKING:  # (the re-ask's module starts processes: imported only where it runs)
    from arena.referee.reask import Answer, Session


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


def _decision_line(
    request: dict[str, Any], action: dict[str, Any], ms: float | None, bot: str, number: int
) -> str:
    """One decision: who, the seat's decision number (``#N``, what ``--ask N`` takes; 0 for the
    autopilot's, which asks nothing), what kind, the legal actions, the choice and its time."""
    legal = request.get("legal", [])
    shown = " ".join(map(str, legal)) if len(legal) <= 40 else f"{len(legal)} actions"
    who = f"seat {action['seat']} ({bot})"
    if action.get("by") == "autopilot":
        took = "autopilot"
    elif ms is None:
        took = "no reply in time"
    else:
        took = f"{ms:.2f} ms"
        if request.get("time_left_ms") is not None:
            took += f" of {request['time_left_ms']} ms"
    numbered = f"#{number} " if number else ""
    return (
        f"  {numbered}{who} {request.get('decision', '?')} [{shown}] -> {action['action']} ({took})"
    )


def stderr_lines(text: str, indent: str, label: str = "stderr") -> list[Text]:
    """A decision's stderr (SPEC.md 8) as lines under it: ``stderr | ...``, made printable."""
    return [Text(f"{indent}{label} | {printable(line)}", style="dim") for line in text.splitlines()]


def render_replay(replay: Replay, seat: int | None, decisions: bool = False) -> Group:
    """The match as ``seat`` saw it (its events, every card it was dealt) or with all hands (seat
    None); ``decisions``: each decision's legal actions, choice and time (only ``seat``'s when
    given: the others' legal actions would show their hands)."""
    header = replay.header
    names = ", ".join(f"{s['seat']}: {s['bot']}" for s in header["seats"])
    title = f"{header['game']} · {header['players']} players · seed {header['seed']}"
    parts: list[Any] = [
        Panel.fit(
            f"seats {names}\noptions {header['options']}"
            + (f"\nas seen by seat {seat}" if seat is not None else "\nall hands shown"),
            title=title,
        )
    ]
    state = replay.spec.new_match(header["players"], header["options"], header["seed"])
    bots = {s["seat"]: s["bot"] for s in header["seats"]}
    shown_events = 0
    lines: list[Text] = []

    def dealt(event: dict[str, Any]) -> None:
        """Every card a seat receives, each deal of a round (later deals, runs) included."""
        cards = " ".join(map(str, event.get("cards", [])))
        to = "you" if seat is not None else f"seat {event.get('seat')}"
        lines.append(Text(f"  dealt to {to}: {cards}", style="cyan"))

    previous: dict[str, Any] = {}
    played_by: dict[str, int] = {}  # card -> seat, for the trick being played

    def flush_events(decision: str = "") -> None:
        """The lines of the events not shown yet; ``decision``: the kind of the decision whose
        action led to them (a card played by a ``play`` decision goes to a trick)."""
        nonlocal shown_events, previous
        for event in state.events[shown_events:]:
            if seat is not None and not event.visible_to(seat):
                continue
            kind = event.data.get("type")
            if kind == "play" and decision == "play":
                played_by[event.data["card"]] = event.data["seat"]
                continue  # the trick line shows every card
            if kind == "deal":
                dealt(event.data)
                continue
            if seat is None and event.audience is not None:
                # Seen from above, the others' reduced copy of an event ("bid {seat}" after
                # "bid {seat, bid}") adds nothing.
                if previous.get("type") == kind and event.data.items() <= previous.items():
                    continue
                previous = event.data
            if kind in state.DEAL_STARTS:
                lines.append(Text(_format_event(event.data), style="bold"))
            elif kind == "trick":
                lines.append(Text(_format_event(event.data, played_by), style="green"))
                played_by.clear()
            else:
                lines.append(Text(_format_event(event.data)))
        shown_events = len(state.events)

    flush_events()
    requests: dict[int, dict[str, Any]] = {}  # seat -> its pending request (or autopilot line)
    reply_ms: dict[tuple[int, int | None], float] = {}  # (seat, request id) -> its ok reply's ms
    asked = [0] * header["players"]  # per seat, the requests it was sent so far
    said: dict[tuple[int, int | None], str] = {}  # (seat, request id) -> its stderr (SPEC 8)
    for entry in replay.entries:
        kind = entry["type"]
        if kind in ("request", "autopilot"):
            requests[entry["seat"]] = entry
            if kind == "request":
                asked[entry["seat"]] += 1
        elif kind == "reply":
            if entry.get("verdict") == "ok" and entry.get("ms") is not None:
                reply_ms[(entry["seat"], entry.get("id"))] = entry["ms"]
            if isinstance(entry.get("stderr"), str):  # (records before it have none)
                said[(entry["seat"], entry.get("pending"))] = entry["stderr"]
        if entry["type"] == "action":
            mover = entry["seat"]
            if decisions and (seat is None or mover == seat) and mover in requests:
                ms = reply_ms.get((mover, entry.get("id"))) if entry.get("id") is not None else None
                number = asked[mover] if requests[mover]["type"] == "request" else 0
                line = _decision_line(requests[mover], entry, ms, bots.get(mover, "?"), number)
                lines.append(Text(line, style="dim" if entry.get("by") == "autopilot" else ""))
                lines.extend(stderr_lines(said.pop((mover, entry.get("id")), ""), "    "))
            decision = state.decision
            state.apply(entry["action"])
            if entry.get("by") == "autopilot":
                lines.append(
                    Text(
                        f"  (autopilot played {entry['action']} for seat {entry['seat']})",
                        style="magenta",
                    )
                )
            flush_events(decision)
        elif entry["type"] == "fault" and (seat is None or entry["seat"] == seat):
            message = printable(str(entry["message"]))  # (a record may quote a bot's stderr)
            lines.append(Text(f"  fault ({entry['kind']}): {message}", style="yellow"))
    parts.extend(lines)
    if replay.stopped is not None:
        parts.append(Text(f"stopped before its end: {printable(replay.stopped)}", style="bold"))
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


def dealt_hands(
    events: Sequence[Event], starts: Sequence[str]
) -> list[tuple[str, list[list[list[str]]]]]:
    """Every deal of a match, in order: its name (``round 3``, ``hand 2``, ``redeal``: the type of
    the event that started it, one of ``starts``, the game's DEAL_STARTS, with its number) and,
    per seat, the packets of cards dealt to it (Vingt-down's 2 then 3 cards, All Fours' runs).
    No ``starts``: the match is one deal."""
    deals: list[tuple[str, list[list[list[str]]]]] = [] if starts else [("deal", [])]
    for event in events:
        data = event.data
        kind = str(data.get("type"))
        if kind in starts:
            number = next((data[key] for key in ("round", "deal", "hand") if key in data), "")
            deals.append((f"{kind.removesuffix('_start')} {number}".strip(), []))
        elif kind == "deal" and deals and isinstance(data.get("seat"), int):
            hands = deals[-1][1]
            hands.extend([] for _ in range(data["seat"] + 1 - len(hands)))
            hands[data["seat"]].append([str(card) for card in data.get("cards", [])])
    return deals


def render_deal(
    replay: Replay, rotations: Sequence[StoredMatch], width: int | None = None
) -> Table:
    """The deal of ``replay`` in every rotation stored: one row per seat's cards (every deal of
    the match: the cards dealt to that seat, packet by packet), one column per rotation: who held
    those cards and what they scored (the duplicate comparison, SPEC.md 10.3)."""
    deals = dealt_hands(replay.state.events, replay.state.DEAL_STARTS)
    this = replay.header.get("match_id")
    table = Table(
        title=f"the same deal in {len(rotations)} rotations (score, place; * = this record)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("seat's cards, deal by deal", overflow="fold")
    for match in rotations:
        mark = "*" if match.match_id == this else ""
        table.add_column(f"r{match.rotation}{mark}", no_wrap=True)
    for seat in range(replay.header["players"]):
        held = []
        for name, hands in deals:
            packets = hands[seat] if seat < len(hands) else []
            held.append(f"{name}: {' + '.join(' '.join(packet) for packet in packets) or '-'}")
        cells = [f"{seat}: " + "\n   ".join(held or ["?"])]
        for match in rotations:
            forfeit = " forfeit" if seat in match.forfeited else ""
            cells.append(
                f"{match.bots[seat]}\n{match.scores[seat]}, {match.placings[seat]}{forfeit}"
            )
        table.add_row(*cells)
    return table


def _answer_lines(answer: Answer) -> list[Text]:
    """One re-asked decision: what it was, the legal actions, the recorded and the new answer,
    and the bot's stderr meanwhile."""
    question = answer.question
    legal = question.legal
    shown = " ".join(legal) if len(legal) <= 40 else f"{len(legal)} actions"
    recorded = question.recorded + (" (autopilot)" if question.recorded_by == "autopilot" else "")
    if answer.fault is not None:
        now = f"fault ({answer.fault}): {printable(answer.reason)}"
    else:
        now = (
            f"{answer.action} ({answer.ms:.2f} ms)" if answer.ms is not None else str(answer.action)
        )
    mark = "differs" if answer.differs else "same"
    lines = [
        Text(
            f"decision {question.number} (request {question.request_id}, {question.decision}, "
            f"{question.time_left_ms} ms allowed)",
            style="bold",
        ),
        Text(f"  legal     {shown}"),
        Text(f"  recorded  {recorded}"),
        Text(f"  now       {now}  [{mark}]", style="yellow" if answer.differs else "green"),
    ]
    lines.extend(stderr_lines(question.recorded_stderr, "  ", "stderr then"))
    lines.extend(stderr_lines(answer.stderr, "  ", "stderr now ") or [Text("  stderr now: none")])
    return lines


def render_asked(session: Session, bot: str, every: bool) -> Group:
    """The answers of a re-ask (``arena replay --ask``): each asked decision, or with ``every``
    only those answered differently, under a line that counts them."""
    talk = session.conversation
    asked = len(session.answers)
    shown = [a for a in session.answers if a.differs] if every else session.answers
    who = f"seat {talk.seat} ({talk.name})"
    if every:
        count = f"{len(shown)} of {asked}" if len(shown) else f"none of the {asked}"
        title = f"{bot} changes {count} decisions of {who} in this match"
        title += "; here they are" if shown else ""
    else:
        title = f"{bot} asked again at {asked} decision{'s' if asked != 1 else ''} of {who}"
    parts: list[Any] = [Text(title, style="bold")]
    for answer in shown:
        parts.extend(_answer_lines(answer))
    if session.stopped:
        parts.append(Text(f"stopped: {printable(session.stopped)}", style="red"))
    return Group(*parts)
