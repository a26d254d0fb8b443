"""Plays correctly but never exits: not on bye, not at the end of its input."""

import json
import sys
import time

from _base import first_legal, send

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        send({"type": "ready", "name": "ignores-bye"})
    elif message["type"] == "request":
        send(first_legal(message))
while True:
    time.sleep(1)
