"""The Trick Arena wire protocol (msgspec only; imports nothing from ``arena``)."""

from .messages import (
    PROTOCOL_VERSION,
    Action,
    Bye,
    Event,
    Fault,
    FromBot,
    Hello,
    Limits,
    MatchEnd,
    MatchStart,
    Ready,
    Request,
    SeatInfo,
    ToBot,
)

__all__ = [
    "PROTOCOL_VERSION",
    "Action",
    "Bye",
    "Event",
    "Fault",
    "FromBot",
    "Hello",
    "Limits",
    "MatchEnd",
    "MatchStart",
    "Ready",
    "Request",
    "SeatInfo",
    "ToBot",
]
