"""Honest: answers every request at once with a random legal action (seeded by argv[1], default 0)."""

import random
import sys

from botlib import answer, play

chooser = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
play(lambda request, hello: answer(request, chooser.randrange(len(request["legal"]))), "random")
