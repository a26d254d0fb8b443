"""Takes two seconds over every decision."""

import time

from _base import first_legal, serve


def answer(request):
    time.sleep(2)
    return first_legal(request)


serve(answer)
