"""The pages in a real browser (Debian's headless chromium through playwright): against a
running tournament (``arena tournament --web``) the standings appear and update with no reload;
then, served from its results file (``arena serve``, so that nothing depends on how fast the
tournament ends), a finished match steps to its end with the right final scores, a seat's view
shows one hand, a bot's page lists its faults, and a phone-width screen needs no sideways
scrolling. Screenshots go to $ARENA_TEST_ARTIFACTS/screenshots (or the test's tmp folder)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import trio

from arena.tournament.store import ResultStore
from arena.web.access import SECRET_ENV, bot_token
from tests.web.conftest import ROOT, arena_env, tournament_toml

CHROMIUM = Path("/usr/bin/chromium")
SECRET = "the-organisers-secret-of-the-browser-test"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytest.importorskip("arena.web.server", reason="the web extra is not installed")
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install -e '.[browser]')"
)
if not CHROMIUM.exists():
    pytest.skip(
        "no /usr/bin/chromium (apt-get install chromium): the browser test needs it",
        allow_module_level=True,
    )


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("ARENA_TEST_ARTIFACTS") or tmp_path) / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextlib.contextmanager
def serving(*args: str):
    """Run ``arena ARGS`` (which serves pages); yield (URL it printed, process); stop it after."""
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", *args],
        cwd=ROOT,
        env={**arena_env(), SECRET_ENV: SECRET},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        url = None
        assert process.stdout is not None
        for line in process.stdout:
            found = re.search(r"watch it at (http://\S+)", line)
            if found:
                url = found[1]
                break
        assert url, f"arena {args[0]} printed no URL"
        # Keep reading its output, so a full pipe never stalls it.
        threading.Thread(target=process.stdout.read, daemon=True).start()
        yield url, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def refused(message, errors: list[str]) -> None:
    """A style or script the Content-Security-Policy refused (a console error)."""
    if message.type == "error" and "Content Security Policy" in message.text:
        errors.append(message.text)


def launch(playwright):
    try:
        return playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
    except Exception as error:  # a chromium that cannot start here: say why, do not fail
        pytest.skip(f"chromium would not start: {str(error).splitlines()[0]}")


def test_pages_in_a_real_browser(tmp_path: Path, artifacts: Path) -> None:
    toml = tournament_toml(tmp_path, deals=4, name="browsertest")  # 64 matches
    results = tmp_path / "out" / "results.sqlite"
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)  # first: the tournament must still run when the page opens
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("console", lambda m: refused(m, errors))
        documents: list[str] = []
        page.on(
            "request",
            lambda r: documents.append(r.url) if r.resource_type == "document" else None,
        )

        # The running tournament's page: standings appear, then update with no reload.
        with serving("tournament", str(toml), "--web", "0") as (url, _process):
            page.goto(url)
            page.wait_for_selector('section[data-scope="overall"] tr[data-bot="heuristic"]')
            first = int(page.inner_text("#completed"))
            # (awaited through locators: the page's policy forbids evaluating strings)
            sync_api.expect(page.locator("#completed")).not_to_have_text(str(first), timeout=60000)
            assert int(page.inner_text("#completed")) > first
            assert documents == [url], "the page reloaded instead of updating"
            assert page.locator('section[data-scope="overall"] tbody tr').count() == 4
            page.screenshot(path=str(artifacts / "tournament.png"))
            # Stopped here (Ctrl-C): what it stored is served next, as after any stop.

        # The stopped tournament, served from its results file, to the organiser (a deal cut
        # short by the stop keeps its cards sealed from others: tests/web/test_sealed.py).
        with serving("serve", str(results), "--port", "0", "--organiser") as (url, _process):
            page.goto(url + "?token=" + SECRET)  # becomes a cookie, and leaves the address
            assert page.url == url
            # A finished match: step, then to its end; the final scores are the stored ones.
            page.wait_for_selector("#latest a[href^='/match']")
            href = page.locator("#latest a[href^='/match']").first.get_attribute("href")
            match_id = re.search(r"id=([^&]+)", href)[1].replace("%2F", "/")
            page.goto(url.rstrip("/") + href)
            page.wait_for_selector("#frame")
            last = int(page.inner_text("#frame").split("/")[1])
            for _ in range(5):
                page.keyboard.press("ArrowRight")
            assert page.inner_text("#frame").startswith("5 /")
            page.wait_for_selector("#decision")
            page.keyboard.press("End")
            assert page.inner_text("#frame") == f"{last} / {last}"
            shown = [int(x) for x in page.locator("#result .final-score").all_inner_texts()]
            with ResultStore.open_read(results) as store:
                stored = next(m for m in store.matches() if m.match_id == match_id)
            assert shown == list(stored.scores)
            page.keyboard.press("ArrowLeft")
            assert page.locator("#result").count() == 0
            page.keyboard.press("Home")
            for _ in range(14):
                page.keyboard.press("ArrowRight")
            page.screenshot(path=str(artifacts / "match.png"))

            # As one seat saw it: that seat's hand only.
            page.select_option("#seat", "1")
            with_cards = page.locator(".seatrow").filter(has=page.locator(".card"))
            sync_api.expect(with_cards).to_have_count(1, timeout=15000)
            assert with_cards.get_attribute("data-seat") == "1"
            page.screenshot(path=str(artifacts / "match-seat.png"))

            # A bot's page lists its faults with their reasons.
            page.goto(url + "bot?name=illegal")
            page.wait_for_selector("#bot-faults .fault-row")
            assert "illegal" in page.inner_text("#bot-faults")
            assert "answered" in page.inner_text("#bot-faults")
            page.screenshot(path=str(artifacts / "bot.png"))

            # The duplicate view of that deal: every rotation side by side.
            game, table, deal = re.match(r"(.+)/t(\d+)/d(\d+)/r\d+$", match_id).groups()
            page.goto(url + f"deal?game={game}&table={table}&deal={deal}")
            page.wait_for_selector("#duplicate")
            page.screenshot(path=str(artifacts / "duplicate.png"))

            # Phone width: nothing wider than the screen but the scrollable tables.
            phone = browser.new_page(viewport={"width": 390, "height": 844})
            phone.goto(url + "?token=" + SECRET)
            phone.wait_for_selector('section[data-scope="overall"]')
            assert phone.evaluate("document.documentElement.scrollWidth") <= 391
            phone.screenshot(path=str(artifacts / "phone.png"))
            phone.goto(url.rstrip("/") + href + "&seat=0")
            phone.wait_for_selector("#frame")
            assert phone.evaluate("document.documentElement.scrollWidth") <= 391
            browser.close()
    assert errors == []


async def test_a_match_being_played_in_a_browser_with_no_token_a_bots_and_the_organisers(
    played: Path, tmp_path: Path, artifacts: Path
) -> None:
    """The match page of a match being played: a spectator is told why nothing is shown and
    gets no card; the owner of seat 1's bot, with its token in the address (which becomes a
    cookie), sees seat 1 only, and may not choose another; the organiser sees all hands. No
    style or script is refused by the Content-Security-Policy on the way."""
    from tests.web.test_sealed import SECRET as SERVER_SECRET
    from tests.web.test_sealed import serving as serving_table

    async with serving_table(played, tmp_path, "records file") as (url, table, _source):
        running = table.running
        token = bot_token(SERVER_SECRET, running.bots[1])

        def browse() -> None:
            with sync_api.sync_playwright() as playwright:
                browser = launch(playwright)
                errors: list[str] = []
                spectator = browser.new_page()
                spectator.on("pageerror", lambda error: errors.append(str(error)))
                spectator.goto(url + "match?id=" + running.match_id)
                message = spectator.wait_for_selector("#error").inner_text()
                assert "being played" in message and spectator.locator(".card").count() == 0

                owner = browser.new_page()
                owner.on("pageerror", lambda error: errors.append(str(error)))
                owner.on("console", lambda m: refused(m, errors))
                owner.goto(url + "match?id=" + running.match_id + "&token=" + token)
                assert "token" not in owner.url
                owner.wait_for_selector("#frame")
                owner.keyboard.press("Home")  # the deal (later, played cards are everyone's)
                assert owner.inner_text("#frame").startswith("0 /")
                rows = owner.locator(".seatrow").all()
                with_cards = [
                    r.get_attribute("data-seat") for r in rows if r.locator(".card").count()
                ]
                assert with_cards == ["1"]
                assert owner.locator("#seat option").all_inner_texts() == [
                    f"as seat 1 ({running.bots[1]}) saw it"
                ]
                owner.screenshot(path=str(artifacts / "running-owner.png"))

                organiser = browser.new_page()
                organiser.goto(url + "?token=" + SERVER_SECRET)
                organiser.goto(url + "match?id=" + running.match_id)
                organiser.wait_for_selector("#frame")
                assert organiser.locator("#seat option").first.inner_text() == "all hands"
                rows = organiser.locator(".seatrow").all()
                assert all(r.locator(".card").count() for r in rows) and len(rows) == 4
                browser.close()
                assert errors == []

        await trio.to_thread.run_sync(browse)
