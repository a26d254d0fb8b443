"""The league in a real browser (Debian's chromium through playwright): an author registers, logs
in with the token shown, uploads a bot folder through the form, sees it built and checked on
its version page, and then playing on the ladder; a bad archive gets its reason on the page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.league.conftest import WAIT_S, bot_files, league_toml, serving, targz
from tests.web.test_browser import CHROMIUM, launch, refused

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install -e '.[browser]')"
)
if not CHROMIUM.exists():
    pytest.skip("no /usr/bin/chromium: the browser test needs it", allow_module_level=True)


def test_an_author_registers_uploads_and_plays_in_a_real_browser(tmp_path: Path) -> None:
    toml = league_toml(tmp_path, house=2, extra='[organiser]\nregistration = "open"\n')
    good = tmp_path / "mybot.tar.gz"
    good.write_bytes(targz({f"mybot/{n}": c for n, c in bot_files("mybot").items()}))
    bad = tmp_path / "escape.tar.gz"
    bad.write_bytes(targz({**bot_files(), "../escaped": "x"}))
    expect = sync_api.expect
    with serving(toml) as server, sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page()
            page.set_default_timeout(WAIT_S * 1000)
            errors: list[str] = []
            page.on("console", lambda message: refused(message, errors))
            page.goto(server.url + "me")
            page.fill("#register-name", "carol")
            page.click("#register button")
            expect(page.locator("#register-result")).to_contain_text("Your token")
            token = page.locator("#register-result").inner_text().rsplit(" ", 1)[-1]

            page.fill("#token", token)
            page.click("#login button")
            expect(page.locator("main")).to_contain_text("Logged in as carol")

            page.set_input_files("#archive", str(bad))
            page.click("#upload button")
            expect(page.locator("#outcome")).to_contain_text("leaving the bot folder")

            page.set_input_files("#archive", str(good))
            page.click("#upload button")
            # (expect's own timeout is 5 s, not the page's: a build and check under load is longer)
            expect(page.locator("#outcome-status")).to_contain_text("active", timeout=WAIT_S * 1000)
            expect(page.locator("#outcome pre")).to_contain_text("arena check")
            expect(page.locator("#versions")).to_contain_text("carol.mybot.v1")

            page.click("#outcome-status a")
            expect(page.locator("h1")).to_have_text("carol.mybot.v1")
            expect(page.locator("#status")).to_have_text("active")
            expect(page.locator("#log")).to_contain_text(" 0 failed")

            def playing_on_the_ladder() -> bool:
                page.goto(server.url)
                row = page.locator(".ladder-row", has_text="carol.mybot.v1").first
                if not row.count():
                    return False
                deals = row.locator("td").nth(5).inner_text()
                return int(deals) > 0

            deadline_tries = int(WAIT_S)
            for _ in range(deadline_tries):
                if playing_on_the_ladder():
                    break
                page.wait_for_timeout(1000)
            else:
                pytest.fail("carol's version never reached the ladder")
            expect(page.locator("table").first).to_contain_text("house.house1.v1")
            assert re.search(r"\d+ matches", page.locator("h2").first.inner_text())

            # someone else, not logged in, sees the version but not its log
            other = browser.new_context().new_page()
            other.goto(page.url)
            other.click("text=carol.mybot.v1")
            expect(other.locator("#status")).to_have_text("active")
            assert other.locator("#log").count() == 0
            assert not errors, errors  # nothing the Content-Security-Policy refused
        finally:
            browser.close()


def test_a_versions_history_chart_and_the_debugger_in_a_real_browser(tmp_path: Path) -> None:
    """The version page draws its rating history as a chart with its numbers beside it (axe:
    no critical or serious violation, at desktop and phone width); the chart tells the rating
    from its interval without colour; a match's debugger link opens the league's record in the
    match page, where alice sees her bot's stderr and never bob's."""
    from tests.league.conftest import add_author, open_store
    from tests.league.test_ladder import noisy_bot
    from tests.waiting import wait_for
    from tests.web.test_browser import at_both_widths

    toml = league_toml(tmp_path, house=1)
    alice, bob = add_author(toml, "alice"), add_author(toml, "bob")
    expect = sync_api.expect
    with serving(toml) as server, sync_api.sync_playwright() as playwright:
        ids = {}
        for name, token in (("alice", alice), ("bob", bob)):
            status, answer = server.post("api/submit", noisy_bot(f"{name.upper()}-SECRET"), token)
            assert status == 200, answer
            ids[name] = answer["id"]

        def done_with_alice() -> int:
            store = open_store(toml)
            try:
                return sum(ids["alice"] in d.seats for d in store.done_dealsets()) >= 2
            finally:
                store.close()

        wait_for("two deal-sets of alice's", done_with_alice)
        browser = launch(playwright)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.set_default_timeout(WAIT_S * 1000)
            errors: list[str] = []
            page.on("console", lambda message: refused(message, errors))
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(server.url + "me")
            page.fill("#token", alice)
            page.click("#login button")
            expect(page.locator("main")).to_contain_text("Logged in as alice")

            page.goto(f"{server.url}version?id={ids['alice']}")
            for scope in ("eight-rounds", "overall"):
                section = page.locator(f'section.history[data-scope="{scope}"]')
                expect(section.locator("svg.rating-chart")).to_have_count(1)
                chart = section.locator("svg.rating-chart")
                assert chart.get_attribute("role") == "img"
                assert f"{scope}: rating after each of" in chart.locator("title").text_content()
                rows = section.locator("tr.history-row").count()
                assert rows >= 2
                assert section.locator("circle.mu-point").count() == rows
                assert len(chart.locator("polyline.mu").get_attribute("points").split()) == rows
                # solid for the rating, dashed for its interval: told apart without colour
                dashes = [
                    line.evaluate("(node) => getComputedStyle(node).strokeDasharray")
                    for line in chart.locator("polyline").all()
                ]
                assert dashes.count("none") == 1 and len(dashes) == 3, dashes
            assert at_both_widths(page, "svg.rating-chart") == []

            page.goto(server.url)
            expect(page.locator("h2", has_text="Latest faults")).to_have_count(1)
            expect(page.locator("a.debugger-link").first).to_be_visible()
            assert at_both_widths(page, "a.debugger-link") == []

            # alice's own decision, in the debugger: her stderr; bob's decision: none shown
            page.goto(f"{server.url}version?id={ids['alice']}")
            link = page.locator("a.debugger-link").first
            match_url = server.url.rstrip("/") + link.get_attribute("href")
            status, match = server.get("api/" + link.get_attribute("href").lstrip("/"))
            assert status == 200
            seats = {s["bot"]: s["seat"] for s in match["seats"]}
            page.goto(f"{match_url}&seat={seats['alice.noisy.v1']}&decision=1")
            expect(page.locator("#seat-decision")).to_have_text("#1")
            expect(page.locator("#stderr")).to_contain_text("ALICE-SECRET thinking about request")
            page.goto(f"{match_url}&seat={seats['bob.noisy.v1']}&decision=1")
            expect(page.locator("#seat-decision")).to_have_text("#1")
            assert page.locator("#stderr").count() == 0
            assert "BOB-SECRET" not in page.content()
            assert not errors, errors
        finally:
            browser.close()
