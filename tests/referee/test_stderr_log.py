"""A bot's stderr log marks where each match begins, and a crash quotes its last stderr lines
(real processes: one bot process plays three matches, as in a tournament)."""

from __future__ import annotations

from test_bot_process import AON, CONTROL, close_all, random_spec, script, start_all

from arena.referee.bot_spec import BotSpec
from arena.referee.match import run_match
from arena.referee.process import STDERR_TAIL_LINES
from arena.referee.results import FaultKind

# Talks on stderr in its first and third match (not its second), and in the third it crashes
# with a stack trace several lines deep.
CHATTY = """
matches = 0
def deep(n):
    return 1 / 0 if n == 0 else deep(n - 1)
for message in messages():
    if message["type"] == "hello":
        send({"type": "ready", "name": "chatty"})
    elif message["type"] == "match_start":
        matches += 1
        if matches != 2:
            print(f"talk in {message['match_id']}", file=sys.stderr, flush=True)
    elif message["type"] == "request":
        if matches == 3:
            deep(1)
        send({"type": "action", "id": message["id"], "action": message["legal"][0]})
    elif message["type"] == "bye":
        break
"""


async def test_the_log_marks_each_match_and_a_crash_quotes_the_last_lines(tmp_path):
    bots = await start_all(
        [
            BotSpec("chatty", script(tmp_path, "chatty", CHATTY)),
            random_spec("r1"),
            random_spec("r2"),
        ],
        tmp_path,
    )
    try:
        results = [
            await run_match(AON, bots, seed=n, match_id=f"m{n}", time_control=CONTROL)
            for n in (1, 2, 3)
        ]
    finally:
        await close_all(bots)
    assert [f.kind for r in results[:2] for f in r.faults] == []
    (crash,) = results[2].faults
    assert crash.kind == FaultKind.CRASH and crash.seat == 0
    quoted = crash.message.split("(stderr: ", 1)[1].rsplit(")", 1)[0].split(" | ")
    # the trace's last lines, in order: the frames and the error, not just the last line
    assert quoted[-1] == "ZeroDivisionError: division by zero"
    assert "Traceback (most recent call last):" in quoted and len(quoted) > 4
    assert len(quoted) <= STDERR_TAIL_LINES
    assert "talk in m1" not in crash.message  # the tail starts afresh at each match
    assert quoted[0] == "talk in m3"
    log = bots[0].log_path.read_text().splitlines()
    assert log[:2] == ["[arena: match m1 (alles-oder-nichts, seat 0) starts]", "talk in m1"]
    assert log[2:4] == ["[arena: match m3 (alles-oder-nichts, seat 0) starts]", "talk in m3"]
    assert not any("m2" in line for line in log)  # it said nothing in m2: no marker either
    assert log[-1] == "ZeroDivisionError: division by zero"
    assert bots[1].log_path is None or not bots[1].log_path.exists()  # quiet bots: no log file
