"""Ignores SIGTERM, plays honestly, and never exits by itself: not at bye, not at end of input."""

import signal
import time

from botlib import answer, play

signal.signal(signal.SIGTERM, signal.SIG_IGN)
play(lambda request, hello: answer(request), "sigterm-ignoring")
while True:
    time.sleep(60)
