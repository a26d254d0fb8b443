"""Golden playthroughs: one per registered game, replayed step by step.

Regenerate only on purpose: ``python -m pytest tests/games/test_golden.py --update-golden``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.games import GAMES
from arena.games.playthrough import record_playthrough

GOLDEN = Path(__file__).parent.parent / "golden"
DEFAULT_SEED = 2026


def dump(playthrough: dict) -> str:
    """One step per line, so a changed rule shows up as a readable diff."""
    head = {k: v for k, v in playthrough.items() if k != "steps"}
    lines = ["{", f'"head": {json.dumps(head, sort_keys=True)},', '"steps": [']
    steps = [json.dumps(step, sort_keys=True) for step in playthrough["steps"]]
    lines.append(",\n".join(steps))
    lines.append("]}")
    return "\n".join(lines) + "\n"


def load(path: Path) -> dict:
    data = json.loads(path.read_text())
    return {**data["head"], "steps": data["steps"]}


@pytest.mark.parametrize("game_id", list(GAMES))
def test_golden_playthrough(game_id, update_golden):
    spec = GAMES[game_id]
    path = GOLDEN / f"{game_id}.json"
    if update_golden:
        players, seed, options = min(spec.player_counts), DEFAULT_SEED, {}
        if path.exists():
            old = load(path)
            players, seed, options = old["players"], old["seed"], old["options"]
        path.write_text(dump(record_playthrough(spec, players, seed, options)))
    assert path.exists(), f"{game_id} has no golden playthrough: run with --update-golden"
    golden = load(path)
    fresh = json.loads(
        json.dumps(record_playthrough(spec, golden["players"], golden["seed"], golden["options"]))
    )
    assert len(fresh["steps"]) == len(golden["steps"])
    for index, (want, got) in enumerate(zip(golden["steps"], fresh["steps"])):
        assert got == want, f"{game_id}: step {index} differs from the golden playthrough"
    assert fresh["events"] == golden["events"]
    assert fresh["result"] == golden["result"]
