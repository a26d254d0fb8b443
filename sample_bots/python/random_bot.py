#!/usr/bin/env python3
"""A random Trick Arena bot: the bare protocol, Python standard library only.

It plays every game: each request lists every legal action, so the bot picks one at random and
never needs to know a rule. Copy this file to start your own bot.

Run it:   python3 random_bot.py [SEED]      (or set BOT_SEED; the default seed is 0)

Seeding: for each match the generator is SplitMix64 (SPEC.md section 3) seeded with
SEED xor FNV-1a-64("<match_id>:<seat>"), so a match replays exactly whatever came before it. The
JavaScript and C random bots use the same scheme and make the same choices.

Messages (SPEC.md section 4), one JSON object per line each way:
  hello -> answer ready;  request -> answer action;  bye or end of input -> exit.
  match_start, event, fault and match_end need no answer.
Only stdout carries protocol lines; write anything else to stderr (the organiser's log).
"""

import json
import os
import sys

MASK64 = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def below(self, n):
        limit = (1 << 64) - (
            (1 << 64) % n
        )  # reject the top sliver so every index is equally likely
        while True:
            x = self.next()
            if x < limit:
                return x % n


def fnv1a64(text):
    h = 0xCBF29CE484222325
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * 0x100000001B3) & MASK64
    return h


def send(message):
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()  # the referee is waiting for this line: never leave it in a buffer


def log(text):
    print(f"random_bot: {text}", file=sys.stderr, flush=True)


def main():
    seed_text = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("BOT_SEED", "0")
    base_seed = int(seed_text) & MASK64
    rng = SplitMix64(base_seed)

    for line in sys.stdin:  # ends at end of input: the referee has gone
        message = json.loads(line)
        kind = message["type"]
        if kind == "hello":
            send({"type": "ready", "name": "random-python", "version": "1"})
        elif kind == "match_start":
            key = f"{message['match_id']}:{message['seat']}"
            rng = SplitMix64(base_seed ^ fnv1a64(key))
        elif kind == "request":
            legal = message["legal"]
            send({"type": "action", "id": message["id"], "action": legal[rng.below(len(legal))]})
        elif kind == "fault":
            log(f"fault {message['kind']}: {message['message']}")
        elif kind == "match_end":
            log(f"match {message['match_id']} over: scores {message['scores']}")
        elif kind == "bye":
            return
        # "event" and any message type added later: nothing to do


if __name__ == "__main__":
    main()
