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
            expect(page.locator("#outcome-status")).to_contain_text("active")
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
