"""Always thinks for 0.3 s, whatever time_left_ms says: fine until its time runs low."""

import time

from _base import first_legal, serve


def answer(request):
    time.sleep(0.3)
    return first_legal(request)


serve(answer)
