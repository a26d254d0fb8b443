"""Says ready, then at its first request closes its stdout and keeps running (reading stdin)."""

import os
import sys
import time

from botlib import play


def choose(request, hello):
    sys.stdout.flush()
    os.close(1)
    while True:
        time.sleep(60)


play(choose, "closed-stdout")
