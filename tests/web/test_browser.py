"""The pages in a real browser (Debian's headless chromium through playwright): against a
running tournament (``arena tournament --web``) the standings appear and update in place, with
no reload, an opened table staying open, and "live" shown; then, served from its results file
(``arena serve``, so that nothing depends on how fast the tournament ends), a finished match
steps to its end with the right final scores, a seat's view shows one hand, a bot's page lists
its faults, and a phone-width screen needs no sideways scrolling. A finished file's pages: not
"live", the referee's latency warning and its strained matches as the results file says, a
comparison's verdict as ``arena compare`` printed it, and no critical or serious accessibility
violation (axe-core, tests/web/axe) on any page at desktop and phone width. Screenshots go to
$ARENA_TEST_ARTIFACTS/screenshots (or the test's tmp folder)."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote

import pytest
import trio

from arena.referee.results import FaultRecord
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

        # The running tournament's page: standings appear, then update in place with no reload:
        # a table of pairs opened stays open (the same element), and the page says "live".
        with serving("tournament", str(toml), "--web", "0") as (url, _process):
            page.goto(url)
            page.wait_for_selector('section[data-scope="overall"] tr[data-bot="heuristic"]')
            pairs = page.locator('section[data-scope="overall"] details.pairs')
            pairs.locator("summary").click()
            pairs.evaluate("element => { element.seenBefore = true; }")
            first = int(page.inner_text("#completed"))
            # (awaited through locators: the page's policy forbids evaluating strings)
            sync_api.expect(page.locator("#completed")).not_to_have_text(str(first), timeout=60000)
            assert int(page.inner_text("#completed")) > first
            assert documents == [url], "the page reloaded instead of updating"
            assert page.locator('section[data-scope="overall"] tbody tr').count() == 4
            assert pairs.evaluate("element => element.open && element.seenBefore === true")
            sync_api.expect(page.locator("#live")).to_be_visible()
            page.screenshot(path=str(artifacts / "tournament.png"))
            # (the page of a running tournament, its pairs open, read as a screen reader would)
            assert at_both_widths(page, "#progress") == []
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


# -- a finished file's pages: latency, a comparison, accessibility --------------------------------

AXE = Path(__file__).parent / "axe" / "axe.min.js"  # axe-core 4.14.1 (MPL-2.0), as npm ships it
AXE_SRI = "sha256-KTSJmUUM3yhJqOcLeRL8LahahJ2jnA0NU5T1HUqe2Vw="  # its digest, as npm lists it
WIDTHS = {"desktop": {"width": 1200, "height": 900}, "phone": {"width": 390, "height": 844}}
# Counts the live stream's summaries once the page has handled each (an init script: run by the
# browser itself, not subject to the page's Content-Security-Policy).
HEARD = """
const Stream = window.EventSource;
window.EventSource = class extends Stream {
  constructor(...args) {
    super(...args);
    this.addEventListener("summary", () => setTimeout(() => console.info("heard a summary")));
  }
};
"""


def test_the_vendored_axe_is_the_published_one() -> None:
    digest = base64.b64encode(hashlib.sha256(AXE.read_bytes()).digest()).decode()
    assert f"sha256-{digest}" == AXE_SRI


# Every running animation ended (a cancelled one counts as ended). (Not wait_for_function:
# the page's policy forbids evaluating strings in it; evaluate awaits the promise.)
SETTLED = "Promise.all(document.getAnimations().map((a) => a.finished.catch(() => null))).then(() => true)"


def serious_violations(page) -> list[str]:
    """axe-core's critical and serious violations of the page as it is now."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.evaluate(AXE.read_text())
    # (judged as the page rests, not while a card fades in)
    page.evaluate(SETTLED)
    found = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{page.url} {v['id']} ({v['impact']}): {v['help']}: "
        + "; ".join(str(node["target"]) for node in v["nodes"][:4])
        for v in found["violations"]
        if v["impact"] in ("critical", "serious")
    ]


