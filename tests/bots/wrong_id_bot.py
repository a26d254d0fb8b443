"""Answers with wrong request ids. Usage: wrong_id_bot.py stale|flood|varied-flood|future

``stale``: before each right answer, an answer to the previous request id (a late answer, which the
referee skips). ``flood``: the same, 20,000 times over (about 1 MB) before each right answer.
``varied-flood``: 20,000 stale answers too, but no two alike (ids counting down from the previous
one, below zero in time), so that none can be told stale by its likeness to the one before.
``future``: instead of the right answer, an answer to the next request id, which has not been sent
yet (a fault). Each wrong answer carries a legal action of the current request.
"""

import json
import sys

from botlib import answer, play

mode = sys.argv[1]
copies = {"stale": 1, "flood": 20000, "varied-flood": 0, "future": 0}[mode]


def choose(request, hello):
    if mode == "future":
        return dict(answer(request), id=request["id"] + 1)
    if mode == "varied-flood":
        right = answer(request)
        sys.stdout.write(
            "".join(json.dumps(dict(right, id=request["id"] - k)) + "\n" for k in range(1, 20001))
        )
        return right
    stale = json.dumps(dict(answer(request), id=request["id"] - 1)) + "\n"
    sys.stdout.write(stale * copies)
    return answer(request)


play(choose, "wrong-id")
