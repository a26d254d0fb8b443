"""``arena play --web``: the person's seat in the browser (SPEC.md 11).

The page gets exactly what the person's seat is told, nothing more: every message the referee
writes to that seat (arena.referee.person), in order, over server-sent events; it answers a
request by POSTing one of that request's legal actions. So no other seat's hidden card can ever
reach the page: the referee never wrote it to this seat.

Routes: ``/`` the table (static/play.html, play.js, table.js), ``/api/play/stream`` the seat's
messages (event ``message``, its ``id`` the message's number: a reconnect resumes after the last
one it got), ``/api/play/action`` (POST ``{"id": request id, "action": ...}``; it must carry the
header ``X-Arena-Play: 1``, which a page of another site cannot send without this server's
consent). Every response has the tournament pages' security headers; a Host header this server
was not bound to is refused (DNS rebinding).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import msgspec
import trio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from arena.render.seat import others_move
from arena.web.access import Access
from arena.web.server import STATIC_TYPES, Guard, HostCheck, _static, serve_app

ACTION_HEADER = "x-arena-play"
HEARTBEAT_S = 15.0


class WebPerson:
    """The person at the browser: keeps every message its seat is told (the page's whole data)
    and waits for the page's answer to each request."""

    def __init__(self, pace_s: float = 0.7) -> None:
        self.messages: list[dict[str, Any]] = []
        self.pace_s = pace_s
        self.changed = trio.Event()
        self.pending: dict[str, Any] | None = None
        self.answer_send, self.answer_receive = trio.open_memory_channel[str](1)
        self.seat: int | None = None

    def add(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self.changed.set()
        self.changed = trio.Event()

    async def show(self, message: dict[str, Any]) -> None:
        if message.get("type") == "match_start":
            self.seat = message.get("seat")
        self.add(message)
        if self.pace_s and others_move(message, self.seat):
            await trio.sleep(self.pace_s)  # the bots' moves one by one, at a pace to follow

    async def choose(self, request: dict[str, Any]) -> str:
        self.pending = request
        try:
            return await self.answer_receive.receive()
        finally:
            self.pending = None

    def answer(self, request_id: object, action: object) -> str | None:
        """Take the page's answer; None when taken, else why not (one line)."""
        pending = self.pending
        if pending is None or request_id != pending["id"]:
            return "no question of that id is waiting for an answer"
        if not isinstance(action, str) or action not in pending["legal"]:
            return f"{str(action)[:40]!r} is not one of the legal actions"
        self.pending = None
        self.answer_send.send_nowait(action)
        return None


def _json(data: Any, status: int = 200) -> Response:
    return Response(
        msgspec.json.encode(data),
        status_code=status,
        media_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def build_play_app(person: WebPerson, hosts: HostCheck | None = None) -> ASGIApp:
    async def page(request: Request) -> Response:
        return Response(_static("play.html"), media_type="text/html")

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        suffix = "." + name.rpartition(".")[2]
        if "/" in name or "\\" in name or suffix not in STATIC_TYPES:
            return _json({"error": f"no file {name[:80]}"}, 404)
        try:
            body = _static(name)
        except (FileNotFoundError, OSError, ValueError):
            return _json({"error": f"no file {name[:80]}"}, 404)
        return Response(body, media_type=STATIC_TYPES[suffix])

    async def stream(request: Request) -> Response:
        last = request.headers.get("last-event-id", "")
        start = int(last) + 1 if last.isascii() and last.isdigit() and len(last) < 9 else 0

        async def events() -> AsyncIterator[bytes]:
            sent = start
            yield b"retry: 1000\n\n"
            while True:
                while sent < len(person.messages):
                    data = msgspec.json.encode(person.messages[sent])
                    yield b"event: message\nid: %d\ndata: %s\n\n" % (sent, data)
                    sent += 1
                changed = person.changed
                with trio.move_on_after(HEARTBEAT_S):
                    await changed.wait()
                if sent == len(person.messages):
                    yield b": still here\n\n"

        return StreamingResponse(
            events(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def action(request: Request) -> Response:
        if request.headers.get(ACTION_HEADER) != "1":
            return _json({"error": f"an action needs the header {ACTION_HEADER}: 1"}, 403)
        try:
            body = msgspec.json.decode(await request.body())
        except msgspec.DecodeError:
            return _json({"error": 'expected JSON: {"id": N, "action": "..."}'}, 400)
        if not isinstance(body, dict):
            return _json({"error": 'expected JSON: {"id": N, "action": "..."}'}, 400)
        problem = person.answer(body.get("id"), body.get("action"))
        if problem is not None:
            return _json({"error": problem}, 409)
        return _json({"ok": True})

    routes = [
        Route("/", page),
        Route("/static/{name}", static),
        Route("/api/play/stream", stream),
        Route("/api/play/action", action, methods=["POST"]),
    ]
    # The tournament pages' guard: the Host check and the security headers (no token opens
    # anything here: the page shows one seat, to whoever reaches this loopback server).
    return Guard(Starlette(routes=routes), Access(), hosts or HostCheck("127.0.0.1"))


async def serve_play(
    person: WebPerson,
    host: str,
    port: int,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the person's page until cancelled; ``task_status.started`` gets its URL."""
    await serve_app(build_play_app(person, HostCheck(host)), host, port, task_status=task_status)
