"""Keeping the referee's memory from bots of the same user (SPEC 7).

Its own module, with nothing but ctypes: the ``arena`` command calls it before anything else,
and must not import the referee's processes (trio and all) to do so."""

from __future__ import annotations

import ctypes

PR_SET_DUMPABLE = 4


def protect_referee() -> None:
    """Make this process non-dumpable, so that processes of the same user (bots run without the
    sandbox) cannot read its memory (every hand is there) or its environment through /proc or
    ptrace. Root keeps that power (CAP_SYS_PTRACE): run untrusted bots as an ordinary user or in
    the sandbox. Bots are not affected: exec makes a process dumpable again."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: nothing to protect this way
        pass
