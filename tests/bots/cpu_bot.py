"""Uses CPU time in child processes, then plays honestly (tests/referee/test_cpu_time.py).
Usage: cpu_bot.py idle|busy SECONDS

Before it says ready: a child that burns SECONDS of CPU time and is waited for, and one that does
the same and is not (left a zombie). ``busy``: then a child that spins until the bot is closed.
"""

import subprocess
import sys

from botlib import answer, play

BURN = "import sys, time\nend = time.process_time() + float(sys.argv[1])\n"
BURN += "while time.process_time() < end: pass"

mode, seconds = sys.argv[1], sys.argv[2]
waited = subprocess.Popen([sys.executable, "-c", BURN, seconds])
waited.wait()
unwaited = subprocess.Popen([sys.executable, "-c", BURN, seconds], stdout=subprocess.PIPE)
unwaited.stdout.read()  # the end of its output: it has ended (and is not waited for)
if mode == "busy":
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
play(lambda request, hello: answer(request), "cpu")
