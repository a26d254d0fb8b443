"""Answers each request with a different kind of garbage line (never a valid action)."""

import sys

from botlib import play

GARBAGE = [
    b"this is not json\n",
    b"[1, 2, 3]\n",
    b'{"type": "action"}\n',  # no id
    b'{"type": "action", "id": "seven", "index": 0}\n',  # id of the wrong type
    b'{"type": "resign", "id": 1}\n',  # unknown message type
    b'{"type": "action", "id": 1, "index": 0, "cheat": true}\n',  # unknown field
    b"\xff\xfe\x00 not utf-8 \x80\n",
    b'{"type": "action", "id": 1,\n',  # cut off
]
sent = 0


def choose(request, hello):
    global sent
    sys.stdout.buffer.write(GARBAGE[sent % len(GARBAGE)])
    sys.stdout.buffer.flush()
    sent += 1
    return None


play(choose, "garbage")
