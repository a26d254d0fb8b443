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

``arena serve --allow-play`` serves the same page for each person's match it starts
(:class:`PersonTables`), under ``/play/ID/``: the page's addresses are relative to it.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import msgspec
import trio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp

from arena.referee.match import MatchStop, MatchStopped
from arena.referee.process import BotStartupError
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
        self.watchers = 0  # pages following this seat now
        self.left_at: float | None = None  # when the last one went

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


def play_routes(find: Callable[[Request], WebPerson | None]) -> list[Route]:
    """The person's page and its two endpoints, for the seat ``find`` names in a request (None:
    no such seat here, a 404)."""

    async def page(request: Request) -> Response:
        if find(request) is None:
            return _json({"error": "no such table: start one from the tournament's page"}, 404)
        return Response(_static("play.html"), media_type="text/html")

    async def stream(request: Request) -> Response:
        person = find(request)
        if person is None:
            return _json({"error": "no such table"}, 404)
        last = request.headers.get("last-event-id", "")
        start = int(last) + 1 if last.isascii() and last.isdigit() and len(last) < 9 else 0

        async def events() -> AsyncIterator[bytes]:
            sent = start
            person.watchers += 1
            try:
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
            finally:
                person.watchers -= 1
                person.left_at = trio.current_time()

        return StreamingResponse(
            events(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def action(request: Request) -> Response:
        person = find(request)
        if person is None:
            return _json({"error": "no such table"}, 404)
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

    return [
        Route("/", page),
        Route("/api/play/stream", stream),
        Route("/api/play/action", action, methods=["POST"]),
    ]


def build_play_app(person: WebPerson, hosts: HostCheck | None = None) -> ASGIApp:
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

    routes = [*play_routes(lambda request: person), Route("/static/{name}", static)]
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


StartMatch = Callable[[str, "str | None", WebPerson, MatchStop], Awaitable[object]]


class PersonTables:
    """The persons' matches ``arena serve --allow-play`` plays (SPEC.md 11): at most ``limit``
    at once, each at ``/play/ID/`` (ID a random secret, the only way to its seat). A match is
    stopped, and its bots closed, once no page has followed it for ``leave_s`` seconds."""

    KEEP_FINISHED = 20  # finished matches whose page still shows the result

    def __init__(
        self,
        start_match: StartMatch,
        games: list[str],
        bots: list[str],
        limit: int,
        *,
        pace_s: float = 0.7,
        leave_s: float = 5.0,
    ) -> None:
        self.start_match = start_match
        self.games = games  # the tournament's game labels, and its bots: what may be asked for
        self.bots = bots
        self.limit = limit
        self.pace_s = pace_s
        self.leave_s = leave_s
        self.people: dict[str, WebPerson] = {}  # every seat of this run, its page kept after
        self.playing: set[str] = set()
        self.nursery: trio.Nursery | None = None

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Hold the matches' tasks until cancelled (which stops every match)."""
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            task_status.started()
            await trio.sleep_forever()

    def find(self, request: Request) -> WebPerson | None:
        return self.people.get(request.path_params.get("table", ""))

    def start(self, label: str, against: str | None) -> str:
        """A new match's ID; raises PlayRefused past the limit."""
        if label not in self.games:
            raise PlayRefused(f"no game {label[:40]!r} in this tournament", 404)
        if against is not None and against not in self.bots:
            raise PlayRefused(f"no bot {against[:40]!r} in this tournament", 404)
        if self.nursery is None:
            raise PlayRefused("the server is not ready to play yet")
        if len(self.playing) >= self.limit:
            raise PlayRefused(
                f"{len(self.playing)} persons' matches are being played, the most this server "
                f"allows at once (arena serve --play-limit): try again when one ends"
            )
        for old in [t for t in self.people if t not in self.playing][: -self.KEEP_FINISHED]:
            del self.people[old]  # (the oldest finished pages go, past KEEP_FINISHED)
        table = secrets.token_urlsafe(16)
        person = WebPerson(self.pace_s)
        person.left_at = trio.current_time()  # (its page has leave_s to come)
        self.people[table] = person
        self.playing.add(table)
        self.nursery.start_soon(self._play, table, label, against, person)
        return table

    async def _play(self, table: str, label: str, against: str | None, person: WebPerson) -> None:
        stop = MatchStop()
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._watch, person, stop)
                try:
                    await self.start_match(label, against, person, stop)
                except MatchStopped:
                    pass  # (its record says why)
                except (BotStartupError, ValueError, OSError) as error:  # the page says why
                    self.playing.discard(table)  # (its place is free once the page is told)
                    person.add({"type": "error", "message": str(error)})
                nursery.cancel_scope.cancel()
        finally:
            self.playing.discard(table)

    async def _watch(self, person: WebPerson, stop: MatchStop) -> None:
        """Stop the match once its page has been gone for leave_s (closed, not reloading)."""
        while True:
            await trio.sleep(min(1.0, self.leave_s))
            left = person.left_at
            if not person.watchers and left is not None:
                if trio.current_time() - left >= self.leave_s:
                    stop.stop("the person left the page")
                    return

    def routes(self, refusal: Callable[[Request], str | None]) -> list[BaseRoute]:
        """The tournament server's routes for persons' matches: what may be played (``/api/play``),
        starting one (POST ``/api/play/start`` ``{"game": LABEL, "against": BOT or null}``, with
        the header the action needs), and each match's page under ``/play/ID/``. ``refusal``: why
        a request may not play (None: it may)."""

        async def offer(request: Request) -> Response:
            why = refusal(request)
            if why is not None:
                return _json({"games": [], "bots": [], "refused": why})
            return _json({"games": self.games, "bots": self.bots, "limit": self.limit})

        async def start(request: Request) -> Response:
            if request.headers.get(ACTION_HEADER) != "1":
                return _json(
                    {"error": f"starting a match needs the header {ACTION_HEADER}: 1"}, 403
                )
            why = refusal(request)
            if why is not None:
                return _json({"error": why}, 403)
            try:
                body = msgspec.json.decode(await request.body())
            except msgspec.DecodeError:
                body = None
            game = body.get("game") if isinstance(body, dict) else None
            against = body.get("against") if isinstance(body, dict) else None
            if not isinstance(game, str) or not (against is None or isinstance(against, str)):
                return _json(
                    {"error": 'expected JSON: {"game": "LABEL", "against": "BOT" or null}'}, 400
                )
            try:
                table = self.start(game, against)
            except PlayRefused as refused:
                return _json({"error": str(refused)}, refused.status)
            return _json({"url": f"/play/{table}/"})

        def find(request: Request) -> WebPerson | None:
            return self.find(request) if refusal(request) is None else None

        return [
            Route("/api/play", offer),
            Route("/api/play/start", start, methods=["POST"]),
            Mount("/play/{table}", routes=play_routes(find)),
        ]


class PlayRefused(Exception):
    """No person's match can start now (one line, and the HTTP status that says why)."""

    def __init__(self, message: str, status: int = 429) -> None:
        super().__init__(message)
        self.status = status
