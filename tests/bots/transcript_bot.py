"""Keeps a transcript: appends every byte the referee sends it to FILE, and before each answer
writes ``thinking about request ID (N legal)`` to stderr. Usage:

    transcript_bot.py FILE [first|last]

``first`` answers every request with its first legal action; ``last`` plays the last legal
card in ``play`` decisions (a bot that differs from ``first`` on purpose).
"""

import json
import sys

path = sys.argv[1]
mode = sys.argv[2] if len(sys.argv) > 2 else "first"
with open(path, "ab") as transcript:
    for line in sys.stdin.buffer:
        transcript.write(line)
        transcript.flush()
        message = json.loads(line)
        if message["type"] == "hello":
            reply = {"type": "ready", "name": "transcript"}
        elif message["type"] == "request":
            legal = message["legal"]
            index = len(legal) - 1 if mode == "last" and message["decision"] == "play" else 0
            sys.stderr.write(f"thinking about request {message['id']} ({len(legal)} legal)\n")
            sys.stderr.flush()
            reply = {"type": "action", "id": message["id"], "index": index}
        elif message["type"] == "bye":
            break
        else:
            continue
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