def at_both_widths(page, selector: str) -> list[str]:
    """The serious violations of the page (once ``selector`` shows) at each width."""
    found = []
    for size in WIDTHS.values():
        page.set_viewport_size(size)
        page.wait_for_selector(selector)
        found += serious_violations(page)
    page.set_viewport_size(WIDTHS["desktop"])
    return found


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def strained(played: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The played tournament's matches with the referee's latency figures (SPEC 10.6): all calm
    but the last stored, whose worst latency reached 0.9 of the margin and which had a timeout:
    (results file, that match's id)."""
    with ResultStore.open_read(played) as store:
        definition, name = store.definition(), store.name()
        matches = store.matches()
    margin = definition["time"]["margin_ms"]
    calm = {"p50_ms": 0.02, "p99_ms": 0.08, "max_ms": 0.5, "load_per_core": 0.3}
    path = tmp_path_factory.mktemp("strained") / "results.sqlite"
    with ResultStore.open_for_run(path, name=name, fingerprint="f", definition=definition) as out:
        for match in matches[:-1]:
            out.save(replace(match, referee=calm))
        last = matches[-1]
        late = FaultRecord.read(1, last.bots[1], "timeout", 7, "no answer within 2000 ms")
        out.save(
            replace(
                last,
                referee={**calm, "p99_ms": 3.0, "max_ms": 0.9 * margin},
                faults=(*last.faults, late),
            )
        )
    return path, last.match_id


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A finished ``arena compare`` of two random bots (6 deals of two games): (its results
    file, what it printed)."""
    folder = tmp_path_factory.mktemp("compared")
    bot = f"{sys.executable} sample_bots/python/random_bot.py"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena",
            "compare",
            f"new={bot} 1",
            "--against",
            f"old={bot} 2",
            *(f"--field=f{i}={bot} {i + 2}" for i in (1, 2, 3)),
            "--games",
            "vingt-down,alles-oder-nichts",
            "--deals",
            "6",
            "--seed",
            "3",
            "--results",
            str(folder / "results.sqlite"),
        ],
        cwd=ROOT,
        env=arena_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1, 2), done.stderr
    return folder / "results.sqlite", done.stdout


def test_a_finished_files_pages_latency_and_accessibility(
    browser, strained: tuple[Path, str], artifacts: Path
) -> None:
    """Served from a finished file: the page is not "live" once its stream has spoken; the
    referee's latency warning and the strained match are shown as the results file says,
    beside the match in the latest list and on its page; every page (the tournament's, a
    bot's, a match's as all hands and as a seat saw it, the duplicate view) has no critical or
    serious accessibility violation at desktop and phone width."""
    results, suspect = strained
    standings = subprocess.run(
        [sys.executable, "-m", "arena", "standings", str(results), "--json"],
        cwd=ROOT,
        env=arena_env(),
        capture_output=True,
        check=True,
        text=True,
    )
    warning = json.loads(standings.stdout)["overall"]["referee_latency"]["warning"]
    assert warning and suspect in warning
    page = browser.new_page(viewport=WIDTHS["desktop"])
    page.add_init_script(HEARD)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: refused(m, errors))
    with serving("serve", str(results), "--port", "0") as (url, _process):
        with page.expect_console_message(lambda m: m.text == "heard a summary", timeout=30000):
            page.goto(url)
        assert page.locator("#live").is_hidden()
        assert page.inner_text("#latency-warning") == warning
        assert page.locator(f"#latency a[href='/match?id={quote(suspect, safe='')}']").count()
        line = page.locator("#latest tr").filter(has_text=suspect)
        assert line.locator(".strained").inner_text() == "strained"
        assert page.locator("#latest .strained").count() == 1
        page.screenshot(path=str(artifacts / "latency.png"), full_page=True)
        violations = at_both_widths(page, "#latency")

        page.goto(url + "match?id=" + quote(suspect, safe=""))
        sync_api.expect(page.locator("#referee .warning")).to_contain_text("strained")
        violations += at_both_widths(page, "#frame")
        page.select_option("#seat", "1")
        violations += at_both_widths(page, ".seatrow")
        page.goto(url + "bot?name=illegal")
        violations += at_both_widths(page, "#bot-faults")
        game, table, deal = re.match(r"(.+)/t(\d+)/d(\d+)/r\d+$", suspect).groups()
        page.goto(url + f"deal?game={game}&table={table}&deal={deal}")
        violations += at_both_widths(page, "#duplicate")
    page.close()
    assert violations == []
    assert errors == []


def test_a_comparisons_verdict_on_its_page(
    browser, compared: tuple[Path, str], artifacts: Path
) -> None:
    """A comparison's results file: its tournament page counts its own matches and links to its
    verdict, which shows what ``arena compare`` printed (per game: its verdict and why, deals,
    mean difference and interval; overall: the verdict line), free of serious accessibility
    violations."""
    results, printed = compared
    games = re.findall(
        r"^  (\S+): (better|worse|no change|not better|undecided) \((.*)\): NEW - OLD per deal "
        r"([-+]\S+), 95% interval (\[\S+, \S+\]) over (\d+) deals$",
        printed,
        re.M,
    )
    assert len(games) == 2, printed
    said = printed.strip().splitlines()[-2]  # (the last line: the counts of matches)
    page = browser.new_page(viewport=WIDTHS["desktop"])
    with serving("serve", str(results), "--port", "0") as (url, _process):
        page.goto(url)
        sync_api.expect(page.locator("#completed")).to_have_text("96")
        assert " of 96" in page.inner_text("#progress")
        violations = at_both_widths(page, "#compare-link")
        page.click("#compare-link a")
        page.wait_for_selector("#per-game")
        assert page.url == url + "compare"
        assert page.inner_text("#overall") == said
        assert "LLR" not in page.inner_text("body")
        for game, verdict, why, mean, interval, deals in games:
            row = page.locator(f'#per-game tr[data-game="{game}"]')
            assert row.locator(".verdict-cell").inner_text() == verdict
            assert row.locator(".why").inner_text() == why
            assert row.locator(".mean").inner_text() == mean
            assert row.locator(".interval").inner_text() == interval
            assert row.locator(".deals").inner_text() == deals
            assert re.fullmatch(r"[-+]\d+\.\d\d|–", row.locator(".t").inner_text())
        page.screenshot(path=str(artifacts / "compare.png"), full_page=True)
        violations += at_both_widths(page, "#per-game")
    page.close()
    assert violations == []
