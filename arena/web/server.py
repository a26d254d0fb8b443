"""The read-only web server: starlette routes served by hypercorn's trio worker.

Why these: hypercorn runs on trio natively (``hypercorn.trio.serve``), so the server shares the
tournament's event loop with no second loop or thread (``arena tournament --web``), and starlette
runs on anyio, which runs on trio. Both are small, pure Python and well kept.

Pages are one static HTML file with plain JS (no build step, no CDN); the data comes from JSON
endpoints, and live updates from server-sent events: one small message per change, at most one a
second per page, no polling from the browser.

Heavy work (a match replay, the exact standings of a large file) runs in a worker thread so the
event loop, which may be playing the tournament, is not held up.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec
import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from arena.web.source import SETTLE_S, NotFound, RecordAt, TournamentSource

SSE_MIN_GAP_S = 1.0  # at most one update a second per page
SSE_HEARTBEAT_S = 15.0  # a comment line keeps proxies from closing an idle stream
MATCH_POLL_S = 0.5  # a watched running match: how often its record is looked at
PAGES = ("/", "/bot", "/match", "/deal")
STATIC_TYPES = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".html": "text/html",
    ".svg": "image/svg+xml",
}


def _static(name: str) -> bytes:
    return resources.files("arena.web").joinpath("static", name).read_bytes()


def _encode(data: Any) -> bytes:
    """Compact JSON on one line; JSON has no NaN or infinity: msgspec writes them as null."""
    return msgspec.json.encode(data)


def _json(data: Any, status: int = 200) -> Response:
    return Response(
        _encode(data),
        status_code=status,
        media_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def _error(status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status)


def _seat(request: Request) -> int | None:
    raw = request.query_params.get("seat", "all")
    if raw in ("", "all"):
        return None
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"seat={raw!r}: expected a seat number or all") from None


def _extent(record: RecordAt | None) -> tuple[Any, ...] | None:
    """What changes as a record grows: where it is, and the size of a record still being
    written (the end of its file)."""
    if record is None:
        return None
    if record.length is not None:
        return (record.path, record.at, record.length)
    try:
        return (record.path, record.at, record.path.stat().st_size)
    except OSError:
        return (record.path, record.at, -1)


def build_app(source: TournamentSource) -> Starlette:
    """The ASGI application for one tournament."""

    async def fresh_summary() -> dict[str, Any]:
        await source.refresh()
        return source.summary()

    async def page(request: Request) -> Response:
        return Response(_static("index.html"), media_type="text/html")

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        suffix = Path(name).suffix
        if "/" in name or suffix not in STATIC_TYPES:
            return _error(404, f"no file {name}")
        try:
            body = _static(name)
        except (FileNotFoundError, OSError):
            return _error(404, f"no file {name}")
        return Response(body, media_type=STATIC_TYPES[suffix])

    async def summary(request: Request) -> Response:
        if source.computing:  # answer now; the live stream brings the standings when ready
            return _json(source.summary())
        return _json(await fresh_summary())

    async def stream(request: Request) -> Response:
        async def events() -> AsyncIterator[bytes]:
            sent: tuple[int, bool] | None = None
            yield b"retry: 2000\n\n"
            while True:
                data = await fresh_summary()
                key = (data["version"], data["exact"])
                if key != sent:
                    sent = key
                    yield b"event: summary\ndata: " + _encode(data) + b"\n\n"
                else:
                    yield b": still here\n\n"
                await trio.sleep(SSE_MIN_GAP_S)
                # Wake on news; without news, once the standings may have settled, or to beat.
                wait = SETTLE_S + 0.2 if not data["exact"] else SSE_HEARTBEAT_S
                await source.wait_changed(data["version"], wait)

        return StreamingResponse(
            events(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def bot(request: Request) -> Response:
        name = request.query_params.get("name", "")
        await source.refresh()
        try:
            return _json(source.bot_page(name))
        except NotFound as error:
            return _error(404, str(error))

    async def deal(request: Request) -> Response:
        try:
            game = request.query_params["game"]
            table = int(request.query_params["table"])
            number = int(request.query_params["deal"])
        except (KeyError, ValueError):
            return _error(400, "expected ?game=LABEL&table=N&deal=N")
        try:
            return _json(await trio.to_thread.run_sync(source.deal_page, game, table, number))
        except NotFound as error:
            return _error(404, str(error))

    async def load_match(request: Request) -> Response | dict[str, Any]:
        match_id = request.query_params.get("id", "")
        try:
            seat = _seat(request)
            return await trio.to_thread.run_sync(source.match_page, match_id, seat)
        except ValueError as error:
            return _error(400, str(error))
        except NotFound as error:
            return _error(404, str(error))
        except PermissionError as error:
            return _error(403, str(error))

    async def match(request: Request) -> Response:
        data = await load_match(request)
        return data if isinstance(data, Response) else _json(data)

    async def match_stream(request: Request) -> Response:
        """A running match, re-sent whenever its record grows, until it is over."""
        match_id = request.query_params.get("id", "")

        async def events() -> AsyncIterator[bytes]:
            sent: tuple[Any, ...] | None = ()  # (no record is None: the first look sends)
            while True:
                record, _stored, running = await trio.to_thread.run_sync(source.record_of, match_id)
                now = _extent(record)
                if now != sent or not running:
                    sent = now
                    data = await load_match(request)
                    if isinstance(data, Response):
                        yield b"event: failed\ndata: " + bytes(data.body) + b"\n\n"
                        return
                    yield b"event: match\ndata: " + _encode(data) + b"\n\n"
                    if not running:
                        return
                await trio.sleep(MATCH_POLL_S)

        try:
            await trio.to_thread.run_sync(source.record_of, match_id)
        except NotFound as error:
            return _error(404, str(error))
        return StreamingResponse(
            events(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    routes = [Route(path, page) for path in PAGES] + [
        Route("/static/{name}", static),
        Route("/api/summary", summary),
        Route("/api/stream", stream),
        Route("/api/bot", bot),
        Route("/api/deal", deal),
        Route("/api/match", match),
        Route("/api/match/stream", match_stream),
    ]
    # Gzip shrinks a match's frames about tenfold; event streams are left alone by starlette.
    return Starlette(routes=routes, middleware=[Middleware(GZipMiddleware, minimum_size=2000)])


async def serve_tournament(
    source: TournamentSource,
    host: str,
    port: int,
    *,
    on_ready: Callable[[str], None] | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    shutdown: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Serve until cancelled; ``task_status.started`` (and ``on_ready``) get the page's URL."""
    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = None
    config.graceful_timeout = 0.5
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(_serve, build_app(source), config, shutdown)
        url = binds[0] + "/" if binds else f"http://{host}:{port}/"
        if on_ready is not None:
            on_ready(url)
        task_status.started(url)


async def _serve(
    app: Starlette,
    config: Config,
    shutdown: Callable[[], Awaitable[None]] | None,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    await serve(app, config, shutdown_trigger=shutdown, task_status=task_status)  # type: ignore[arg-type]  # starlette's ASGI app type is narrower than hypercorn's alias
