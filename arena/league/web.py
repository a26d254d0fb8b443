"""The league's web server: the ladder, author and version pages, the JSON API behind them,
and the upload of new versions (starlette served by hypercorn on trio, as ``arena serve``).

Who asks: the organiser (the token ``arena league serve`` prints or takes from
``$ARENA_WEB_SECRET``), an author (their token), or anyone. A token comes as
``Authorization: Bearer TOKEN`` (the CLI) or as the HttpOnly cookie ``POST /api/session`` sets
(the pages). A request that changes anything and is authorised by the cookie must carry the
session's CSRF token in ``X-CSRF-Token`` (``GET /api/me`` gives it to the pages, which only
pages of this origin can read) and, when the browser sends one, an ``Origin`` of this host: a
page of another site can neither read the token nor forge the header. Build logs, check
reports and bots' stderr are shown to their author and the organiser only. Replays are served
once their deal-set is done (before then they would show cards still being played).
"""

from __future__ import annotations

import hashlib
import hmac
import io
import re
import secrets
import signal
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec
import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from rich.console import Console
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp

from arena.league.config import HOUSE_AUTHOR, NAME_RE_TEXT
from arena.league.league import League, UploadRefused
from arena.league.store import Author, LeagueStoreError, Version
from arena.referee.record import ReplayError
from arena.render.replay import render_replay
from arena.tournament.errors import TournamentError, unwrapped
from arena.tournament.standings import standings_as_data
from arena.tournament.store import StoredMatch
from arena.web.records import RecordAt, replay
from arena.web.server import HostCheck, HostGuard

SESSION_COOKIE = "league_token"
CSRF_HEADER = "x-csrf-token"
PAGES = {"/": "ladder", "/author": "author", "/version": "version", "/me": "me"}
STATIC_TYPES = {".js": "text/javascript", ".css": "text/css"}
LATEST = 30  # matches on a page
NAME_RE = re.compile(NAME_RE_TEXT)


@dataclass(frozen=True)
class Viewer:
    author: Author | None = None
    organiser: bool = False
    by_cookie: bool = False  # authorised by the session cookie: CSRF checks apply

    def sees_private(self, version: Version) -> bool:
        """Build logs, check reports and stderr: the version's author and the organiser."""
        return self.organiser or (self.author is not None and self.author.name == version.author)


