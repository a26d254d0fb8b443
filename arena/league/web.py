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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import msgspec
import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from rich.console import Console
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from arena.league.config import HOUSE_AUTHOR, NAME_RE_TEXT
from arena.league.league import League, RegistrationRefused, UploadRefused, parse_match_id
from arena.league.store import Author, LeagueStoreError, Version
from arena.referee.record import Replay, ReplayError, replay_record
from arena.render.replay import render_replay
from arena.tournament.errors import TournamentError, unwrapped
from arena.tournament.standings import OVERALL, RATING_Z, standings_as_data
from arena.tournament.store import StoredMatch
from arena.web.matchview import MatchViewError, match_frames
from arena.web.server import HostCheck, HostGuard

SESSION_COOKIE = "league_token"
CSRF_HEADER = "x-csrf-token"
PAGES = {"/": "ladder", "/author": "author", "/version": "version", "/me": "me"}
STATIC_TYPES = {".js": "text/javascript", ".css": "text/css"}
# The match page is arena serve's debugger (arena.web's own page and files, served as they are)
DEBUGGER_FILES = ("app.js", "table.js", "debugger.js", "style.css", "table.css")
WITHHELD = "(withheld: another author's bot)"
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

    def sees_private_of(self, label: str) -> bool:
        """The same for a version named by its label, ``AUTHOR.BOT.vN`` (an author's name has
        no '.', NAME_RE_TEXT)."""
        return self.organiser or (
            self.author is not None and label.split(".", 1)[0] == self.author.name
        )


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
        if name in DEBUGGER_FILES:
            body = resources.files("arena.web").joinpath("static", name).read_bytes()
            return Response(body, media_type=STATIC_TYPES[suffix])
        if name not in ("league.js", "league.css"):
            return _error(404, "no such file")
        return Response(_static(name), media_type=STATIC_TYPES[suffix])

    async def match_page(self, request: Request) -> Response:
        """``/match?id=ID``: arena serve's match page, the debugger, on this league's API."""
        html = resources.files("arena.web").joinpath("static", "index.html").read_bytes()
        return Response(html, media_type="text/html", headers={"Cache-Control": "no-store"})

    async def bot_page(self, request: Request) -> Response:
        """``/bot?name=LABEL`` (the debugger's link for a seat's bot): that version's page."""
        label = request.query_params.get("name", "")
        version = next((v for v in self.store.versions() if v.label == label), None)
        if version is None:
            return _error(404, f"no version {label[:80]!r}")
        return RedirectResponse(f"/version?id={version.id}", status_code=303)

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
        address = request.client.host if request.client is not None else "unknown"
        try:
            token = self.league.register(name, address)
        except RegistrationRefused as exc:
            refused = _error(429, str(exc))
            refused.headers["Retry-After"] = str(exc.retry_after_s)
            return refused
        except LeagueStoreError as exc:
            return _error(409, str(exc))
        return _json({"author": name, "token": token})

    async def ladder(self, request: Request) -> Response:
        viewer = self.viewer(request)
        if isinstance(viewer, Response):
            return viewer
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
                "faults": self._latest_faults(None, viewer),
            }
        )

    async def matches(self, request: Request) -> Response:
        viewer = self.viewer(request)
        if isinstance(viewer, Response):
            return viewer
        raw = request.query_params.get("version")
        version_id = None
        if raw is not None:
            version = self._version(raw)
            if isinstance(version, Response):
                return version
            version_id = version.id
        return _json([self._match(m, viewer) for m in self._latest(version_id)])

    def _latest(self, version_id: int | None, limit: int = LATEST) -> list[StoredMatch]:
        """The latest stored matches (of the version ``version_id``), newest first."""
        if version_id is None:
            return self.store.matches(latest=limit)
        return self.store.matches_of(version_id, latest=limit)

    def _latest_faults(self, version: Version | None, viewer: Viewer) -> list[dict[str, Any]]:
        """The latest faults (of ``version``), newest first, each with its match and where to
        debug it."""
        found: list[dict[str, Any]] = []
        label = None if version is None else version.label
        stored = self.store.matches_with_faults(None if version is None else version.id)
        for match in reversed(stored):
            faults = [f for f in match.faults if label is None or f.bot == label]
            if not faults:
                continue
            shown = self._match(match, viewer)
            for fault in shown["faults"]:
                if label is None or fault["bot"] == label:
                    found.append({"match": match.match_id, **fault, "links": shown["links"]})
            if len(found) >= LATEST:
                return found[:LATEST]
        return found

    def _own_seats(self, bots: Sequence[str], viewer: Viewer) -> set[int]:
        """The seats whose version's private side (stderr, fault messages) ``viewer`` sees."""
        return {seat for seat, bot in enumerate(bots) if viewer.sees_private_of(bot)}

    def _match(self, match: StoredMatch, viewer: Viewer) -> dict[str, Any]:
        """A stored match for the lists: a fault's message (which can quote its bot's stderr
        or name cards) only to its version's author once the deal-set is done, and to the
        organiser; the replay and the debugger once the deal-set is done."""
        done = self.store.dealset(match.deal).done
        own = self._own_seats(match.bots, viewer)
        opened = done and match.record is not None
        query = urlencode({"id": match.match_id})
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
                {
                    "seat": f.seat,
                    "bot": f.bot,
                    "kind": f.kind,
                    **(
                        {"message": f.message}
                        if viewer.organiser or (done and f.seat in own)
                        else {"message": None, "withheld": True}
                    ),
                }
                for f in match.faults
            ],
            "links": {
                "replay": f"/api/replay/{match.deal}/{match.rotation}",
                "debugger": f"/match?{query}",
                "record": f"/api/record?{query}",
            }
            if opened
            else None,
        }

    def _recorded(self, request: Request) -> tuple[Viewer, StoredMatch] | Response:
        """Who asks for which match's record (``?id=``), or the error to answer: the record is
        given once its deal-set is done (before then it would show cards still in play)."""
        viewer = self.viewer(request)
        if isinstance(viewer, Response):
            return viewer
        match_id = request.query_params.get("id", "")
        found = parse_match_id(match_id)
        if found is None:
            return _error(400, f"id {match_id[:80]!r}: expected a match id, GAME/sN/rN")
        try:
            dealset = self.store.dealset(found[0])
        except LeagueStoreError:
            return _error(404, f"{match_id}: no such deal-set")
        if not dealset.done:
            return _json(
                {
                    "error": f"{match_id}: its deal-set is still being played (the cards stay "
                    "sealed until it is done)",
                    "seats_allowed": [],
                },
                403,
            )
        match = self.store.match(dealset.id, found[1])
        if match is None or match.match_id != match_id:
            return _error(404, f"{match_id}: no such match")
        if match.record is None:
            return _error(404, f"{match_id}: no record of that match")
        return viewer, match

    async def _replay(self, match: StoredMatch) -> Replay | Response:
        """The match's record, checked line by line against the rules (as arena replay)."""
        record = match.record
        if record is None:
            return _error(404, "no record of that match")
        try:
            return await trio.to_thread.run_sync(lambda: replay_record(record))
        except (ReplayError, OSError) as exc:
            return _error(500, f"{match.match_id}: its record cannot be read: {exc}")

    async def _entries(self, match: StoredMatch) -> list[dict[str, Any]] | Response:
        """The match's record's entries as written (without the reader's own notes)."""
        replay = await self._replay(match)
        if isinstance(replay, Response):
            return replay
        return [
            {k: v for k, v in entry.items() if not k.startswith("_")} for entry in replay.entries
        ]

    async def match(self, request: Request) -> Response:
        """The debugger's data (arena serve's ``/api/match``) for a league match: every hand
        (its deal-set is done); a decision's stderr and a fault's message only of the seats
        whose version is the viewer's (all of them for the organiser)."""
        asked = self._recorded(request)
        if isinstance(asked, Response):
            return asked
        viewer, match = asked
        raw = request.query_params.get("seat", "all")
        if raw != "all" and not (raw.isascii() and raw.isdigit() and len(raw) < 3):
            return _error(400, f"seat {raw[:20]!r}: expected a seat number or all")
        seat = None if raw == "all" else int(raw)
        if seat is not None and seat >= match.players:
            return _error(400, f"seat {seat}: the match has seats 0 to {match.players - 1}")
        entries = await self._entries(match)
        if isinstance(entries, Response):
            return entries
        own = self._own_seats(match.bots, viewer)
        _leave_out_others(entries, own)
        try:
            frames = match_frames(entries, seat)
        except MatchViewError as exc:
            return _error(500, f"{match.match_id}: {exc}")
        return _json(
            {
                "match_id": match.match_id,
                "stored": None,
                "referee": dict(match.referee) if match.referee else None,
                "running": False,
                "sealed": False,
                "all_hands_allowed": True,
                "seats_allowed": list(range(match.players)),
                "strained": None,
                "stderr_seats": sorted(own),
                **frames,
            }
        )

    async def record(self, request: Request) -> Response:
        """The match's record (JSON lines, SPEC 8) to download, for ``arena replay FILE --seat S
        --ask N --bot CMD``: another author's bot's stderr left out, its faults' messages
        withheld."""
        asked = self._recorded(request)
        if isinstance(asked, Response):
            return asked
        viewer, match = asked
        entries = await self._entries(match)
        if isinstance(entries, Response):
            return entries
        _leave_out_others(entries, self._own_seats(match.bots, viewer))
        lines = [msgspec.json.encode(entry) for entry in entries]
        name = match.match_id.replace("/", "-") + ".jsonl"
        return Response(
            b"\n".join(lines) + b"\n",
            media_type="application/x-ndjson",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

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
        matches = self.store.matches_of(version.id)
        data = _shown(version, viewer)
        data["history"] = self._history(version)
        data["matches"] = [self._match(m, viewer) for m in matches[-LATEST:][::-1]]
        data["faults"] = self._latest_faults(version, viewer)
        rows = {
            scope: next((r for r in table if r.bot == version.label), None)
            for scope, table in self.league.standings().tables.items()
        }
        data["fault_counts"] = {
            scope: dict(row.faults) for scope, row in rows.items() if row is not None
        }
        if viewer.sees_private(version):
            data["stderr"] = self._stderr_logs(version)
        return _json(data)

    def _history(self, version: Version) -> dict[str, list[dict[str, Any]]]:
        """The version's rating after each deal-set it sat in, per game and overall (the games
        in the league file's order, then overall; a table it never played in left out)."""
        scopes: dict[str, list[dict[str, Any]]] = {label: [] for label in self.league.plans}
        scopes[OVERALL] = []
        for point in self.store.rating_history(version.id):
            scopes.setdefault(point.scope, []).append(
                {
                    "dealset": point.dealset,
                    "at": point.at,
                    "mu": point.mu,
                    "sigma": point.sigma,
                    "low": point.mu - RATING_Z * point.sigma,
                    "high": point.mu + RATING_Z * point.sigma,
                }
            )
        return {scope: points for scope, points in scopes.items() if points}

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
        viewer = self.viewer(request)
        if isinstance(viewer, Response):
            return viewer
        try:
            dealset = self.store.dealset(int(request.path_params["dealset"]))
        except (LeagueStoreError, ValueError):
            return _error(404, "no such deal-set")
        if not dealset.done:
            return _error(403, "its deal-set is still being played (the cards stay sealed)")
        match = self.store.match(dealset.id, int(request.path_params["rotation"]))
        if match is None or match.record is None:
            return _error(404, "no record of that match")
        replay = await self._replay(match)
        if isinstance(replay, Response):
            return replay
        _leave_out_others(replay.entries, self._own_seats(match.bots, viewer))
        console = Console(record=True, width=110, file=io.StringIO())
        console.print(render_replay(replay, None))
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
            Route("/match", self.match_page),
            Route("/bot", self.bot_page),
            Route("/api/match", self.match),
            Route("/api/record", self.record),
            Route("/api/submit", self.submit, methods=["POST"]),
        ]


NAME_EXPECTED_TEXT = "1-40 letters, digits or _ - (starting with a letter or digit)"


def _leave_out_others(entries: Sequence[dict[str, Any]], own: set[int]) -> None:
    """A record's entries with what only its own author sees of a seat not in ``own`` left
    out: its decisions' stderr, and its faults' messages (which may quote it) withheld."""
    for entry in entries:
        if entry.get("seat") in own:
            continue
        if entry.get("type") == "reply":
            entry.pop("stderr", None)
        elif entry.get("type") == "fault" and isinstance(entry.get("message"), str):
            entry["message"] = WITHHELD


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
