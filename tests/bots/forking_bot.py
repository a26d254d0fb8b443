"""Forks a child that keeps stdin/stdout/stderr open and lives on (sleeping), then plays honestly.
With ``escape`` as argv[1] the child also leaves the bot's session and process group (setsid),
and a grandchild is left behind the same way: an attempt to outlive a kill of the group."""

import os
import sys
import time

from botlib import answer, play


def linger(new_session):
    if os.fork() == 0:
        if new_session:
            os.setsid()
            if os.fork() == 0:
                while True:
                    time.sleep(60)
        while True:
            time.sleep(60)


linger(sys.argv[1:] == ["escape"])
play(lambda request, hello: answer(request), "forking")
