"""Waiting in tests for what a real process does: poll for the event, with a generous ceiling
(the machine is shared: what takes a second may take many), never a fixed sleep."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

WAIT_S = 240.0  # a generous ceiling for what takes seconds


def wait_for(what: str, condition: Callable[[], T], timeout: float = WAIT_S) -> T:
    """Poll ``condition()`` until it is truthy and give its value; fail naming ``what`` after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"waited {timeout:g}s for {what}"
        time.sleep(0.1)
