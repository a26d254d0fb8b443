"""Knows only the message types it expects and crashes on a fault notice."""

from _base import serve

KNOWN = {"hello", "match_start", "event", "request", "match_end", "bye"}


def on_message(message):
    if message["type"] not in KNOWN:
        raise ValueError(f"unexpected message type {message['type']!r}")


serve(on_message=on_message)
