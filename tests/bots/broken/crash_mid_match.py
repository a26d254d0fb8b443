"""Crashes (an uncaught exception, exit status 1) on its fifth request."""

from _base import first_legal, serve

asked = 0


def answer(request):
    global asked
    asked += 1
    if asked == 5:
        raise RuntimeError("this bot crashes on purpose on its fifth request")
    return first_legal(request)


serve(answer)
