"""``arena play --web`` in a real browser (Debian's headless chromium through playwright): a person
plays a whole match of each game by clicking; only legal cards and choices can be clicked; the
page's data (every message it got) never holds a card hidden from the person's seat; it works at
a phone's width; axe-core (where vendored) finds no critical or serious violation. Screenshots go to $ARENA_TEST_ARTIFACTS/screenshots (or the test's tmp folder)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from arena.games import GAMES
from arena.referee.record import read_record
from tests.web.conftest import CARD, ROOT, arena_env
from tests.web.test_browser import CHROMIUM, launch
from tests.web.test_match_table import serious_violations

pytest.importorskip("arena.web.server", reason="the web extra is not installed")
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install -e '.[browser]')"
)
if not CHROMIUM.exists():
    pytest.skip("no /usr/bin/chromium: the browser test needs it", allow_module_level=True)

RANDOM_BOT = "python3 sample_bots/python/random_bot.py"  # (the system's: bots run as another user)
CLICKABLE = "button.card.legal:not([disabled]), button.choice"


def start(game: str, record: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "play", game, "--bot", RANDOM_BOT, "--web"]
        + ["--port", "0", "--seed", "5", "--record", str(record), *extra],
        cwd=ROOT,
        env=arena_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    for line in process.stderr:
        found = re.search(r"your seat is at (http://\S+)", line)
        if found:
            threading.Thread(target=process.stderr.read, daemon=True).start()
            return process, found[1]
    process.wait()
    raise AssertionError(f"arena play --web printed no address (exit {process.returncode})")


def hidden_cards_seen(record: Path, seat: int, messages: list[dict]) -> list[str]:
    """Cards the page was told while the rules hid them from ``seat``: at each request, the
    messages since the previous one are checked against the cards hidden at that moment (the
    other hands and the stock, replayed from the record), from the start of that deal on."""
    entries = read_record(record)
    header = entries[0]
    spec = GAMES[header["game"]]
    state = spec.new_match(header["players"], header["options"], header["seed"])
    deal_starts = state.DEAL_STARTS  # (the events the game declares start a deal)
    actions = iter(e for e in entries if e["type"] == "action")
    leaks: list[str] = []
    since = 0
    for index, message in enumerate(messages):
        if message["type"] != "request":
            continue
        while state.seat_to_move != seat or state.legal_actions() != message["legal"]:
            state.apply(next(actions)["action"])
        window = messages[since : index + 1]
        starts = [i for i, m in enumerate(window) if m.get("event", {}).get("type") in deal_starts]
        if starts:  # a new deal: the cards told before it were seen in an earlier deal
            window = window[starts[-1] :]
        hidden = state.hidden_from(seat)
        leaks += [card for card in CARD.findall(json.dumps(window)) if card in hidden]
        since = index + 1
        state.apply(next(actions)["action"])  # the person's own answer
    return leaks


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_a_person_plays_a_whole_match_by_clicking(game_id, tmp_path: Path) -> None:
    record = tmp_path / "match.jsonl"
    artifacts = Path(os.environ.get("ARENA_TEST_ARTIFACTS") or tmp_path) / "screenshots"
    artifacts.mkdir(parents=True, exist_ok=True)
    process, url = start(game_id, record, "--pace-ms", "0", "--seat", "1")
    try:
        with sync_api.sync_playwright() as playwright:
            browser = launch(playwright)
            phone = game_id == "vingt-down"  # one game at a phone's width
            size = {"width": 390, "height": 844} if phone else {"width": 1100, "height": 900}
            page = browser.new_page(viewport=size)
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(url)
            clicks = 0
            while not page.locator("#result").count():
                target = page.locator(f"{CLICKABLE}, #result").first
                target.wait_for(timeout=60000)
                if page.locator("#result").count():
                    break
                if clicks < 12:  # every card of the hand not legal now cannot be clicked
                    request = page.evaluate("arenaMessages.filter(m => m.type === 'request').pop()")
                    for button in page.locator("#hand button.card").all():
                        code = button.get_attribute("data-card")
                        assert button.is_disabled() == (code not in request["legal"]), code
                if clicks == 3:
                    page.locator("main").screenshot(path=str(artifacts / f"play-{game_id}.png"))
                    assert serious_violations(page) == []
                try:
                    target.click(timeout=5000)
                    clicks += 1
                except sync_api.Error:
                    continue  # redrawn under the click (a message came): look again
            assert clicks > 0
            assert not errors, errors
            if phone:
                width = page.evaluate("document.documentElement.scrollWidth")
                assert width <= 390, f"sideways scrolling at phone width: {width}px"
            assert serious_violations(page) == []
            messages = page.evaluate("arenaMessages")
            assert messages[-1]["type"] == "match_end" and messages[-1]["reason"] == "completed"
            assert all(m.get("view", {}).get("seat", 1) == 1 for m in messages)
            assert not any("hands" in m.get("view", {}) for m in messages)
            assert hidden_cards_seen(record, 1, messages) == []
            scores = [int(x) for x in page.locator("#result .final-score").all_inner_texts()]
            browser.close()
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
    result = read_record(record)[-1]
    assert result["type"] == "result" and result["scores"] == scores
    person_actions = [e for e in read_record(record) if e["type"] == "action" and e["seat"] == 1]
    assert person_actions and all(e["by"] == "bot" for e in person_actions)
