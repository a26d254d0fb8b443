"""Answers with stale and future request ids: before each real answer, an answer to the previous
request (stale) and one to the next request (future), each a legal action of this request.
With ``only-wrong`` as argv[1] it never sends the right id at all."""

import sys

from botlib import answer, play, send

only_wrong = sys.argv[1:] == ["only-wrong"]


def choose(request, hello):
    stale = dict(answer(request), id=request["id"] - 1)
    future = dict(answer(request), id=request["id"] + 1)
    send(stale)
    send(future)
    return None if only_wrong else answer(request)


play(choose, "wrong-id")
