"""Leaves processes behind, then plays honestly. Usage: forking_bot.py [stay|escape|daemon|vanish S]

``stay`` (the default): a child that keeps stdin/stdout/stderr open and sleeps on, in the bot's
process group. ``escape``: the child leaves the bot's session and process group (setsid) and forks
a grandchild; both sleep on. ``daemon``: the classic double fork: the child calls setsid, forks a
grandchild and exits at once, so the grandchild is orphaned (no parent link back to the bot) before
the bot even says ready. ``vanish S``: like ``daemon``, but the grandchild then replaces itself by
``sleep S`` with an empty environment, so it carries no trace of the bot but its command line.
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
    if mode in ("escape", "daemon", "vanish"):
        os.setsid()
        if os.fork() == 0:
            if mode == "vanish":
                os.execve("/bin/sleep", ["sleep", sys.argv[2]], {})
            sleep_forever()
        if mode in ("daemon", "vanish"):
            os._exit(0)
    sleep_forever()
if mode in ("daemon", "vanish"):
    os.wait()  # the child is gone; the grandchild lives on, adopted by init
play(lambda request, hello: answer(request), "forking")
