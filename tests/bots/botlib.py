"""The few lines every zoo bot shares: read the referee's JSON lines, answer with JSON lines.

Stdlib only, on purpose: a zoo bot is any program, and must not depend on the arena's code.
A bot imports this from its own folder (Python puts a script's folder first on sys.path).
"""

import json
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def messages():
    """Each message the referee sends, parsed; ends at end of input."""
    for line in sys.stdin:
        if line.strip():
            yield json.loads(line)


def answer(request, index=0):
    """A legal answer to ``request``: the legal action at ``index``."""
    return {"type": "action", "id": request["id"], "action": request["legal"][index]}


def play(choose, name, on_message=None, version=""):
    """Say ready (with ``name`` and ``version``) to hello, answer each request with
    ``choose(request, hello)`` (None: no answer), and return at bye or end of input.
    ``on_message(message)`` sees every message first."""
    hello = None
    for message in messages():
        if on_message is not None:
            on_message(message)
        kind = message.get("type")
        if kind == "hello":
            hello = message
            send({"type": "ready", "name": name, "version": version})
        elif kind == "request":
            reply = choose(message, hello)
            if reply is not None:
                send(reply)
        elif kind == "bye":
            return
