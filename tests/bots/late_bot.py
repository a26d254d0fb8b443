"""Answers its first request of every match too late (decision time plus margin plus 300 ms),
then answers the rest at once, like an honest bot."""

import time

from botlib import answer, play

late_in = set()


def choose(request, hello):
    if request["match_id"] not in late_in:
        late_in.add(request["match_id"])
        limits = hello["limits"]
        time.sleep((limits["decision_ms"] + limits.get("margin_ms", 0) + 300) / 1000)
    return answer(request)


play(choose, "late")
