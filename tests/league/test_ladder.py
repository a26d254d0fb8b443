"""The ladder's history, links and faults against a real ``arena league serve``: each version's
rating after every deal-set in the JSON API, every done match linked to its replay, the
debugger and its record; the debugger's stderr and fault messages shown only to the version's
own author (and the organiser); a downloaded record re-asked with ``arena replay --ask``."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tests.league.conftest import (
    ORGANISER,
    Server,
    add_author,
    arena,
    league_toml,
    open_store,
    serving,
    targz,
)
from tests.waiting import wait_for

# A bot that says who it is on stderr before every answer (its author's secret, for the test);
# with "crash", it crashes at its first request of every league deal-set's rotation 0 (match ids
# GAME/sN/r0: arena check's are not), saying its secret on stderr first (a crash fault's message
# quotes it).
NOISY_BOT = """import json, sys
secret = sys.argv[1]
crash = sys.argv[2:] == ["crash"]
match_id = ""
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "noisy"}), flush=True)
    elif message["type"] == "match_start":
        match_id = message["match_id"]
    elif message["type"] == "request":
        if crash and "/s" in match_id and match_id.endswith("/r0"):
            print(f"{secret} crashing in {match_id}", file=sys.stderr, flush=True)
            sys.exit(3)
        print(f"{secret} thinking about request {message['id']}", file=sys.stderr, flush=True)
        print(json.dumps({"type": "action", "id": message["id"], "index": 0}), flush=True)
    elif message["type"] == "bye":
        break
"""


def noisy_bot(secret: str, *, crash: bool = False) -> bytes:
    argv = ["python3", "noisy.py", secret, *(["crash"] if crash else [])]
    manifest = f'name = "noisy"\nauthor = "Test"\nversion = "1.0"\nrun = {json.dumps(argv)}\n'
    return targz({"bot.toml": manifest, "noisy.py": NOISY_BOT})


def _done_with(toml: Path, *version_ids: int) -> list[int]:
    """The done deal-sets where every one of ``version_ids`` sat."""
    store = open_store(toml)
    try:
        return [d.id for d in store.done_dealsets() if set(version_ids) <= set(d.seats)]
    finally:
        store.close()


def _league_with_two_authors(tmp_path: Path) -> tuple[Path, str, str]:
    toml = league_toml(tmp_path, house=1)
    return toml, add_author(toml, "alice"), add_author(toml, "bob")


def _upload(server: Server, token: str, secret: str, *, crash: bool = False) -> int:
    status, answer = server.post("api/submit", noisy_bot(secret, crash=crash), token=token)
    assert status == 200, answer
    return int(answer["id"])


def _seats_said(data: dict[str, Any]) -> dict[int, list[str]]:
    """Per seat, the stderr the debugger's data shows for its decisions."""
    said: dict[int, list[str]] = {}
    for frame in data["frames"]:
        for reply in (frame["decision"] or {}).get("replies", []):
            if reply["stderr"]:
                said.setdefault(reply["seat"], []).append(reply["stderr"])
    return said


