"""Insists that a request has exactly the fields it knows (a later protocol may add more)."""

from _base import serve

KNOWN = {"type", "match_id", "id", "decision", "view", "legal", "time_left_ms"}


def on_message(message):
    if message["type"] == "request" and set(message) != KNOWN:
        raise KeyError(f"unexpected request fields {sorted(set(message) - KNOWN)}")


serve(on_message=on_message)
