"""Answers every request at once, correctly, then "ponders": a thread spins on the CPU after each
reply until the next message arrives (at most PONDER_S), while the bot is not asked. SPEC.md section
7 forbids that (on the shared core it takes the CPU of the bot that is asked); the referee cannot
tell, so it plays without a fault, and `arena check` fails it (its idle check).
"""

import threading
import time

from botlib import answer, messages, send

PONDER_S = 60.0  # a bound, so a bot left waiting (between matches, say) is not a hog for ever

pondering = threading.Event()


def ponder():
    while True:
        pondering.wait()
        until = time.monotonic() + PONDER_S
        while pondering.is_set() and time.monotonic() < until:
            pass  # think ahead, on the CPU
        pondering.clear()


threading.Thread(target=ponder, daemon=True).start()
for message in messages():
    pondering.clear()  # asked (or told something): stop thinking ahead
    kind = message.get("type")
    if kind == "hello":
        send({"type": "ready", "name": "ponderer"})
    elif kind == "request":
        send(answer(request=message))
        pondering.set()
    elif kind == "bye":
        break
