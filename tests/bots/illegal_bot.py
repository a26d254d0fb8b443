"""Answers well-formed but illegal actions: a made-up action, then an index out of range."""

from botlib import play

sent = 0


def choose(request, hello):
    global sent
    sent += 1
    if sent % 2:
        return {"type": "action", "id": request["id"], "action": "not-a-legal-action"}
    return {"type": "action", "id": request["id"], "index": len(request["legal"]) + 5}


play(choose, "illegal")
