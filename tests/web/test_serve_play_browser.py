"""``arena serve --allow-play`` in a real browser: a bot's page shows "play against" it; the button
opens the seat's page, where the person plays a few decisions by clicking; once the page is
closed the match stops and the bots' processes end (SPEC.md 11)."""

from __future__ import annotations

import signal
import uuid
from pathlib import Path

import pytest

from arena.referee.record import read_record
from tests.waiting import wait_for
from tests.web.test_browser import CHROMIUM, launch
from tests.web.test_serve_play import marked, play_toml, serve

pytest.importorskip("arena.web.server", reason="the web extra is not installed")
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install -e '.[browser]')"
)
if not CHROMIUM.exists():
    pytest.skip("no /usr/bin/chromium: the browser test needs it", allow_module_level=True)

CLICKABLE = "button.card.legal:not([disabled]), button.choice"


def test_a_person_follows_play_against_and_clicks_a_few_decisions(played: Path) -> None:
    mark = uuid.uuid4().hex
    folder = played.parent / "played"
    before = set(folder.glob("*.jsonl")) if folder.exists() else set()
    process, url = serve(play_toml(played, mark), "--allow-play")
    try:
        with sync_api.sync_playwright() as playwright:
            browser = launch(playwright)
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(url)
            page.locator("#play button.play").first.wait_for(timeout=30000)
            assert page.locator("#play button.play").count() == 1  # one game: one button
            page.goto(url + "bot?name=random-py")
            button = page.locator("#play button.play")
            button.wait_for(timeout=30000)
            assert button.inner_text() == "play eight-rounds against random-py"
            button.click()
            page.wait_for_url("**/play/*/")
            clicks = 0
            while clicks < 3 and not page.locator("#result").count():
                target = page.locator(CLICKABLE).first
                target.wait_for(timeout=60000)
                try:
                    target.click(timeout=5000)
                    clicks += 1
                except sync_api.Error:
                    continue  # redrawn under the click (a message came): look again
            page.locator(f"{CLICKABLE}, #result").first.wait_for(timeout=60000)  # (answered)
            messages = page.evaluate("arenaMessages")
            assert not errors, errors
            assert messages[0]["type"] == "match_start" and messages[0]["seat"] == 0
            assert [s["name"] for s in messages[0]["seats"][1:]] == ["random-py", "random-py-2"]
            browser.close()
        wait_for("the bots to end after the page closed", lambda: not marked(mark))
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
    (record,) = set(folder.glob("*.jsonl")) - before
    entries = read_record(record)
    person = [e for e in entries if e["type"] == "action" and e["seat"] == 0]
    assert len(person) >= 3 and all(e["by"] == "bot" for e in person)  # (the seat answered)
    assert entries[-1]["type"] == "stopped"
