"""The match page as a debugger, in a real browser (chromium through playwright): a link opens a
seat's decision N (as ``arena replay --decisions`` numbers it) and the step stays in the address;
jumps to the next and previous fault, trick, deal and decision of a seat; autoplay; the view's
fields in words; the decision's stderr (SPEC.md 8); a labelled seat select."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import pytest

from arena.referee.record import replay_record
from arena.tournament.store import ResultStore
from tests.web.conftest import BOTS, play_tournament, tournament_toml
from tests.web.test_browser import SECRET, launch, refused, serving, sync_api

ONE_TABLE = """
[[games]]
game = "alles-oder-nichts"
players = 4
max_tables = 1
"""


@pytest.fixture(scope="module")
def debugged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tournament of one table: a bot that talks on stderr, one that faults."""
    folder = tmp_path_factory.mktemp("debugging")
    talker = {"talker": ("tests/bots/transcript_bot.py", "/dev/null")}
    others = {bot: BOTS[bot] for bot in ("random-py", "heuristic", "illegal")}
    toml = tournament_toml(folder, name="debugging", seed=5, bots=talker | others, games=ONE_TABLE)
    return play_tournament(toml)


def test_the_match_page_as_a_debugger(debugged: Path, tmp_path: Path) -> None:
    with ResultStore.open_read(debugged) as store:
        match = next(iter(store.matches()))
    assert match.record is not None and match.record.span is not None
    replay = replay_record(match.record)
    talker, illegal = match.bots.index("talker"), match.bots.index("illegal")
    requests = [e for e in replay.entries if e["type"] == "request" and e["seat"] == talker]
    third = requests[2]
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("console", lambda m: refused(m, errors))
        with serving("serve", str(debugged), "--port", "0", "--organiser") as (url, _):
            page.goto(url + "?token=" + SECRET)
            base = url.rstrip("/") + "/match?id=" + quote(match.match_id, safe="")

            # A link to the talker's decision 3: that decision, its stderr beside it.
            page.goto(f"{base}&seat={talker}&decision=3")
            page.wait_for_selector("#seat-decision")
            assert page.inner_text("#seat-decision").strip() == "#3"
            assert f"seat {talker} (talker)" in page.inner_text("#decision")
            legal = len(third["legal"])
            expected = f"thinking about request {third['id']} ({legal} legal)"
            assert page.inner_text("#stderr").strip() == expected
            # The step is in the address: the same link opens the same frame.
            sync_api.expect(page).to_have_url(re.compile(r"step=\d+"))
            step = int(re.search(r"step=(\d+)", page.url)[1])
            assert page.inner_text("#frame").startswith(f"{step} /")
            page.goto(page.url)
            page.wait_for_selector("#seat-decision")
            assert page.inner_text("#frame").startswith(f"{step} /")
            assert page.locator("label[for=seat]").count() == 1

            # Faults: next and back again.
            page.goto(f"{base}&seat=all&step=0")
            page.wait_for_selector("#next-fault")
            page.click("#next-fault")
            sync_api.expect(page.locator("#decision")).to_have_class(re.compile("faulted"))
            assert f"seat {illegal} (illegal)" in page.inner_text("#decision")
            fault_at = int(page.inner_text("#frame").split("/")[0])
            page.click("#next-trick")
            assert "trick" in page.inner_text("#happened .events")
            trick_at = int(page.inner_text("#frame").split("/")[0])
            assert trick_at > fault_at
            page.click("#prev-fault")  # the nearest fault before the trick
            back = int(page.inner_text("#frame").split("/")[0])
            assert fault_at <= back < trick_at and "faulted" in page.get_attribute(
                "#decision", "class"
            )
            while back > fault_at:
                page.click("#prev-fault")
                back = int(page.inner_text("#frame").split("/")[0])
            assert back == fault_at and page.locator("#prev-fault").is_disabled()

            # A seat's decisions, one after another.
            page.select_option("#jump-seat", str(talker))
            for _ in range(3):
                page.click("#next-seat")
                assert f"seat {talker} (talker)" in page.inner_text("#decision")
            page.click("#next-deal")
            assert "round start" in page.inner_text("#happened .events")

            # Fields in words, no empty lists drawn as commas.
            table = page.inner_text("#table")
            assert re.search(r"\b\d+ cards?\b", table) and "hand_counts" not in table
            assert ", ," not in table and "hand counts" not in table

            # Autoplay moves on by itself, and stops.
            page.goto(f"{base}&seat=all&step=0")
            page.wait_for_selector("#autoplay")
            page.select_option("#speed", "8")
            page.click("#autoplay")
            sync_api.expect(page.locator("#frame")).not_to_have_text(
                re.compile(r"^0 /"), timeout=15000
            )
            page.click("#autoplay")
            page.screenshot(path=str(tmp_path / "debugger.png"))
        browser.close()
    assert errors == []
