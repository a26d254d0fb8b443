"""Time control: a per-decision limit, an optional per-match bank with increment, and a margin.

Pure arithmetic; the referee measures and this module decides. For each decision:

- ``allowed`` = ``decision_ms``, or with a bank ``min(decision_ms, bank left)``; the request tells
  the bot this number as ``time_left_ms``.
- The reply is in time when ``used <= allowed + margin_ms``. An overrun within the margin is
  forgiven and not carried over: the bank is charged at most ``allowed``.
- With a bank: ``bank -= min(used, allowed)``, then ``bank += increment_ms`` (also after a timeout,
  which is charged ``allowed``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True)
class TimeControl:
    decision_ms: int = 1000
    bank_ms: int | None = None
    increment_ms: int = 0
    margin_ms: int = 50
    startup_ms: int = 10000

    def __post_init__(self) -> None:
        for name in ("decision_ms", "increment_ms", "margin_ms", "startup_ms"):
            if getattr(self, name) < 0:
                raise ValueError(f"time control: {name} = {getattr(self, name)}: expected >= 0")
        if self.decision_ms == 0:
            raise ValueError("time control: decision_ms = 0: expected > 0")
        if self.bank_ms is not None and self.bank_ms < 0:
            raise ValueError(f"time control: bank_ms = {self.bank_ms}: expected >= 0")

    def as_dict(self) -> dict[str, int | None]:
        return {
            "decision_ms": self.decision_ms,
            "bank_ms": self.bank_ms,
            "increment_ms": self.increment_ms,
            "margin_ms": self.margin_ms,
            "startup_ms": self.startup_ms,
        }


class Charge(NamedTuple):  # one per decision: a NamedTuple builds ~1 us faster than a dataclass
    """What one decision cost: whether it was in time and what was taken from the bank."""

    in_time: bool
    used_ms: float
    allowed_ms: int
    charged_ms: int  # taken from the bank (0 without one)
    forgiven_ms: float  # overrun forgiven by the margin


class SeatClock:
    """One seat's clock for one match."""

    __slots__ = ("control", "bank_left_ms", "decision_ms", "margin_ms", "_in_time_limit_ms")

    def __init__(self, control: TimeControl) -> None:
        self.control = control
        self.decision_ms = control.decision_ms  # (read on each decision: no control.x lookup)
        self.bank_left_ms: int | None = control.bank_ms
        self.margin_ms = control.margin_ms
        # Without a bank every decision has the same limit: charge() checks it first.
        self._in_time_limit_ms = (
            control.decision_ms + control.margin_ms if control.bank_ms is None else -1.0
        )

    def allowed_ms(self) -> int:
        """The time this decision may take (sent to the bot as ``time_left_ms``)."""
        if self.bank_left_ms is None:
            return self.control.decision_ms
        return min(self.control.decision_ms, self.bank_left_ms)

    def deadline_ms(self) -> int:
        """After this long without a complete reply, the decision is a timeout."""
        return self.allowed_ms() + self.control.margin_ms

    def charged_in_time_ms(self, used_ms: float) -> int:
        """Book a decision answered in time (``used_ms`` within its limit): what the bank lost,
        0 without a bank (then nothing is booked, and no Charge is made: the referee's usual
        decision needs only this number)."""
        if self.bank_left_ms is None:
            return 0
        return self.charge(used_ms).charged_ms

    def charge(self, used_ms: float | None) -> Charge:
        """Book a decision that took ``used_ms`` (None: no reply in time)."""
        if used_ms is not None and used_ms <= self._in_time_limit_ms:
            # The usual case, no bank and in time: what the general case below gives.
            allowed = self.control.decision_ms
            return Charge(
                True, used_ms, allowed, 0, used_ms - allowed if used_ms > allowed else 0.0
            )
        allowed = self.allowed_ms()
        in_time = used_ms is not None and used_ms <= allowed + self.control.margin_ms
        if used_ms is None:
            used_ms = float(allowed + self.control.margin_ms)
        charged = allowed if not in_time else min(allowed, math.ceil(used_ms - 1e-6))
        forgiven = max(0.0, used_ms - allowed) if in_time else 0.0
        if self.bank_left_ms is not None:
            self.bank_left_ms = self.bank_left_ms - charged + self.control.increment_ms
        else:
            charged = 0
        return Charge(in_time, used_ms, allowed, charged, forgiven)
