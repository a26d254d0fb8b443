"""Honest: answers every request at once with the first legal action, by index."""

from botlib import play

play(lambda request, hello: {"type": "action", "id": request["id"], "index": 0}, "first-legal")