def test_history_links_and_the_debugger_with_each_authors_own_stderr(tmp_path: Path) -> None:
    toml, alice, bob = _league_with_two_authors(tmp_path)
    with serving(toml) as server:
        alice_v = _upload(server, alice, "ALICE-SECRET", crash=True)
        bob_v = _upload(server, bob, "BOB-SECRET")
        wait_for(
            "two deal-sets of alice and bob", lambda: len(_done_with(toml, alice_v, bob_v)) >= 2
        )

        # -- the history: one point per done deal-set, per game and overall ------------------
        before = _done_with(toml, alice_v)
        status, version = server.get(f"api/versions/{alice_v}")
        after = _done_with(toml, alice_v)
        assert status == 200
        assert list(version["history"]) == ["eight-rounds", "overall"]
        for scope, points in version["history"].items():
            assert len(before) <= len(points) <= len(after), scope
            assert [p["dealset"] for p in points] == after[: len(points)]
            for point in points:
                assert math.isclose(point["low"], point["mu"] - 1.96 * point["sigma"])
                assert math.isclose(point["high"], point["mu"] + 1.96 * point["sigma"])
                assert point["sigma"] > 0 and point["at"]
            # the uncertainty only shrinks as the version plays
            sigmas = [p["sigma"] for p in points]
            assert sigmas == sorted(sigmas, reverse=True), scope

        # -- the latest matches and faults, with their links ---------------------------------
        status, ladder = server.get("api/ladder")
        assert status == 200 and isinstance(ladder["faults"], list)
        assert "fault_counts" in version and isinstance(version["faults"], list)
        shared = next(
            m
            for m in version["matches"]
            if m["links"]
            and m["rotation"] > 0
            and {"alice.noisy.v1", "bob.noisy.v1"} <= set(m["bots"])
        )
        assert set(shared["bots"]) >= {"alice.noisy.v1", "bob.noisy.v1"}
        links = shared["links"]
        assert links["debugger"] == "/match?id=" + quote(shared["id"], safe="")
        status, matches = server.get(f"api/matches?version={alice_v}")
        assert status == 200 and all("alice.noisy.v1" in m["bots"] for m in matches)
        status, text = server.get(links["replay"])
        assert status == 200 and "alice.noisy.v1" in text and "SECRET" not in text

        # -- the debugger's data: each author sees their own bot's stderr only ---------------
        seat_of = {bot: seat for seat, bot in enumerate(shared["bots"])}
        alice_seat, bob_seat = seat_of["alice.noisy.v1"], seat_of["bob.noisy.v1"]
        api = "api/match?id=" + quote(shared["id"], safe="")
        seen: dict[str, dict[int, list[str]]] = {}
        for who, token in (("alice", alice), ("bob", bob), ("anyone", None), ("org", ORGANISER)):
            status, data = server.get(api, token=token)
            assert status == 200, data
            assert data["all_hands_allowed"] and len(data["frames"]) > 1
            seen[who] = _seats_said(data)
            raw = json.dumps(data)
            assert ("ALICE-SECRET" in raw) == (who in ("alice", "org")), who
            assert ("BOB-SECRET" in raw) == (who in ("bob", "org")), who
        assert set(seen["alice"]) == {alice_seat}
        assert all(s.startswith("ALICE-SECRET") for s in seen["alice"][alice_seat])
        assert set(seen["bob"]) == {bob_seat}
        assert seen["anyone"] == {}
        assert set(seen["org"]) >= {alice_seat, bob_seat}
        status, page = server.get("match?id=" + quote(shared["id"], safe=""))
        assert status == 200 and "/static/debugger.js" in page
        status, _ = server.get("static/debugger.js")
        assert status == 200

        # -- alice's crash: its kind for everyone, its message (her stderr) for her only ----------
        crashed = next(m for m in version["matches"] if m["links"] and m["rotation"] == 0)
        for who, token in (("alice", alice), ("bob", bob), ("anyone", None), ("org", ORGANISER)):
            mine = who in ("alice", "org")
            status, ladder = server.get("api/ladder", token=token)
            status, seen_version = server.get(f"api/versions/{alice_v}", token=token)
            faults = [f for f in ladder["faults"] + seen_version["faults"] if f["links"]]
            assert faults and all(f["bot"] == "alice.noisy.v1" for f in seen_version["faults"])
            for fault in (f for f in faults if f["bot"] == "alice.noisy.v1"):
                assert fault["kind"] == "crash", fault
                said = fault["message"] or ""
                assert ("ALICE-SECRET crashing" in said) == mine, (who, fault)
                assert fault.get("withheld", False) != mine, (who, fault)
            assert seen_version["fault_counts"]["overall"]["crash"] >= 2
            status, data = server.get("api/match?id=" + quote(crashed["id"], safe=""), token=token)
            assert status == 200 and ("ALICE-SECRET" in json.dumps(data)) == mine, who
            status, record = server.get(crashed["links"]["record"], token=token)
            assert status == 200 and ("ALICE-SECRET" in record) == mine, who

        # -- the record, re-asked with arena replay --ask ------------------------------------
        status, record = server.get(links["record"], token=alice)
        assert status == 200 and isinstance(record, str)
        assert "ALICE-SECRET" in record and "BOB-SECRET" not in record
        path = tmp_path / "downloaded.jsonl"
        path.write_text(record)
        bot = tmp_path / "noisy.py"
        bot.write_text(NOISY_BOT)
        done = arena(
            "replay",
            str(path),
            "--seat",
            str(alice_seat),
            "--ask",
            "1",
            "--bot",
            f"{sys.executable} {bot} ASKED-AGAIN",
        )
        assert done.returncode == 0, done.stderr + done.stdout
        assert "ASKED-AGAIN thinking about request" in done.stdout
        status, record = server.get(links["record"])
        assert status == 200 and "SECRET" not in record

        # -- refusals: a deal-set still being played, a bad id, a seat out of range ----------
        store = open_store(toml)
        try:
            playing = next((d for d in store.open_dealsets() if store.stored_rotations(d.id)), None)
        finally:
            store.close()
        if playing is not None:
            status, answer = server.get(f"api/match?id=eight-rounds/s{playing.id}/r0")
            assert status == 403 and "still being played" in answer["error"]
        for bad, code in (("nonsense", 400), ("eight-rounds/s99999/r0", 404)):
            status, answer = server.get("api/match?id=" + quote(bad, safe=""))
            assert status == code and "\n" not in answer["error"], bad
        status, answer = server.get(api + "&seat=7")
        assert status == 400 and "seat 7" in answer["error"]
        status, _ = server.get(f"bot?name={quote('alice.noisy.v1')}")
        assert status == 200  # (the redirect to the version's page, followed)
