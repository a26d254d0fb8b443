"""The league at run time: its versions, the deal-sets it plays, the ladder it keeps, and the
submissions it builds. One :class:`League` per server; every store call runs on the server's
trio thread (the slow parts, unpacking, building and checking, run in a worker thread first).

Playing (SPEC.md 12.3): deal-sets are chosen by the matchmaker (arena.league.matchmaking),
written to the store before their first match, and played rotation by rotation, each match
stored as it ends. On a restart the deal-sets not done are played on from their first missing
rotation: a match stored is never played again, a match cut by a kill is played again whole.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import secrets
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from arena.bots.installed import BotsDirError, read_installed
from arena.bots.manifest import BotFolderError, load_manifest
from arena.bots.submit import SubmitError, arena_check, submit
from arena.games.cards import derive_seed
from arena.league.archive import ArchiveError, ArchiveLimits, unpack_archive
from arena.league.config import HOUSE_AUTHOR, LeagueConfig
from arena.league.matchmaking import Entrant, choose_table
from arena.league.store import HISTORY_NOTE, Author, DealSet, LeagueStore, RatingPoint, Version
from arena.referee.bot_spec import BotSpec
from arena.referee.confine import SealPlan, bwrap_argv, bwrap_problem
from arena.referee.match import run_match
from arena.referee.process import BotProcess
from arena.referee.spawn import OWN_UID_USER, UidLease
from arena.tournament.config import GamePlan, TournamentConfig
from arena.tournament.pool import BotPool, hide_from_each_other, play_pooled_match
from arena.tournament.schedule import ScheduledMatch, rotate
from arena.tournament.standings import OVERALL, Standings, StandingsFold
from arena.tournament.store import StoredMatch
from arena.tournament.summary import RunSummary

if TYPE_CHECKING:  # (Dask is an optional extra: its executor is imported by --cluster only)
    from arena.tournament.executors.dask_cluster import DaskCluster

IDLE_WAIT_S = 5.0  # with no table to play, look again this often (or when a version arrives)
HOUR_S = 3600.0
OUT_OF_THE_FILE = "no longer in the league file"
BUILD_FILE_MB = 256  # the build sandbox's private /tmp
# A build's environment: none of the server's own (which holds the organiser's token)
BUILD_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp/home",
    "TMPDIR": "/tmp/tmp",
    "LANG": "C.UTF-8",
}


class RegistrationRefused(Exception):
    """Too many registrations from one address in the last hour; nothing was stored."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class UploadRefused(Exception):
    """An upload refused before anything was stored (a bad archive, the rate limit); one line."""


@dataclass(frozen=True)
class UploadOutcome:
    """A processed upload: the version it made (active, or rejected with its log)."""

    version: Version
    accepted: bool


@dataclass(frozen=True)
class _Built:
    bot: str
    accepted: bool
    log: str
    content_hash: str | None = None
    folder: str | None = None