def _json(data: Any, status: int = 200) -> Response:
    return Response(
        msgspec.json.encode(data),
        status_code=status,
        media_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def _error(status: int, message: str) -> Response:
    return _json({"error": message}, status)


def _static(name: str) -> bytes:
    return resources.files("arena.league").joinpath("static", name).read_bytes()


class LeagueApp:
    def __init__(self, league: League, organiser_token: str | None, hosts: HostCheck) -> None:
        self.league = league
        self.store = league.store
        self.organiser_token = organiser_token
        self.hosts = hosts
        self.csrf_key = bytes.fromhex(self.store.keep_note("csrf_key", secrets.token_hex(32)))

    # -- who asks ------------------------------------------------------------------------------

    def csrf_of(self, token: str) -> str:
        return hmac.new(self.csrf_key, token.encode(), hashlib.sha256).hexdigest()

    def viewer(self, request: Request) -> Viewer | Response:
        header = request.headers.get("authorization", "")
        kind, _, bearer = header.partition(" ")
        token = bearer.strip() if kind.lower() == "bearer" else None
        by_cookie = token is None
        if token is None:
            token = request.cookies.get(SESSION_COOKIE)
        if not token:
            return Viewer()
        if self.organiser_token is not None and hmac.compare_digest(token, self.organiser_token):
            viewer = Viewer(organiser=True, by_cookie=by_cookie)
        else:
            author = self.store.author_of_token(token)
            if author is None or author.name == HOUSE_AUTHOR:
                if by_cookie:
                    return Viewer()  # an old session: ask again
                return _error(401, "unknown token (expected an author's or the organiser's)")
            viewer = Viewer(author=author, by_cookie=by_cookie)
        if request.method == "POST" and by_cookie:
            given = request.headers.get(CSRF_HEADER, "")
            if not hmac.compare_digest(given, self.csrf_of(token)):
                return _error(403, f"missing or wrong {CSRF_HEADER} header (a cross-site request?)")
            origin = request.headers.get("origin")
            if origin is not None and not self.hosts.allows(origin.split("://", 1)[-1]):
                return _error(403, f"Origin {origin[:80]!r} is not this league's (cross-site)")
        return viewer

    # -- pages ---------------------------------------------------------------------------------

    async def page(self, request: Request) -> Response:
        html = _static("league.html").replace(b"{{page}}", PAGES[request.url.path].encode())
        return Response(html, media_type="text/html", headers={"Cache-Control": "no-store"})

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        suffix = Path(name).suffix
        if name not in ("league.js", "league.css"):
            return _error(404, "no such file")
        return Response(_static(name), media_type=STATIC_TYPES[suffix])

    # -- the API -------------------------------------------------------------------------------

    async def me(self, request: Request) -> Response:
        viewer = self.viewer(request)
        if isinstance(viewer, Response):
            return viewer
        token = request.cookies.get(SESSION_COOKIE)
        return _json(
            {
                "league": self.league.config.name,
                "author": viewer.author.name if viewer.author else None,
                "organiser": viewer.organiser,
                "csrf": self.csrf_of(token)
                if token and (viewer.author or viewer.organiser)
                else None,
                "registration": self.league.config.organiser.registration,
            }
        )

    async def session(self, request: Request) -> Response:
        """Log in: the token in the JSON body becomes an HttpOnly, same-site cookie."""
        body = await _json_body(request)
        token = body.get("token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            return _error(400, 'expected a JSON body {"token": "..."}')
        is_organiser = self.organiser_token is not None and hmac.compare_digest(
            token, self.organiser_token
        )
        author = None if is_organiser else self.store.author_of_token(token)
        if not is_organiser and (author is None or author.name == HOUSE_AUTHOR):
            return _error(401, "unknown token")
        response = _json(
            {
                "author": author.name if author else None,
                "organiser": is_organiser,
                "csrf": self.csrf_of(token),
            }
        )
        response.set_cookie(SESSION_COOKIE, token, httponly=True, samesite="strict")
        return response

    async def logout(self, request: Request) -> Response:
        response = _json({"author": None})
        response.delete_cookie(SESSION_COOKIE)
        return response

    async def register(self, request: Request) -> Response:
        if self.league.config.organiser.registration != "open":
            return _error(403, "registration is closed: the organiser adds authors")
        body = await _json_body(request)
        name = body.get("name") if isinstance(body, dict) else None
        if not isinstance(name, str) or not NAME_RE.match(name) or name == HOUSE_AUTHOR:
            return _error(400, f"name: expected {NAME_EXPECTED_TEXT}")
        token = secrets.token_urlsafe(32)
        try:
            self.store.add_author(name, token)
        except LeagueStoreError as exc:
            return _error(409, str(exc))
        return _json({"author": name, "token": token})

    async def ladder(self, request: Request) -> Response:
        versions = {v.label: v for v in self.store.versions()}
        data = standings_as_data(self.league.standings())
        for table in data.values():
            for row in table["rows"]:
                version = versions.get(row["bot"])
                row["version"] = None if version is None else _public(version)
        return _json(
            {
                "league": self.league.config.name,
                "games": list(self.league.plans),
                "tables": data,
                "playing": len(self.league.playing),
                "versions": [_public(v) for v in versions.values() if v.status == "active"],
            }
        )

    async def matches(self, request: Request) -> Response:
        raw = request.query_params.get("version")
        label = None
        if raw is not None:
            version = self._version(raw)
            if isinstance(version, Response):
                return version
            label = version.label
        return _json([self._match(m) for m in self._latest(label)])

    def _latest(self, label: str | None, limit: int = LATEST) -> list[StoredMatch]:
        if label is None:
            return self.store.matches(latest=limit)
        return [m for m in self.store.matches(latest=None) if label in m.bots][-limit:][::-1]

    def _match(self, match: StoredMatch) -> dict[str, Any]:
        done = self.store.dealset(match.deal).done
        return {
            "id": match.match_id,
            "game": match.game,
            "dealset": match.deal,
            "rotation": match.rotation,
            "bots": list(match.bots),
            "placings": list(match.placings),
            "scores": list(match.scores),
            "status": match.status,
            "reason": match.reason,
            "faults": [
                {"seat": f.seat, "bot": f.bot, "kind": f.kind, "message": f.message}
                for f in match.faults
            ],
            "replay": f"/api/replay/{match.deal}/{match.rotation}"
            if done and match.record_path
            else None,
        }

    def _asked(self, request: Request) -> tuple[Viewer, Version] | Response:
        """Who asks about which version (``{id}`` in the path), or the error to answer."""
        viewer = self.viewer(request)
        if isinstance(viewer, Response):
            return viewer
        version = self._version(request.path_params["id"])
        if isinstance(version, Response):
            return version
        return viewer, version

    def _version(self, raw: str) -> Version | Response:
        if not raw.isascii() or not raw.isdigit() or len(raw) > 12:
            return _error(400, f"version {raw[:20]!r}: expected a version number")
        try:
            return self.store.version(int(raw))
        except LeagueStoreError as exc:
            return _error(404, str(exc))

    async def author(self, request: Request) -> Response:
        viewer = self.viewer(request)
        if isinstance(viewer, Response):
            return viewer
        author = self.store.author_named(request.path_params["name"])
        if author is None:
            return _error(404, "no such author")
        versions = self.store.versions(author_id=author.id)
        return _json(
            {
                "author": author.name,
                "versions": [_shown(v, viewer) for v in versions],
                "yours": viewer.author is not None and viewer.author.id == author.id,
            }
        )

    async def version(self, request: Request) -> Response:
        asked = self._asked(request)
        if isinstance(asked, Response):
            return asked
        viewer, version = asked
        matches = [m for m in self.store.matches() if version.label in m.bots]
        history = []
        placings = 0.0
        for count, match in enumerate(matches, 1):
            seats = [i for i, bot in enumerate(match.bots) if bot == version.label]
            if match.completed and seats:
                placings += sum(match.placings[i] for i in seats) / len(seats)
            history.append({"match": match.match_id, "mean_placing": round(placings / count, 4)})
        data = _shown(version, viewer)
        data["history"] = history
        data["matches"] = [self._match(m) for m in matches[-LATEST:][::-1]]
        if viewer.sees_private(version):
            data["stderr"] = self._stderr_logs(version)
        return _json(data)

    def _stderr_logs(self, version: Version) -> list[str]:
        folder = self.league.config.logs_dir
        if not folder.is_dir():
            return []
        return sorted(p.name for p in folder.glob(f"{version.label}-*.stderr.log"))

    async def stderr(self, request: Request) -> Response:
        asked = self._asked(request)
        if isinstance(asked, Response):
            return asked
        viewer, version = asked
        if not viewer.sees_private(version):
            return _error(403, "a version's stderr is shown to its author only")
        name = request.path_params["name"]
        if name not in self._stderr_logs(version):
            return _error(404, "no such log")
        text = (self.league.config.logs_dir / name).read_bytes()
        return Response(text, media_type="text/plain; charset=utf-8")

    async def replay(self, request: Request) -> Response:
        try:
            dealset = self.store.dealset(int(request.path_params["dealset"]))
        except (LeagueStoreError, ValueError):
            return _error(404, "no such deal-set")
        if not dealset.done:
            return _error(403, "its deal-set is still being played (the cards stay sealed)")
        match = self.store.match(dealset.id, int(request.path_params["rotation"]))
        record = None if match is None else RecordAt.of_stored(match)
        if match is None or record is None:
            return _error(404, "no record of that match")
        try:
            replayed = await trio.to_thread.run_sync(replay, record)
        except (ReplayError, OSError) as exc:
            return _error(500, f"{match.match_id}: its record cannot be read: {exc}")
        console = Console(record=True, width=110, file=io.StringIO())
        console.print(render_replay(replayed, None))
        return Response(console.export_text(), media_type="text/plain; charset=utf-8")

    async def submit(self, request: Request) -> Response:
        viewer = self.viewer(request)
        if isinstance(viewer, Response):
            return viewer
        if viewer.author is None:
            return _error(401, "log in as an author to upload (an author's token)")
        limit = self.league.config.limits.upload_mb << 20
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                return _error(
                    413,
                    f"the upload is over {self.league.config.limits.upload_mb} MB "
                    "(the league's limits.upload_mb)",
                )
            chunks.append(chunk)
        try:
            outcome = await self.league.upload(viewer.author, b"".join(chunks))
        except UploadRefused as exc:
            return _error(400, str(exc))
        data = _shown(outcome.version, viewer)
        data["accepted"] = outcome.accepted
        return _json(data, 200 if outcome.accepted else 422)

    async def retire(self, request: Request) -> Response:
        asked = self._asked(request)
        if isinstance(asked, Response):
            return asked
        viewer, version = asked
        if viewer.author is None or viewer.author.name != version.author:
            return _error(403, "only its author retires a version")
        if version.status != "active":
            return _error(409, f"{version.label} is {version.status}, not active")
        version = self.store.set_status(version.id, "retired", "retired by its author")
        return _json(_shown(version, viewer))

    async def disqualify(self, request: Request) -> Response:
        viewer = self.viewer(request)
        if isinstance(viewer, Response):
            return viewer
        if not viewer.organiser:
            return _error(403, "only the organiser disqualifies a version")
        version = self._version(request.path_params["id"])
        if isinstance(version, Response):
            return version
        body = await _json_body(request)
        reason = body.get("reason") if isinstance(body, dict) else None
        note = f"disqualified by the organiser: {reason}" if reason else "disqualified"
        version = self.store.set_status(version.id, "disqualified", str(note)[:500])
        return _json(_shown(version, viewer))

    def routes(self) -> list[Route]:
        return [
            *(Route(path, self.page) for path in PAGES),
            Route("/static/{name}", self.static),
            Route("/api/me", self.me),
            Route("/api/session", self.session, methods=["POST"]),
            Route("/api/logout", self.logout, methods=["POST"]),
            Route("/api/register", self.register, methods=["POST"]),
            Route("/api/ladder", self.ladder),
            Route("/api/matches", self.matches),
            Route("/api/authors/{name}", self.author),
            Route("/api/versions/{id}", self.version),
            Route("/api/versions/{id}/stderr/{name}", self.stderr),
            Route("/api/versions/{id}/retire", self.retire, methods=["POST"]),
            Route("/api/versions/{id}/disqualify", self.disqualify, methods=["POST"]),
            Route("/api/replay/{dealset:int}/{rotation:int}", self.replay),
            Route("/api/submit", self.submit, methods=["POST"]),
        ]


NAME_EXPECTED_TEXT = "1-40 letters, digits or _ - (starting with a letter or digit)"


async def _json_body(request: Request) -> Any:
    raw = await request.body()
    try:
        return msgspec.json.decode(raw[:10_000]) if raw else {}
    except msgspec.DecodeError:
        return None


def _public(version: Version) -> dict[str, Any]:
    return {
        "id": version.id,
        "label": version.label,
        "author": version.author,
        "bot": version.bot,
        "number": version.number,
        "status": version.status,
        "note": version.note,
        "created": version.created,
        "changed": version.changed,
    }


def _shown(version: Version, viewer: Viewer) -> dict[str, Any]:
    data = _public(version)
    if viewer.sees_private(version):
        data["log"] = version.log
    return data


def build_app(league: League, organiser_token: str | None, hosts: HostCheck) -> ASGIApp:
    return HostGuard(Starlette(routes=LeagueApp(league, organiser_token, hosts).routes()), hosts)


def serve_league(
    league: League,
    host: str,
    port: int,
    *,
    organiser_token: str | None,
    allowed_hosts: tuple[str, ...] = (),
    on_ready: Callable[[str], None],
) -> None:
    """Play and serve until SIGINT, SIGTERM or SIGHUP (``arena league serve``). Raises
    TournamentError (the league's own files cannot be written), LeagueStoreError or OSError (the
    port is taken) as themselves, for one line."""

    async def run() -> None:
        hosts = HostCheck(host, allowed_hosts)
        config = Config()
        config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
        config.accesslog = None
        config.errorlog = None
        config.graceful_timeout = 0.5
        app = build_app(league, organiser_token, hosts)
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGHUP) as signals:
            async with trio.open_nursery() as nursery:
                binds = await nursery.start(serve, app, config)
                on_ready(binds[0] + "/" if binds else f"http://{host}:{port}/")
                nursery.start_soon(league.play)
                async for _ in signals:
                    nursery.cancel_scope.cancel()
                    break

    with unwrapped(TournamentError), unwrapped(LeagueStoreError), unwrapped(OSError):
        trio.run(run)
