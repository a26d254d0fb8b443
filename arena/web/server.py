"""The read-only web server: starlette routes served by hypercorn's trio worker.

Why these: hypercorn runs on trio natively (``hypercorn.trio.serve``), so the server shares the
tournament's event loop with no second loop or thread (``arena tournament --web``), and starlette
runs on anyio, which runs on trio. Both are small, pure Python and well kept.

Pages are one static HTML file with plain JS (no build step, no CDN); the data comes from JSON
endpoints, and live updates from server-sent events: one small message per change, at most one a
second per page, no polling from the browser.

Heavy work (a match replay, the exact standings of a large file) runs in a worker thread.
``arena tournament --web`` runs this server in a process of its own (arena.web.child), so that
no page ever takes the referee's loop, interpreter or core.

Every response carries ``nosniff`` and a Content-Security-Policy; a request whose Host header
names a host the server was not bound to (DNS rebinding) is refused. Sealed cards (a match being
played, or a finished one whose deal is still being played: arena.web.access) are served only
to who presents a token: ``Authorization: Bearer TOKEN``, ``?token=TOKEN`` (a page's address
with it sets an HttpOnly cookie and drops it from the address), or that cookie.
"""

from __future__ import annotations

import ipaddress
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlencode

import msgspec
import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.tournament.errors import unwrapped
from arena.tournament.store import ResultStore, StoreError
from arena.web.access import SPECTATOR, TOKEN_COOKIE, TOKEN_PARAM, Access, Viewer
from arena.web.feed import SETTLE_S
from arena.web.pages import NotFound
from arena.web.records import record_extent
from arena.web.sealed import Sealed
from arena.web.source import TournamentSource


