"""The match page's card table (static/table.js) in a real browser: in a match being played it
never shows a hidden card, at any step, to the owner of a seat (only its own hand and the cards
played) nor to the organiser (every hand face down while it runs); a finished match shows every
hand face up, the trick with who played what, and the score sheet; the state inspector is one
click away. axe-core (tests/web/axe, where present) finds no critical or serious violation."""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import pytest
import trio

from arena.web.access import bot_token
from tests.web.test_browser import CHROMIUM, launch

pytest.importorskip("arena.web.server", reason="the web extra is not installed")
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install -e '.[browser]')"
)
if not CHROMIUM.exists():
    pytest.skip("no /usr/bin/chromium: the browser test needs it", allow_module_level=True)

AXE = Path(__file__).parent / "axe" / "axe.min.js"  # axe-core, vendored (tests/web/axe)
SHOWN = "els => els.map(e => e.dataset.card)"
TABLE = "document.getElementById('matchtable')"


# Every running animation ended (a cancelled one counts as ended). (Not wait_for_function:
# the page's policy forbids evaluating strings in it; evaluate awaits the promise.)
SETTLED = "Promise.all(document.getAnimations().map((a) => a.finished.catch(() => null))).then(() => true)"


def serious_violations(page, within: str = "document") -> list[str]:
    """axe-core's critical and serious violations of the page as it is now, ``within`` a part of
    it (a JS expression; the match page's table is checked alone: the inspector's are
    tests/web/test_browser.py's); none checked where axe is not vendored."""
    if not AXE.exists():
        return []
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.evaluate(AXE.read_text())
    # A card still fading in (its arrival animation) has, for that moment, less contrast than
    # it ends with: the page is judged as it rests.
    page.evaluate(SETTLED)
    found = page.evaluate(f"axe.run({within}, {{resultTypes: ['violations']}})")
    return [
        f"{page.url} {v['id']} ({v['impact']}): {v['help']}: "
        + "; ".join(str(node["target"]) for node in v["nodes"][:4])
        for v in found["violations"]
        if v["impact"] in ("critical", "serious")
    ]


def all_hands(url: str, match_id: str, secret: str) -> dict:
    query = urllib.parse.urlencode({"id": match_id, "seat": "all"})
    request = urllib.request.Request(
        f"{url}api/match?{query}", headers={"Authorization": f"Bearer {secret}"}
    )
    with urllib.request.urlopen(request) as answer:
        return json.loads(answer.read())


def step_through(page, hidden_at) -> int:
    """Step the page from its first frame to its last; at each, the cards the table shows must
    hold none of ``hidden_at(frame)``. Returns the number of frames checked."""
    page.keyboard.press("Home")
    last = int(page.inner_text("#frame").split("/")[1])
    for frame in range(last + 1):
        sync_api.expect(page.locator("#frame")).to_have_text(f"{frame} / {last}")
        shown = set(page.eval_on_selector_all("#matchtable [data-card]", SHOWN))
        leaked = shown & hidden_at(frame)
        assert not leaked, f"frame {frame}: the table shows hidden cards {sorted(leaked)}"
        page.keyboard.press("ArrowRight")
    return last + 1


