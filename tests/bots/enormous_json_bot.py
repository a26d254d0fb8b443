"""Answers with a valid action as JSON, padded with whitespace to 8 MB on one line."""

import sys

from botlib import play

PADDING = b" " * (8 * 1024 * 1024)


def choose(request, hello):
    body = b'"type": "action", "id": %d, "index": 0' % request["id"]
    sys.stdout.buffer.write(b"{" + PADDING + body + b"}\n")
    sys.stdout.buffer.flush()
    return None


play(choose, "enormous-json")
