"""Answers requests with its own idea of a message: {"type": "move", "card": ...}."""

from _base import serve

serve(lambda request: {"type": "move", "id": request["id"], "card": request["legal"][0]})