async def test_a_running_matchs_table_never_shows_a_hidden_card(
    played: Path, tmp_path: Path
) -> None:
    from tests.web.test_sealed import SECRET, serving

    async with serving(played, tmp_path, "records file") as (url, table, _source):
        running = table.running
        token = bot_token(SECRET, running.bots[1])

        def browse() -> None:
            data = all_hands(url, running.match_id, SECRET)
            hands = [frame["view"]["hands"] for frame in data["frames"]]

            def others(frame: int) -> set[str]:
                return {c for s, hand in enumerate(hands[frame]) if s != 1 for c in hand}

            def every_hand(frame: int) -> set[str]:
                return {c for hand in hands[frame] for c in hand}

            with sync_api.sync_playwright() as playwright:
                browser = launch(playwright)
                errors: list[str] = []
                owner = browser.new_page()
                owner.on("pageerror", lambda error: errors.append(str(error)))
                # (the frames of the first answer, stepped through: the live stream would
                # replace them as the test fixture's record is looked at again)
                owner.route("**/api/match/stream*", lambda route: route.abort())
                owner.goto(url + "match?id=" + running.match_id + "&token=" + token)
                owner.wait_for_selector("#matchtable")
                owner.keyboard.press("Home")
                mine = set(
                    owner.eval_on_selector_all('#matchtable [data-seat="1"] [data-card]', SHOWN)
                )
                assert mine == set(hands[0][1])  # its own hand, face up
                assert owner.locator("#matchtable .backs").count() == 3  # the others face down
                assert step_through(owner, others) == len(hands)
                assert serious_violations(owner, TABLE) == []

                organiser = browser.new_page()
                organiser.on("pageerror", lambda error: errors.append(str(error)))
                organiser.route("**/api/match/stream*", lambda route: route.abort())
                organiser.goto(url + "?token=" + SECRET)
                organiser.goto(url + "match?id=" + running.match_id)
                organiser.wait_for_selector("#matchtable, #error")
                assert not errors and not organiser.locator("#error").count(), (
                    errors,
                    organiser.inner_text("main"),
                )
                assert organiser.locator("#matchtable .backs").count() == 4
                step_through(organiser, every_hand)
                # the inspector, one click away, still shows the organiser every hand
                organiser.click("#to-inspector")
                rows = organiser.locator(".seatrow").all()
                assert len(rows) == 4 and all(r.locator(".card").count() for r in rows)
                browser.close()
                assert errors == []

        await trio.to_thread.run_sync(browse)


def test_a_finished_matchs_table_shows_every_hand_the_trick_and_the_score_sheet(
    played: Path, tmp_path: Path
) -> None:
    from tests.web.test_browser import serving

    artifacts = Path(os.environ.get("ARENA_TEST_ARTIFACTS") or tmp_path) / "screenshots"
    artifacts.mkdir(parents=True, exist_ok=True)
    with serving("serve", str(played), "--port", "0") as (url, _process):
        with sync_api.sync_playwright() as playwright:
            browser = launch(playwright)
            page = browser.new_page(viewport={"width": 900, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(url)
            page.wait_for_selector("#latest a[href^='/match']")
            links = page.locator("#latest a[href^='/match']").all()
            hrefs = [link.get_attribute("href") for link in links]
            games_seen = set()
            for href in hrefs:
                game = href.split("id=")[1].split("%2F")[0]
                if game in games_seen:
                    continue
                games_seen.add(game)
                page.goto(url.rstrip("/") + href)
                page.wait_for_selector("#matchtable")
                page.keyboard.press("Home")
                # all hands of a finished match, face up
                assert page.locator("#matchtable .backs").count() == 0
                assert page.locator("#matchtable .seat [data-card]").count() > 0
                for _ in range(9):
                    page.keyboard.press("ArrowRight")
                played_cards = page.locator("#matchtable .played [data-card]").count()
                last_trick = page.locator("#matchtable .centre [data-card]").count()
                assert played_cards or last_trick
                page.locator("#matchtable").screenshot(path=str(artifacts / f"table-{game}.png"))
                assert serious_violations(page, TABLE) == []
                page.keyboard.press("End")
                page.wait_for_selector("#scoresheet")
                assert page.locator("#scoresheet tr").count() >= 2
            phone = browser.new_page(viewport={"width": 390, "height": 844})
            phone.goto(url.rstrip("/") + hrefs[0])
            phone.wait_for_selector("#matchtable")
            assert phone.evaluate("document.documentElement.scrollWidth") <= 391
            assert serious_violations(phone, TABLE) == []
            browser.close()
            assert errors == []