class PlayTables(Protocol):
    """Persons' matches a tournament's server may start (arena.web.play.PersonTables)."""

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Hold the matches until cancelled."""

    def routes(self, refusal: Callable[[Request], str | None]) -> list[BaseRoute]:
        """Their routes; ``refusal``: why a request may not play (None: it may)."""
        return []


SSE_MIN_GAP_S = 1.0  # at most one update a second per page
SSE_HEARTBEAT_S = 15.0  # a comment line keeps proxies from closing an idle stream
MATCH_POLL_S = 0.5  # a watched running match: how often its record is looked at
PAGES = ("/", "/bot", "/match", "/deal", "/compare")
# Scripts, styles, images and connections from this server only; no inline script or style, no
# frames, no plugins, no forms elsewhere (the pages set styles through the DOM, never inline).
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
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
    if not raw.isascii() or not raw.isdigit() or len(raw) > 4:
        raise ValueError(f"seat={raw[:20]!r}: expected a seat number or all")
    return int(raw)


def _number(request: Request, name: str) -> int:
    """A query parameter that must be a count (digits only, of a size SQLite can hold)."""
    raw = request.query_params[name]
    if not raw.isascii() or not raw.isdigit() or len(raw) > 18:
        raise ValueError(name)
    return int(raw)


class HostCheck:
    """The Host headers a server answers (against DNS rebinding, where a page of another site
    reaches this server under that site's name): the host it was bound to, the loopback names
    when bound to loopback, any address when bound to every interface (an address is never
    rebound), and the names the organiser allows."""

    def __init__(self, bound: str, allowed: Iterable[str] = ()) -> None:
        self.any_address = bound in ("", "0.0.0.0", "::")
        self.names = {_normal_host(bound)} | {_normal_host(name) for name in allowed}
        if self.names & set(LOOPBACK_NAMES) or _is_loopback(bound):
            self.names |= set(LOOPBACK_NAMES)

    def allows(self, header: str | None) -> bool:
        host = _host_of(header)
        if host is None:
            return False
        if host in self.names:
            return True
        return self.any_address and _is_address(host)


def _normal_host(name: str) -> str:
    return name.strip().strip("[]").lower().rstrip(".")


def _host_of(header: str | None) -> str | None:
    """The host of a Host header (``name``, ``name:port``, ``[v6]`` or ``[v6]:port``)."""
    if not header:
        return None
    if header.startswith("["):
        end = header.find("]")
        rest = header[end + 1 :]
        if end < 0 or rest and not (rest[0] == ":" and rest[1:].isdigit()):
            return None
        return _normal_host(header[1:end])
    name, colon, port = header.partition(":")
    if colon and not port.isdigit():
        return None
    return _normal_host(name)


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(_normal_host(host)).is_loopback
    except ValueError:
        return _normal_host(host) == "localhost"


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            kind, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if kind.lower() == "bearer" else None
    return None


class HostGuard:
    """Around every request: the Host check (against DNS rebinding) and the security headers on
    every response; then :meth:`serve`."""

    def __init__(self, app: ASGIApp, hosts: HostCheck) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        host = Request(scope).headers.get("host")
        if not self.hosts.allows(host):
            answer = _error(400, f"Host {(host or '')[:80]!r} is not served here")
            await answer(scope, receive, send_secured)
            return
        await self.serve(scope, receive, send_secured)

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


class Guard(HostGuard):
    """The tournament pages' guard: the Host check and the security headers, and who is asking
    (``scope["arena.viewer"]``, from the token presented); a page's address with ``?token=``
    answers with a redirect to the same page without it, setting the token as an HttpOnly
    cookie (so it leaves the address bar and the history). An unknown token given in the
    request (not a cookie, which may be an old run's) is a 401."""

    def __init__(self, app: ASGIApp, access: Access, hosts: HostCheck) -> None:
        super().__init__(app, hosts)
        self.access = access

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        given = _bearer(scope) or request.query_params.get(TOKEN_PARAM)
        viewer = self.access.viewer(given or request.cookies.get(TOKEN_COOKIE))
        if given and viewer is SPECTATOR:
            await _error(401, "unknown token")(scope, receive, send)
            return
        scope["arena.viewer"] = viewer
        if TOKEN_PARAM in request.query_params and scope["path"] in PAGES:
            kept = [(k, v) for k, v in request.query_params.multi_items() if k != TOKEN_PARAM]
            target = scope["path"] + ("?" + urlencode(kept) if kept else "")
            redirect = RedirectResponse(target, status_code=303)
            redirect.set_cookie(TOKEN_COOKIE, given or "", httponly=True, samesite="strict")
            await redirect(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _viewer(request: Request) -> Viewer:
    viewer = request.scope.get("arena.viewer")
    return viewer if isinstance(viewer, Viewer) else SPECTATOR


def build_app(
    source: TournamentSource,
    access: Access | None = None,
    hosts: HostCheck | None = None,
    play: PlayTables | None = None,
) -> ASGIApp:
    """The ASGI application for one tournament (``access``: the tokens accepted, none by
    default; ``hosts``: the Host headers answered, the loopback names by default; ``play``:
    the persons' matches it may start, none by default)."""
    access = access if access is not None else Access()
    hosts = hosts if hosts is not None else HostCheck("127.0.0.1")

    async def fresh_summary(viewer: Viewer) -> dict[str, Any]:
        await source.refresh()
        return source.summary(viewer)

    async def page(request: Request) -> Response:
        return Response(_static("index.html"), media_type="text/html")

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        suffix = Path(name).suffix
        if "/" in name or "\\" in name or "\0" in name or suffix not in STATIC_TYPES:
            return _error(404, f"no file {name[:80]}")
        try:
            body = _static(name)
        except (FileNotFoundError, OSError, ValueError):
            return _error(404, f"no file {name[:80]}")
        return Response(body, media_type=STATIC_TYPES[suffix])

    async def summary(request: Request) -> Response:
        if source.computing:  # answer now; the live stream brings the standings when ready
            return _json(source.summary(_viewer(request)))
        return _json(await fresh_summary(_viewer(request)))

    async def stream(request: Request) -> Response:
        viewer = _viewer(request)

        async def events() -> AsyncIterator[bytes]:
            sent: tuple[int, bool] | None = None
            yield b"retry: 2000\n\n"
            while True:
                data = await fresh_summary(viewer)
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
            return _json(source.bot_page(name, _viewer(request)))
        except NotFound as error:
            return _error(404, str(error))

    async def compare(request: Request) -> Response:
        try:
            return _json(await trio.to_thread.run_sync(source.compare_page))
        except NotFound as error:
            return _error(404, str(error))

    async def deal(request: Request) -> Response:
        try:
            game = request.query_params["game"]
            table = _number(request, "table")
            number = _number(request, "deal")
        except (KeyError, ValueError):
            return _error(400, "expected ?game=LABEL&table=N&deal=N")
        try:
            return _json(
                await trio.to_thread.run_sync(
                    source.deal_page, game, table, number, _viewer(request)
                )
            )
        except NotFound as error:
            return _error(404, str(error))

    async def load_match(request: Request) -> Response | dict[str, Any]:
        """The match page's data, and whether the tournament found the match strained (its
        latency report is the fold's: read here, in the event loop that feeds the fold)."""
        match_id = request.query_params.get("id", "")
        try:
            seat = _seat(request)
            data = await trio.to_thread.run_sync(
                source.match_page, match_id, seat, _viewer(request)
            )
            return {**data, "strained": source.strained(match_id)}
        except ValueError as error:
            return _error(400, str(error))
        except NotFound as error:
            return _error(404, str(error))
        except Sealed as error:
            return _json({"error": str(error), "seats_allowed": error.allowed}, 403)

    async def match(request: Request) -> Response:
        data = await load_match(request)
        return data if isinstance(data, Response) else _json(data)

    async def match_stream(request: Request) -> Response:
        """A running match, re-sent whenever its record grows, until it is over. The first
        answer is checked before the stream starts: a refusal is the status it is."""
        match_id = request.query_params.get("id", "")
        first = await load_match(request)
        if isinstance(first, Response):
            return first

        async def events() -> AsyncIterator[bytes]:
            sent: tuple[Any, ...] | None = ()  # (no record is None: the first look sends)
            data: Response | dict[str, Any] | None = first
            while True:
                record, _stored, running = await trio.to_thread.run_sync(source.record_of, match_id)
                now = record_extent(record)
                if now != sent or not running:
                    sent = now
                    if data is None:
                        data = await load_match(request)
                    if isinstance(data, Response):
                        yield b"event: failed\ndata: " + bytes(data.body) + b"\n\n"
                        return
                    yield b"event: match\ndata: " + _encode(data) + b"\n\n"
                    if not running:
                        return
                data = None
                await trio.sleep(MATCH_POLL_S)

        return StreamingResponse(
            events(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def tokens(request: Request) -> Response:
        """The organiser's list of the bots' tokens and page addresses, to hand out."""
        if not _viewer(request).organiser:
            return _error(403, "the bots' tokens are for the organiser (with its token)")
        base = str(request.base_url)
        return _json(
            {
                "bots": [
                    {"bot": bot, "token": token, "url": f"{base}?{TOKEN_PARAM}={token}"}
                    for bot, token in access.bot_tokens(source.bots).items()
                ]
            }
        )

    routes: list[BaseRoute] = [Route(path, page) for path in PAGES]
    routes += [
        Route("/static/{name}", static),
        Route("/api/summary", summary),
        Route("/api/stream", stream),
        Route("/api/bot", bot),
        Route("/api/deal", deal),
        Route("/api/compare", compare),
        Route("/api/match", match),
        Route("/api/match/stream", match_stream),
        Route("/api/tokens", tokens),
    ]
    if play is not None:

        def refusal(request: Request) -> str | None:
            if access.enabled and not _viewer(request).organiser:
                return "playing here needs the organiser's token (SPEC.md 11)"
            return None

        routes += play.routes(refusal)
    else:
        off = "playing here is off (arena serve --allow-play turns it on)"

        async def no_play(request: Request) -> Response:
            if request.method == "POST":
                return _error(403, off)
            return _json({"games": [], "bots": [], "refused": off})

        routes.append(Route("/api/play", no_play))
        routes.append(Route("/api/play/start", no_play, methods=["POST"]))
    # Gzip shrinks a match's frames about tenfold; event streams are left alone by starlette.
    app = Starlette(routes=routes, middleware=[Middleware(GZipMiddleware, minimum_size=2000)])
    return Guard(app, access, hosts)


async def serve_tournament(
    source: TournamentSource,
    host: str,
    port: int,
    *,
    access: Access | None = None,
    allowed_hosts: Iterable[str] = (),
    on_ready: Callable[[str], None] | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    shutdown: Callable[[], Awaitable[None]] | None = None,
    play: PlayTables | None = None,
) -> None:
    """Serve until cancelled; ``task_status.started`` (and ``on_ready``) get the page's URL.
    Cancelling it stops the persons' matches of ``play`` and closes their bots."""
    app = build_app(source, access, HostCheck(host, allowed_hosts), play)
    async with trio.open_nursery() as nursery:
        if play is not None:
            await nursery.start(play.run)
        url = await nursery.start(serve_app, app, host, port, shutdown)
        if on_ready is not None:
            on_ready(url)
        task_status.started(url)


async def serve_app(
    app: ASGIApp,
    host: str,
    port: int,
    shutdown: Callable[[], Awaitable[None]] | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app`` on ``host``:``port`` (0: any free port) by hypercorn until cancelled (or
    ``shutdown`` returns); ``task_status.started`` gets its URL."""
    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = None
    config.graceful_timeout = 0.5
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(_serve, app, config, shutdown)
        task_status.started(binds[0] + "/" if binds else f"http://{host}:{port}/")


class ServeError(Exception):
    """Serving could not start or go on: the results file cannot be read, or the port is
    taken (one line)."""


def serve_until_signalled(
    store: ResultStore,
    source: TournamentSource,
    host: str,
    port: int,
    *,
    access: Access | None = None,
    allowed_hosts: Iterable[str] = (),
    on_ready: Callable[[str], None],
    play: PlayTables | None = None,
) -> None:
    """Serve the pages of a results file, following it while a tournament writes it, in a trio
    run of its own until SIGINT, SIGTERM or SIGHUP (``arena serve``, and ``arena tournament
    --web``'s web process); ``on_ready`` gets the URL once it serves."""

    async def run() -> None:
        source.poll_file(store)
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGHUP) as signals:
            async with trio.open_nursery() as nursery:
                serving = partial(
                    serve_tournament, access=access, allowed_hosts=allowed_hosts, play=play
                )
                on_ready(await nursery.start(serving, source, host, port))
                nursery.start_soon(source.watch, store)
                nursery.start_soon(source.refresh)  # the exact standings, before anyone asks
                async for _ in signals:
                    nursery.cancel_scope.cancel()
                    break

    try:
        with unwrapped(OSError), unwrapped(StoreError):
            trio.run(run)
    except StoreError as exc:
        raise ServeError(str(exc)) from None
    except OSError as exc:
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


async def _serve(
    app: ASGIApp,
    config: Config,
    shutdown: Callable[[], Awaitable[None]] | None,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    await serve(app, config, shutdown_trigger=shutdown, task_status=task_status)  # type: ignore[arg-type]  # starlette's ASGI app type is narrower than hypercorn's alias