class League:
    def __init__(
        self, config: LeagueConfig, store: LeagueStore, cluster: DaskCluster | None = None
    ) -> None:
        self.config = config
        self.store = store
        self.cluster = cluster  # --cluster: deal-sets played on Dask (one connection, kept)
        self.plans = {plan.label: plan for plan in config.games}
        self.house = {spec.name: spec for spec in config.house_bots}
        self.public_seed = config.seed
        # without a seed in the file, every deal-set draws a secret one of its own
        self.fold = StandingsFold(games=list(self.plans))
        self._fold_stored()
        self.changed = trio.Event()  # set when a version arrives or a match is stored
        self._build_slot = trio.CapacityLimiter(1)
        self.sandboxed_builds = bwrap_problem() is None
        self.playing: set[int] = set()  # deal-sets being played now

    # -- versions ------------------------------------------------------------------------------

    def register_house_bots(self) -> None:
        """The league file's own bots, as versions of the author "house" (made on first start);
        a house bot no longer in the file is retired, and active again when it is back."""
        house = self.store.author_named(HOUSE_AUTHOR) or self.store.add_author(
            HOUSE_AUTHOR,
            secrets.token_urlsafe(32),  # a token nobody is ever given
        )
        known = {v.bot: v for v in self.store.versions(author_id=house.id)}
        for name in self.house:
            if name not in known:
                self.store.add_version(
                    house.id, name, status="active", log="a house bot of the league file"
                )
        for name, version in known.items():
            if name not in self.house and version.status == "active":
                self.store.set_status(version.id, "retired", OUT_OF_THE_FILE)
            elif name in self.house and version.note == OUT_OF_THE_FILE:
                self.store.set_status(version.id, "active")

    def spec_of(self, version: Version) -> BotSpec:
        """How a version runs: named by its label, in the league's sandbox."""
        if version.author == HOUSE_AUTHOR:
            spec = self.house[version.bot]
        else:
            assert version.folder is not None and version.content_hash is not None
            spec = replace(read_installed(version.folder).spec, user=self.uploaded_user())
        return replace(spec, name=version.label, sandbox=self.config.sandbox or spec.sandbox)

    def uploaded_user(self) -> str | None:
        """Whom an uploaded bot runs as: as root, a user id of its own per process (``@own``),
        whatever the organiser's ARENA_BOT_USER says for trusted bots; else the server's."""
        return OWN_UID_USER if os.geteuid() == 0 else None

    def hidden_spec(self, spec: BotSpec) -> BotSpec:
        """``spec`` with the league's files hidden from it but for its own folder (SPEC 7)."""
        (hidden,) = hide_from_each_other([spec], self.own_files())
        return hidden

    def own_files(self) -> list[str]:
        """The league's own files, which no bot may read: its folder and its file."""
        source = [self.config.source] if os.path.isfile(self.config.source) else []
        return [str(self.config.folder), *source]

    def playable(self) -> list[Version]:
        """The active versions that can run (a house bot taken out of the file cannot)."""
        return [
            v
            for v in self.store.versions(status="active")
            if v.author != HOUSE_AUTHOR or v.bot in self.house
        ]

    def standings(self) -> Standings:
        return self.fold.standings()

    # -- the ratings' history --------------------------------------------------------------------

    def _fold_stored(self) -> None:
        """Fold every stored match, in order (deal-set by deal-set). A store kept before the
        ratings' history was (``meta.history`` unset) gets it now: each done deal-set's
        versions' ratings as they stood after its last match."""
        filling = self.store.note(HISTORY_NOTE) is None
        done = {d.id: d for d in self.store.done_dealsets()} if filling else {}
        finished = self.store.finish_times() if filling else {}
        points: list[RatingPoint] = []
        matches = sorted(self.store.matches(), key=self.fold.order)
        for i, match in enumerate(matches):
            self.fold.add(match)
            last_of_its_dealset = i + 1 == len(matches) or matches[i + 1].deal != match.deal
            if last_of_its_dealset and match.deal in done:
                points += self.ratings_after(done[match.deal], finished.get(match.deal, ""))
        if filling:
            self.store.keep_ratings(points)
            self.store.keep_note(HISTORY_NOTE, "kept")

    def ratings_after(self, dealset: DealSet, at: str = "") -> list[RatingPoint]:
        """The ratings of the deal-set's versions in its game's table and overall, as the fold
        stands now (kept as their history when the deal-set is done)."""
        points = []
        for version_id in dict.fromkeys(dealset.seats):
            label = self.store.version(version_id).label
            for scope in (dealset.game, OVERALL):
                rating = self.fold.rating(scope, label)
                if rating is not None:
                    points.append(RatingPoint(dealset.id, scope, version_id, *rating, at))
        return points

    # -- matchmaking and play --------------------------------------------------------------------

    def next_dealset(self) -> DealSet | None:
        """Write the next deal-set to play (the game with the fewest deal-sets first), or None."""
        versions = {v.label: v for v in self.playable()}
        standings = self.fold.standings()
        counts = self.store.dealsets_per_game()
        label_of = {v.id: v.label for v in self.store.versions()}
        for label in sorted(
            self.plans, key=lambda g: (counts.get(g, 0), list(self.plans).index(g))
        ):
            plan = self.plans[label]
            by_id, met = self.store.seatings(label)
            seated = Counter({label_of[v]: n for v, n in by_id.items()})
            meetings = Counter({frozenset(label_of[v] for v in pair): n for pair, n in met.items()})
            rows = {row.bot: row for row in standings.tables.get(label, [])}
            entrants = [
                Entrant(
                    name,
                    rows[name].mu if name in rows else DEFAULT_MU,
                    rows[name].sigma if name in rows else DEFAULT_SIGMA,
                    seated[name],
                )
                for name in versions
            ]
            table = choose_table(entrants, plan.players, meetings)
            if table is None:
                continue
            seed = (
                secrets.randbits(64)
                if self.public_seed is None
                else derive_seed(self.public_seed, f"{label}/s{self.store.dealset_count() + 1}")
            )
            return self.store.add_dealset(label, seed, [versions[name].id for name in table])
        return None

    async def play(self) -> None:
        """Play deal-sets for ever: the unfinished ones first, then as the matchmaker chooses."""
        try:
            await self._play()
        finally:
            if self.cluster is not None:
                await self.cluster.aclose()

    async def _play(self) -> None:
        slots = trio.CapacityLimiter(self.config.concurrency)
        async with trio.open_nursery() as nursery:

            async def play_one(dealset: DealSet) -> None:
                try:
                    await self.play_dealset(dealset)
                finally:
                    self.playing.discard(dealset.id)
                    slots.release_on_behalf_of(dealset.id)

            for dealset in self.store.open_dealsets():
                await slots.acquire_on_behalf_of(dealset.id)
                self.playing.add(dealset.id)
                nursery.start_soon(play_one, dealset)
            while True:
                token = object()
                await slots.acquire_on_behalf_of(token)
                chosen = self.next_dealset()
                slots.release_on_behalf_of(token)
                if chosen is None:
                    self.changed = trio.Event()
                    with trio.move_on_after(IDLE_WAIT_S):
                        await self.changed.wait()
                    continue
                await slots.acquire_on_behalf_of(chosen.id)
                self.playing.add(chosen.id)
                nursery.start_soon(play_one, chosen)

    async def play_dealset(self, dealset: DealSet) -> None:
        """Play the rotations of ``dealset`` not stored yet, storing each as it ends."""
        plan = self.plans.get(dealset.game)
        versions = [self.store.version(v) for v in dealset.seats]
        unplayable = [
            v.label
            for v in versions
            if v.status == "disqualified" or (v.author == HOUSE_AUTHOR and v.bot not in self.house)
        ]
        if plan is None or unplayable:
            # (what it stored stays, and counts in the ratings kept)
            self.store.finish_dealset(dealset.id, self.ratings_after(dealset))
            return
        specs = hide_from_each_other(
            list({v.label: self.spec_of(v) for v in versions}.values()), self.own_files()
        )
        tournament = TournamentConfig(
            name=self.config.name,
            seed=self.public_seed,
            bots=tuple(specs),
            games=(plan,),
            time_control=self.config.time_control,
            max_faults=self.config.max_faults,
            match_time_limit_s=self.config.match_time_limit_s,
            output=self.config.folder,
            results=self.config.store_path,
            records=True,
        )
        self.config.records_dir.mkdir(parents=True, exist_ok=True)
        labels = tuple(v.label for v in versions)
        stored = self.store.stored_rotations(dealset.id)
        todo = [
            _rotation(plan, dealset, labels, rotation)
            for rotation in range(plan.players)
            if rotation not in stored
        ]
        if self.cluster is not None:
            await self.cluster.play(
                tournament, todo, labels, lambda match: self._keep(dealset, match), RunSummary()
            )
        else:
            pool = BotPool(
                specs,
                start_bot=BotProcess.start,
                time_control=self.config.time_control,
                log_dir=self.config.logs_dir,
            )
            try:
                for match in todo:
                    self._keep(dealset, await play_pooled_match(tournament, match, pool, run_match))
            finally:
                await pool.close_all()
        self.store.finish_dealset(dealset.id, self.ratings_after(dealset))

    def _keep(self, dealset: DealSet, match: StoredMatch) -> None:
        """Store a rotation's match as it ends, unless it is stored already (a cluster plays
        again a batch whose worker was lost, and keeps the first that comes back)."""
        if match.rotation in self.store.stored_rotations(dealset.id):
            return
        self.store.save_match(dealset.id, match.rotation, match)
        self.fold.add(match)
        self.changed.set()

    # -- submissions -----------------------------------------------------------------------------

    def register(self, name: str, address: str) -> str:
        """Register the author ``name`` for a client at ``address``; their token. Refused
        (RegistrationRefused, nothing stored) when ``address`` registered
        organiser.registrations_per_hour authors in the last hour; LeagueStoreError when the
        name is taken."""
        limit = self.config.organiser.registrations_per_hour
        now = time.time()
        recent = self.store.registrations_since(address, now - HOUR_S)
        if len(recent) >= limit:
            # free again when the oldest registration that keeps it at the limit is an hour old
            wait_s = max(1, math.ceil(recent[len(recent) - limit] + HOUR_S - now))
            at = time.strftime("%H:%M UTC", time.gmtime(now + wait_s))
            raise RegistrationRefused(
                f"{limit} registrations from this address in the last hour already (the "
                f"league's organiser.registrations_per_hour): try again in "
                f"{math.ceil(wait_s / 60)} min, after {at}",
                wait_s,
            )
        token = secrets.token_urlsafe(32)
        self.store.add_author(name, token, registered=(address, now, now - HOUR_S))
        return token

    def check_rate(self, author: Author) -> None:
        limit = self.config.organiser.submissions_per_hour
        if self.store.uploads_since(author.id, time.time() - HOUR_S) >= limit:
            raise UploadRefused(
                f"{author.name}: {limit} uploads in the last hour already (the league's "
                "organiser.submissions_per_hour); try again later"
            )

    async def upload(self, author: Author, data: bytes) -> UploadOutcome:
        """Unpack, build, check and install an author's upload as a new version (active, or
        rejected with the log saying why). UploadRefused: nothing was stored but the upload's
        time (which counts against the rate limit)."""
        if author.name == HOUSE_AUTHOR:
            raise UploadRefused("the house author cannot upload (its bots come from the file)")
        self.check_rate(author)
        limit = self.config.limits.upload_mb << 20
        if len(data) > limit:
            raise UploadRefused(
                f"the upload is {len(data) >> 20} MB; expected at most "
                f"{self.config.limits.upload_mb} MB (the league's limits.upload_mb)"
            )
        self.store.count_upload(author.id, time.time())
        async with self._build_slot:
            built = await trio.to_thread.run_sync(self._build, author.name, data)
        if not built.accepted and not built.bot:
            raise UploadRefused(built.log)
        version = self.store.add_version(
            author.id,
            built.bot,
            status="active" if built.accepted else "rejected",
            log=built.log,
            content_hash=built.content_hash,
            folder=built.folder,
        )
        if built.accepted:
            self._keep_active_limit(author)
            self.changed.set()
        return UploadOutcome(version, built.accepted)

    def _keep_active_limit(self, author: Author) -> None:
        active = self.store.versions(author_id=author.id, status="active")
        keep = self.config.organiser.active_versions
        for version in active[: max(0, len(active) - keep)]:
            self.store.set_status(
                version.id,
                "retired",
                f"retired by the league: at most {keep} active versions per author "
                "(organiser.active_versions)",
            )

    def _build(self, author: str, data: bytes) -> _Built:
        """In a worker thread: unpack, build, check and install (no store calls here)."""
        self.config.uploads_dir.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f"{author}-", dir=self.config.uploads_dir))
        limits = ArchiveLimits(self.config.limits.unpacked_mb << 20, self.config.limits.files)
        bot = ""
        # as root, the build runs as a user id of its own (no account, no other process has it)
        lease = UidLease.acquire() if os.geteuid() == 0 else None
        try:
            folder = unpack_archive(data, work / "upload", limits)
            bot = load_manifest(folder).name
            games = tuple(plan.game_id for plan in self.config.games)
            submission = submit(
                folder,
                self.config.bots_dir / author,
                checker=lambda spec: arena_check(
                    self.hidden_spec(replace(spec, user=self.uploaded_user())),
                    sandbox=self.config.sandbox,
                    games=games,
                ),
                wrap_build=self._sandboxed_build if self.sandboxed_builds else None,
                max_build_s=self.config.limits.build_timeout_s,
                build_env=BUILD_ENV,
                build_user=None if lease is None else (lease.uid, lease.uid),
            )
        except ArchiveError as exc:
            return _Built("", False, f"archive refused: {exc}")
        except (BotFolderError, SubmitError, BotsDirError) as exc:
            return _Built(bot, False, _relative(str(exc), work))
        finally:
            if lease is not None:
                lease.release()
            shutil.rmtree(work, ignore_errors=True)
        parts = []
        if not self.sandboxed_builds:
            parts.append("built without a sandbox (bubblewrap cannot run on this server)")
        if submission.already_installed:
            parts.append("identical to a version installed before: not built again")
        if submission.build is not None:
            parts.append(f"build ok in {submission.build.seconds:.1f}s\n{submission.build.output}")
        if submission.check is not None:
            parts.append(submission.check.report)
        return _Built(
            bot,
            True,
            "\n".join(parts).strip(),
            submission.installed.content_hash,
            str(submission.installed.folder),
        )

    def _sandboxed_build(self, argv: list[str], folder: Path) -> list[str]:
        """A build in bubblewrap: no network, the machine read-only, every capability dropped,
        the league's folder hidden but for the bot's own (writable); as root, run as the
        build's own user (submit's ``build_user``)."""
        plan = SealPlan(
            workdir=str(folder),
            own_folder=str(folder),
            program_folders=(),
            hidden=tuple(os.path.realpath(path) for path in self.own_files()),
            file_mb=BUILD_FILE_MB,
            owner=None,
        )
        return bwrap_argv(plan, argv, strict=False, switch_user=os.geteuid() == 0)


