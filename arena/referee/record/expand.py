"""A compact record (SPEC.md section 8) written out in full: the lines it holds, and between
them what the rules derive from its header and actions."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import msgspec

from arena.games import GameError, find_game
from arena.games.cards import Rng
from arena.referee.record.format import (
    COMPACT_MARK,
    HEADER_START,
    RecordingDealer,
    ReplayError,
    canonical_reply,
    decode_line,
    encoder,
    is_int,
    short,
)


def expand_compact(path: Path | str, data: bytes, partial: bool) -> bytes:
    """``data`` itself, or for a compact record (SPEC.md section 8) the full lines it stands for."""
    first = data.split(b"\n", 1)[0]
    if not first.endswith(COMPACT_MARK) or not first.startswith(HEADER_START):
        return data
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    elif partial:
        lines.pop()  # the cut line of a record still being written: the lines up to it
    return b"".join(line + b"\n" for line in _Expander(path).run(lines, partial))


class _Expander:
    """Writes out a compact record's lines in full: the lines it holds, and between them what the
    rules derive from its header and actions (the shuffles, the deal, every event, each ordinary
    decision's request, reply and action), in the order the referee writes a full record."""

    def __init__(self, path: Path | str) -> None:
        self.path = path
        self.out: list[bytes] = []
        self.number = 1

    def fail(self, message: str) -> NoReturn:
        raise ReplayError(f"{self.path} line {self.number}: {message} (a compact record)")

    def emit(self, entry: dict[str, Any]) -> None:
        self.out.append(encoder.encode(entry))

    def run(self, lines: list[bytes], partial: bool = False) -> list[bytes]:
        header = lines[0]
        self.out.append(header[: -len(COMPACT_MARK)] + b"}")
        try:
            fields = decode_line(header)
            self.format = fields["format"]
            self.banked = fields["time_control"]["bank_ms"] is not None
            # each seat's limit per decision: the match's, or its own (a person's, SPEC 11)
            match_ms = fields["time_control"]["decision_ms"]
            self.decision_ms = [s.get("decision_ms", match_ms) for s in fields["seats"]]
            spec = find_game(fields["game"])
            self.dealer = RecordingDealer(Rng(fields["seed"]))
            self.state = spec.new_match(
                fields["players"],
                spec.resolve_options(fields["options"]),
                fields["seed"],
                self.dealer,
            )
        except (
            msgspec.DecodeError,
            AttributeError,
            KeyError,
            TypeError,
            ValueError,
            GameError,
        ) as error:
            self.fail(f"the header cannot start the match: {error}")
        self.dealer.watch(self.state.events)
        self.shuffles = 0
        self.kept_shuffles = 0  # the record's shuffle lines read so far
        self.routed = 0
        self.started = False  # the events of the deal routed (after any startup fault)
        self.last_ids: dict[Any, Any] = {}  # each seat's latest request id (a short array's id)
        self.emit_shuffles(0)
        self.emit({"type": "deal", "view": self.state.view(None)})
        for self.number, line in enumerate(lines[1:], 2):
            try:
                value = decode_line(line)
            except msgspec.DecodeError as error:
                self.fail(f"not JSON: {error}")
            try:
                self.line(value, line)
            except (GameError, KeyError, TypeError, ValueError, IndexError) as error:
                self.fail(f"the rules cannot follow it: {error}")
        if not partial:
            self.number = len(lines) + 1
            self.owe_no_shuffle()
        return self.out

    def owe_no_shuffle(self) -> None:
        """Every shuffle the rules made so far has its line already: a compact record keeps each
        one right after the line of the action that led to it (the first deal's after the
        header), so a line of anything else may not come while one is owed."""
        if self.kept_shuffles < len(self.dealer.decks):
            self.fail(
                f"shuffle {self.kept_shuffles + 1}'s line is missing (it comes right after the "
                "line that led to it)"
            )

    def line(self, value: Any, raw: bytes) -> None:
        if isinstance(value, dict) and value.get("type") == "shuffle":
            # Kept for readers without the rules; derived here too, and each must be there.
            n = value.get("n")
            if not (is_int(n) and n == self.kept_shuffles + 1 <= len(self.dealer.decks)):
                self.fail(
                    f"shuffle {short(n)} where the rules have shuffled "
                    f"{len(self.dealer.decks)} times and the record kept {self.kept_shuffles}"
                )
            if value.get("cards") != self.dealer.decks[n - 1]:
                self.fail(f"shuffle {n} differs from the rules' (seed and dealing order)")
            self.kept_shuffles = n
            if n > self.shuffles:
                self.start()
            return
        self.owe_no_shuffle()
        if isinstance(value, dict):
            kind = value.get("type")
            if kind != "fault" or self.started:
                self.start()
            if kind not in (
                "fault",
                "request",
                "reply",
                "autopilot",
                "action",
                "result",
                "stopped",
            ):
                self.fail(f"a {short(kind)} line")
            self.out.append(raw)
            if kind == "request":
                self.last_ids[value.get("seat")] = value.get("id")
            elif kind == "action":
                self.state.apply(value["action"])
                self.route()
            return
        if not isinstance(value, list) or len(value) not in (2, 7):
            self.fail(f"expected an object or a decision array, got {short(value)}")
        self.start()
        state = self.state
        if len(value) == 2 and not isinstance(value[1], str) and self.format >= 3:
            value = self.short_decision(value)
        seat, action = value[0], value[-1]
        if seat != state.mover:
            self.fail(f"a decision of seat {short(seat)}, but seat {state.mover} is to move")
        legal = state.legal_actions()
        if len(value) == 2:
            self.emit(
                {"type": "autopilot", "seat": seat, "decision": state.decision, "legal": legal}
            )
            self.emit(
                {"type": "action", "seat": seat, "action": action, "by": "autopilot", "id": None}
            )
        else:
            _, request_id, time_left, ms, charged, text, _ = value
            self.last_ids[seat] = request_id
            if self.format != 1:
                ms, charged = self.format2(value)
            self.emit(
                {
                    "type": "request",
                    "seat": seat,
                    "id": request_id,
                    "decision": state.decision,
                    "legal": legal,
                    "time_left_ms": time_left,
                }
            )
            self.emit(
                {
                    "type": "reply",
                    "seat": seat,
                    "id": request_id,
                    "ms": ms,
                    "pending": request_id,
                    "charged_ms": charged,
                    "text": text,
                    "verdict": "ok",
                }
            )
            self.emit(
                {"type": "action", "seat": seat, "action": action, "by": "bot", "id": request_id}
            )
        state.apply(action)
        self.route()

    def short_decision(self, value: list) -> list:
        """A short array ``[us, index]`` (format 3) as the decision array it stands for:
        ``[seat, id, time_left_ms, us, charged_ms, text, action]`` (SPEC.md section 8)."""
        us, index = value
        state = self.state
        seat, legal = state.mover, state.legal_actions()
        if not (is_int(index) and 0 <= index < len(legal)):
            self.fail(f"a decision's index {short(index)}; expected 0 to {len(legal) - 1}")
        if self.banked:
            self.fail("a short decision array in a match with a bank of time")
        last_id = self.last_ids.get(seat)
        if not is_int(last_id):
            self.fail(f"a short decision array of seat {seat}, which had no request before it")
        request_id = last_id + 1
        text = canonical_reply(request_id, index)
        return [seat, request_id, self.decision_ms[seat], us, 0, text, legal[index]]

    def format2(self, value: list) -> tuple[float, int | None]:
        """A format-2 decision array's ``ms`` and ``charged_ms`` as the full reply line has them
        (SPEC.md section 8): whole microseconds to ms, and the charge null without a bank."""
        us, charged = value[3], value[4]
        if not is_int(us) or us < 0:
            self.fail(f"a decision's time {short(us)}; expected whole microseconds")
        if not self.banked and charged != 0:
            self.fail(f"a decision's charge {short(charged)}; expected 0 (no bank of time)")
        return us / 1000, charged if self.banked else None

    def start(self) -> None:
        if not self.started:
            self.started = True
            self.route()

    def emit_shuffles(self, before_event: int) -> None:
        decks, marks = self.dealer.decks, self.dealer.marks
        while self.shuffles < len(decks) and marks[self.shuffles] <= before_event:
            self.emit({"type": "shuffle", "n": self.shuffles + 1, "cards": decks[self.shuffles]})
            self.shuffles += 1

    def route(self) -> None:
        """The lines of the events since the last action, as run_match writes them."""
        events = self.state.events
        for n in range(self.routed, len(events)):
            self.emit_shuffles(n)
            event = events[n]
            audience = None if event.audience is None else list(event.audience)
            self.emit({"type": "event", "n": n, "audience": audience, "data": event.data})
        self.routed = len(events)
        self.emit_shuffles(len(events))
