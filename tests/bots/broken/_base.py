"""The well-behaved part shared by the broken bots: each one breaks exactly one rule.

``serve(answer)`` runs the protocol loop; ``answer(message)`` returns the line (a dict, or raw text)
to send for a request, or None to send nothing.
"""

import json
import sys


def send(line):
    text = line if isinstance(line, str) else json.dumps(line)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def first_legal(request):
    return {"type": "action", "id": request["id"], "action": request["legal"][0]}


def serve(answer=first_legal, on_message=None, name="broken"):
    for line in sys.stdin:
        message = json.loads(line)
        if on_message is not None:
            on_message(message)
        kind = message["type"]
        if kind == "hello":
            send({"type": "ready", "name": name})
        elif kind == "request":
            reply = answer(message)
            if reply is not None:
                send(reply)
        elif kind == "bye":
            return
