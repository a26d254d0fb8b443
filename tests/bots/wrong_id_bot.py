"""Answers with wrong request ids. Usage: wrong_id_bot.py stale|future

``stale``: before each right answer, an answer to the previous request id (a late answer, which the
referee skips). ``future``: instead of the right answer, an answer to the next request id, which has
not been sent yet (a fault). Each wrong answer carries a legal action of the current request.
"""

import sys

from botlib import answer, play, send

offset = {"stale": -1, "future": 1}[sys.argv[1]]


def choose(request, hello):
    if offset > 0:
        return dict(answer(request), id=request["id"] + offset)
    send(dict(answer(request), id=request["id"] + offset))
    return answer(request)


play(choose, "wrong-id")