MATCH_ID_RE = re.compile(r"^[^/]{1,80}/s(\d{1,12})/r(\d{1,3})$")


def league_match_id(game: str, dealset: int, rotation: int) -> str:
    """A league match's id (SPEC 12.3): ``<game label>/s<deal-set>/r<rotation>``."""
    return f"{game}/s{dealset}/r{rotation}"


def parse_match_id(match_id: str) -> tuple[int, int] | None:
    """(deal-set, rotation) of a league match's id; None for anything else."""
    found = MATCH_ID_RE.match(match_id)
    return None if found is None else (int(found[1]), int(found[2]))


DEFAULT_MU = 25.0  # OpenSkill's prior, for a version not rated yet
DEFAULT_SIGMA = 25.0 / 3


def _rotation(
    plan: GamePlan, dealset: DealSet, labels: tuple[str, ...], rotation: int
) -> ScheduledMatch:
    """The match of ``dealset`` in ``rotation`` (SPEC 12.3)."""
    match_id = league_match_id(plan.label, dealset.id, rotation)
    return ScheduledMatch(
        match_id=match_id,
        game=plan.label,
        game_id=plan.game_id,
        players=plan.players,
        options=plan.options,
        table=dealset.id,
        deal=dealset.id,
        rotation=rotation,
        seed=dealset.seed,
        seats=rotate(labels, rotation),
        # (hex: the record's file name ends with the key's first 12 characters)
        key=hashlib.sha256(match_id.encode()).hexdigest(),
    )


def _relative(message: str, work: Path) -> str:
    """The server's temporary paths left out of what the author is shown."""
    return message.replace(str(work / "upload") + "/", "").replace(str(work), "the upload")
