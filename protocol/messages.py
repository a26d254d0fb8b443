"""The wire protocol between the referee and a bot: JSON lines, one message object per line.

Every message is an object with a ``"type"`` tag. SPEC.md documents each message and field;
``protocol/schema.json`` is the JSON Schema generated from these classes (a test keeps it fresh).
This module depends on msgspec only, so a Python bot can import it without the referee.

Compatibility rule: new fields get defaults, so older bots keep working. Messages from a bot are
checked strictly (unknown fields are rejected); a bot should ignore fields it does not know.
"""

from __future__ import annotations

from typing import Any

import msgspec

PROTOCOL_VERSION = 1


class Limits(msgspec.Struct, frozen=True, kw_only=True):
    """The time and size limits the referee enforces for this bot (milliseconds, bytes)."""

    startup_ms: int = 10000
    decision_ms: int = 1000
    bank_ms: int | None = None  # per-match time bank, None when not used
    increment_ms: int = 0  # added to the bank after each decision
    margin_ms: int = 50  # overruns within this margin are forgiven
    max_line_bytes: int = 1 << 20


class SeatInfo(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    name: str
    team: int | None = None


# -- referee -> bot -------------------------------------------------------------------------------


class Hello(msgspec.Struct, frozen=True, kw_only=True, tag="hello"):
    protocol: int
    name: str
    limits: Limits


class MatchStart(msgspec.Struct, frozen=True, kw_only=True, tag="match_start"):
    match_id: str
    game: str
    options: dict[str, Any]
    players: int
    seat: int
    seats: list[SeatInfo]


class Event(msgspec.Struct, frozen=True, kw_only=True, tag="event"):
    match_id: str
    event: dict[str, Any]


# gc=False: the referee builds one per decision, and it holds no cycle (its view and legal list
# hold plain values): untracked by the garbage collector it is made in about half the time.
class Request(msgspec.Struct, frozen=True, kw_only=True, tag="request", gc=False):
    match_id: str
    id: int
    decision: str
    view: dict[str, Any]
    legal: list[str]
    time_left_ms: int


class Fault(msgspec.Struct, frozen=True, kw_only=True, tag="fault"):
    """Tells a bot what it did wrong; the referee has already moved for it (autopilot)."""

    match_id: str
    id: int | None
    kind: str
    message: str
    forfeited: bool = False


class MatchEnd(msgspec.Struct, frozen=True, kw_only=True, tag="match_end"):
    match_id: str
    scores: list[int]
    placings: list[int]
    forfeited: list[int] = []
    reason: str = "completed"


class Bye(msgspec.Struct, frozen=True, kw_only=True, tag="bye"):
    pass


ToBot = Hello | MatchStart | Event | Request | Fault | MatchEnd | Bye


# -- bot -> referee -------------------------------------------------------------------------------


class Ready(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag="ready"):
    name: str
    version: str = ""


class Action(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag="action"):
    """The answer to a request: exactly one of ``action`` (as written in ``legal``) or its 0-based
    ``index``; the other is left out (``null`` is not allowed)."""

    id: int
    action: str | msgspec.UnsetType = msgspec.UNSET
    index: int | msgspec.UnsetType = msgspec.UNSET


FromBot = Ready | Action
