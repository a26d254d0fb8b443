"""Says ready, then never answers a request. It keeps reading its input, so the referee's writes
never block; with ``deaf`` as argv[1] it stops reading after ready too (its input pipe fills up)."""

import sys
import time

from botlib import play, send

if sys.argv[1:] == ["deaf"]:
    sys.stdin.readline()
    send({"type": "ready", "name": "deaf"})
    while True:
        time.sleep(60)
play(lambda request, hello: None, "mute")
