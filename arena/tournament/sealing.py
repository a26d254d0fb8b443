"""A run's tournament seed (SPEC 10.3): the organiser's, public; or a secret one, drawn for a new
results file and read from it on a resume, sealed by its commitment, and revealed when the
tournament ends. ``arena tournament`` and ``arena compare`` open their results file through
:func:`open_sealed` and reveal through :func:`reveal`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from arena.tournament.config import TournamentConfig
from arena.tournament.runner import StopReport, stored_count
from arena.tournament.schedule import ScheduledMatch
from arena.tournament.seal import PUBLIC_SEED_NOTE, DealSecret, SealState
from arena.tournament.store import ResultStore, StoreError, is_results_file


@dataclass
class SealedRun:
    """The config a run plays (its seed known), its secret (None: a public seed), and what to
    tell the organiser once at the start."""

    config: TournamentConfig
    secret: DealSecret | None = None
    notes: list[str] = field(default_factory=list)


def seal_seed(config: TournamentConfig, store: ResultStore) -> SealedRun:
    """The seed ``config`` plays with in the results file ``store`` (opened for the run, its
    definition not yet replaced): the organiser's; else the file's secret (a resume); else the
    public seed an older run stored matches with (kept, so they still count); else a new
    secret, kept in the file with its commitment. StoreError refuses a run that would deal
    anything more from a seed already revealed (SPEC 10.4)."""
    path = store.path
    state = store.seal()
    if config.public_seed:
        return SealedRun(
            config,
            notes=[
                f"seed {config.seed} is set ({config.source}): {PUBLIC_SEED_NOTE}; leave the "
                "seed out for a secret one"
            ],
        )
    if state.revealed is not None:
        sealed = _sealed(config, state.revealed, revealed=True)
        if store.fingerprint() != sealed.fingerprint():
            raise StoreError(
                f"{path}: this tournament has ended and its secret seed was revealed "
                f"(seed {state.revealed.seed}), so another definition cannot deal more matches "
                f"from it: give another results file, or --restart to set its "
                f"{store.count_matches()} stored matches aside (SPEC 10.4) and deal from a new "
                "secret seed"
            )
        return SealedRun(sealed, state.revealed, [f"deals revealed already: {_revealed(state)}"])
    if state.secret is not None:
        if state.commitment != state.secret.commitment:
            raise StoreError(
                f"{path}: its secret seed does not give its commitment {state.commitment}: the "
                "file was changed; keep it aside and give another results file"
            )
        secret = state.secret
    elif state.commitment is not None:
        raise StoreError(
            f"{path}: holds the commitment {state.commitment} but not the secret seed its "
            "matches were dealt from: the file was changed; keep it aside and give another "
            "results file"
        )
    else:
        kept = store.definition().get("seed")
        if isinstance(kept, int) and not isinstance(kept, bool) and store.has_matches():
            # Begun by an arena before sealed seeds (whose default was 0), or with a seed
            # since left out: its stored matches were dealt from that seed and keep counting.
            return SealedRun(
                replace(config, seed=kept, public_seed=True),
                notes=[
                    f"{path}: keeps seed {kept}, which its stored matches were dealt from: "
                    f"{PUBLIC_SEED_NOTE}; --restart (which sets those {store.count_matches()} "
                    "matches aside, SPEC 10.4) deals from a new secret seed"
                ],
            )
        secret = DealSecret.draw()
        store.keep_secret(secret)
    return SealedRun(
        _sealed(config, secret, revealed=False),
        secret,
        [
            f"deals sealed: commitment {secret.commitment} (SHA-256 of the secret seed and a "
            "salt, revealed when the tournament ends: SPEC 10.3)"
        ],
    )


def _sealed(config: TournamentConfig, secret: DealSecret, *, revealed: bool) -> TournamentConfig:
    return replace(config, seed=secret.seed, commitment=secret.commitment, revealed=revealed)


def _revealed(state: SealState) -> str:
    assert state.revealed is not None
    return f"seed {state.revealed.seed}, salt {state.revealed.salt} (commitment {state.commitment})"


def open_sealed(
    config: TournamentConfig, *, restart: bool = False, schedule: str | None = None
) -> tuple[ResultStore, SealedRun]:
    """Open ``config``'s results file for a run, its seed settled (:func:`seal_seed`) before
    the file's definition is replaced. ``schedule``: a special schedule the file's matches
    follow (``compare``), noted in it for the checks of ``arena replay --check``."""
    settled: list[SealedRun] = []
    config, hashing = _hashing_kept(config) if not restart else (config, None)

    def settle(store: ResultStore) -> tuple[str, Mapping[str, Any]]:
        run = seal_seed(config, store)
        settled.append(run)
        return run.config.fingerprint(), run.config.definition()

    store = ResultStore.open_for_run(
        config.results,
        name=config.name,
        fingerprint=config.fingerprint(),
        definition=config.definition(),
        restart=restart,
        output=config.output,
        settle=settle,
    )
    if schedule is not None:
        store.save_note("schedule", schedule)
    if store.aside is not None:  # said first: where the restarted file's matches are now
        settled[0].notes.insert(0, store.aside.line())
    if hashing is not None:
        settled[0].notes.append(hashing)
    if config.deal_set:
        settled[0].notes.append(
            f"deals from the deal set of {config.deal_set_source} ({len(config.deal_set)} "
            "seeds): a deal set is public by nature, so a bot that knows it can know every "
            "card (SPEC 10.3)"
        )
    return store, settled[0]


def _hashing_kept(config: TournamentConfig) -> tuple[TournamentConfig, str | None]:
    """A results file begun by an arena that hashed only the files ``argv`` names keeps being
    hashed so while it holds matches (SPEC 10.4), so that its matches still count; the config
    to run and the line that says so (None: the bots are hashed whole)."""
    if not is_results_file(config.results):
        return config, None
    try:
        with ResultStore.open_read(config.results) as store:
            old = store.definition()
            held = store.count_matches()
    except StoreError:
        return config, None  # (opening it for the run says what is wrong)
    if not held or not old.get("bots") or "bots_hashed" in old or old.get("name") != config.name:
        return config, None
    return replace(config, programs=config.legacy_programs, legacy_hashing=True), (
        f"{config.results}: begun by an arena that hashed only the files a bot's argv names; "
        f"its {held} stored matches keep counting on those terms, so a change elsewhere in a "
        "bot's folder is not noticed in this file: --restart (which sets them aside) hashes "
        "each bot's whole folder (SPEC 10.4)"
    )


def has_ended(
    schedule: Sequence[ScheduledMatch], store: ResultStore, aborted: int, report: StopReport | None
) -> bool:
    """Whether a tournament has ended with this run (SPEC 10.3): nothing ``aborted``, and every
    match of its ``schedule`` stored, or, run in rounds (``report``), its stop rule decided."""
    if aborted:
        return False
    if report is not None:
        return report.decided
    return stored_count(schedule, store.completed_ids()) == len(schedule)


def reveal(store: ResultStore, run: SealedRun) -> str | None:
    """The tournament has ended: reveal its secret seed (once); the line that says so."""
    if run.secret is None or run.config.revealed:
        return None
    store.reveal(run.secret)
    return (
        f"deals revealed: seed {run.secret.seed}, salt {run.secret.salt} (commitment "
        f"{run.secret.commitment}); `arena replay --check {store.path}` checks every deal"
    )
