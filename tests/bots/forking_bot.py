"""Leaves processes behind, then plays honestly. Usage: forking_bot.py [stay|escape|daemon]

``stay`` (the default): a child that keeps stdin/stdout/stderr open and sleeps on, in the bot's
process group. ``escape``: the child leaves the bot's session and process group (setsid) and forks
a grandchild; both sleep on. ``daemon``: the classic double fork: the child calls setsid, forks a
grandchild and exits at once, so the grandchild is orphaned (no parent link back to the bot) before
the bot even says ready.
"""

import os
import sys
import time

from botlib import answer, play

mode = sys.argv[1] if len(sys.argv) > 1 else "stay"


def sleep_forever():
    while True:
        time.sleep(60)


if os.fork() == 0:
    if mode in ("escape", "daemon"):
        os.setsid()
        if os.fork() == 0:
            sleep_forever()
        if mode == "daemon":
            os._exit(0)
    sleep_forever()
if mode == "daemon":
    os.wait()     # the child is gone; the grandchild lives on, adopted by init
play(lambda request, hello: answer(request), "forking")
