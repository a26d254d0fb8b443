"""Builds its own actions instead of choosing from legal: the first card of its hand, "bid:99"."""

from _base import serve


def answer(request):
    hand = request["view"].get("hand") or ["XX"]
    action = hand[0] if request["decision"] == "play" else request["decision"] + ":99"
    return {"type": "action", "id": request["id"], "action": action}


serve(answer)
