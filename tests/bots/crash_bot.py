"""Plays honestly for a few requests, then dies with an exception (exit status 1) mid-match."""

from botlib import answer, play

answered = 0


def choose(request, hello):
    global answered
    answered += 1
    if answered > 5:
        raise RuntimeError("crash bot: crashing on purpose")
    return answer(request)


play(choose, "crash")
