"""The person's page server (arena.web.play) on loopback: the seat's messages as an event stream
that resumes where it left off, an answer taken only for the pending request and one of its
legal actions, with the header a page of another site cannot send; another Host is refused."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
import trio
import trio.testing

pytest.importorskip("arena.web.server", reason="the web extra is not installed")
from arena.web.play import WebPerson, serve_play

REQUEST = {"type": "request", "id": 7, "decision": "play", "legal": ["QS", "7H"], "view": {}}


def call(url: str, body: object = None, headers: dict | None = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


async def test_the_page_server_takes_one_legal_answer_to_the_pending_request() -> None:
    person = WebPerson(pace_s=0)
    async with trio.open_nursery() as nursery:
        url = await nursery.start(serve_play, person, "127.0.0.1", 0)
        await person.show({"type": "match_start", "seat": 0, "seats": [], "game": "g"})
        await person.show(REQUEST)
        chosen: list[str] = []

        async def ask() -> None:
            chosen.append(await person.choose(REQUEST))

        nursery.start_soon(ask)
        await trio.testing.wait_all_tasks_blocked()  # the request is pending
        action = url + "api/play/action"
        play = {"X-Arena-Play": "1", "Content-Type": "application/json"}

        def answers() -> list[tuple[int, object]]:
            return [
                call(action, {"id": 7, "action": "QS"}),  # no header: refused
                call(action, {"id": 6, "action": "QS"}, play),  # not the pending request
                call(action, {"id": 7, "action": "KS"}, play),  # not a legal action
                call(action, [1, 2], play),
                call(action, {"id": 7, "action": "7H"}, play),
                call(action, {"id": 7, "action": "QS"}, play),  # answered already
            ]

        got = await trio.to_thread.run_sync(answers)
        assert [status for status, _ in got] == [403, 409, 409, 400, 200, 409]
        assert "not one of the legal actions" in got[2][1]["error"]  # type: ignore[index]
        await trio.testing.wait_all_tasks_blocked()  # the answer has reached ask()
        assert chosen == ["7H"]

        def stream(last: str | None) -> bytes:
            """The stream's lines up to the second message (id 1), which is the last one."""
            headers = {} if last is None else {"Last-Event-ID": last}
            request = urllib.request.Request(url + "api/play/stream", headers=headers)
            body = b""
            with urllib.request.urlopen(request, timeout=10) as answer:
                while b"id: 1\n" not in body or not body.endswith(b"\n\n"):
                    body += answer.readline()
            return body

        whole = await trio.to_thread.run_sync(stream, None)
        assert b"id: 0\n" in whole and b"id: 1\n" in whole and b'"legal":["QS","7H"]' in whole
        resumed = await trio.to_thread.run_sync(stream, "0")
        assert b"id: 0\n" not in resumed and b"id: 1\n" in resumed

        def foreign() -> int:
            return call(url + "api/play/action", {}, {"Host": "evil.example", **play})[0]

        assert await trio.to_thread.run_sync(foreign) == 400
        nursery.cancel_scope.cancel()
