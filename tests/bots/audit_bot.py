"""The bots of the record-audit corpus (tests/referee/test_record_audit.py). Usage:

``audit_bot.py canonical``: answers every request with the canonical reply by index,
``{"type":"action","id":N,"index":K}`` (no spaces: a compact record's short array), a random
legal index (seeded by its name).

``audit_bot.py trouble SLEEP_MS``: in each match, its first four requests get four kinds of
trouble, then honest answers by value: a line that is not JSON (malformed, no id), an index
out of range (illegal), no answer for SLEEP_MS and then the answer (a timeout, and a stale
line while its next request is pending), an answer to a request not yet sent (malformed).
"""

import json
import random
import sys
import time

mode = sys.argv[1]
sleep_s = float(sys.argv[2]) / 1000 if len(sys.argv) > 2 else 0.0
asked: dict[str, int] = {}
rng = random.Random(0)


def write(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    kind = message.get("type")
    if kind == "hello":
        rng.seed(message["name"])
        write(json.dumps({"type": "ready", "name": f"audit-{mode}", "version": "1"}))
    elif kind == "bye":
        break
    elif kind == "request":
        legal, request_id = message["legal"], message["id"]
        if mode == "canonical":
            write(f'{{"type":"action","id":{request_id},"index":{rng.randrange(len(legal))}}}')
            continue
        n = asked[message["match_id"]] = asked.get(message["match_id"], 0) + 1
        if n == 1:
            write("this is not json")
        elif n == 2:
            write(json.dumps({"type": "action", "id": request_id, "index": len(legal) + 3}))
        elif n == 3:
            time.sleep(sleep_s)
            write(json.dumps({"type": "action", "id": request_id, "action": legal[0]}))
        elif n == 4:
            write(json.dumps({"type": "action", "id": request_id + 1, "index": 0}))
        else:
            write(json.dumps({"type": "action", "id": request_id, "action": rng.choice(legal)}))
