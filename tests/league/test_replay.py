"""A league's replay page: a stored match's record, replayed through the rules, once its
deal-set is over (its cards sealed until then), over the league's real server."""

from __future__ import annotations

from pathlib import Path

from tests.league.conftest import league_toml, open_store, serving
from tests.waiting import wait_for


def _done_and_open(toml: Path) -> tuple[int, int | None] | None:
    """A deal-set played whole, and one still being played (None if none is)."""
    store = open_store(toml)
    try:
        sets = [store.dealset(d) for d in sorted({d for d, _r, _b in store.iter_match_rows()})]
        done = [s.id for s in sets if s.done]
        if not done:
            return None
        still = [s.id for s in sets if not s.done and store.stored_rotations(s.id)]
        return done[0], still[0] if still else None
    finally:
        store.close()


def test_a_finished_deal_sets_matches_are_replayed_and_open_ones_stay_sealed(
    tmp_path: Path,
) -> None:
    toml = league_toml(tmp_path)
    with serving(toml) as server:
        done, still = wait_for("a deal-set played whole", lambda: _done_and_open(toml))
        status, text = server.get(f"api/replay/{done}/0")
        assert status == 200, text
        assert "eight-rounds" in text and "seed" in text  # the replay's heading
        assert "house1" in text
        if still is not None:
            status, answer = server.get(f"api/replay/{still}/0")
            assert status == 403 and "sealed" in answer["error"]
        status, answer = server.get(f"api/replay/{done}/99")
        assert status == 404 and answer["error"] == "no record of that match"
        status, answer = server.get("api/replay/99999/0")
        assert status == 404
