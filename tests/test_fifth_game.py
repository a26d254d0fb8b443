"""A game is one module: Plain Tricks (tests/games/fifth_game.py), registered here and nowhere
else, goes through `arena check`, a tournament of real bot processes, `arena replay`, the kit
(sampled worlds and a search) and the web match view (its data, and the page in a real browser),
as the four real games do. (The conformance tests run it too: tests/games/test_conformance.py.)"""

from __future__ import annotations

import json
import queue
import random
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
from click.testing import CliRunner
from sample_bot_specs import ROOT, sample_bot

from arena.bots.check import FAILED, PASSED, CheckSettings, run_checks
from arena.cli import main
from arena.games import GAMES, OptionError, find_game, register, unregister
from arena.kit import Deadline, sample_world, search
from arena.tournament.store import ResultStore
from tests.games.fifth_game import SPEC
from tests.web.conftest import CARD
from tests.web.test_server import source_of

server = pytest.importorskip("arena.web.server", reason="the web extra is not installed")


@pytest.fixture(scope="module")
def plain_tricks() -> Iterator[None]:
    register(SPEC)
    try:
        yield
    finally:
        unregister(SPEC.id)


def test_registering_adds_the_game_and_refuses_a_name_taken(plain_tricks) -> None:
    assert GAMES["plain-tricks"] is SPEC and find_game("PLAIN") is SPEC
    with pytest.raises(OptionError, match="already taken: plain, plain-tricks"):
        register(SPEC)
    result = CliRunner().invoke(main, ["games"])
    assert result.exit_code == 0 and "plain-tricks" in result.output


async def test_arena_check_passes_a_sample_bot_on_it(plain_tricks, tmp_path: Path) -> None:
    settings = CheckSettings(
        decision_ms=20000, startup_ms=60000, low_time_ms=3000, exit_grace_s=20.0,
        games=("plain-tricks",), log_dir=tmp_path / "logs",
    )  # fmt: skip
    results = await run_checks(sample_bot("python", tmp_path), settings)
    assert {r.name: r.reason for r in results if r.status == FAILED} == {}
    names = [r.name for r in results if r.status == PASSED]
    assert "full match plain-tricks" in names
    assert "decide plain-tricks play" in names
    assert not any(game in name for name in names for game in GAMES if game != "plain-tricks")


def tournament_file(folder: Path) -> Path:
    """Three sample bots (the heuristic one has no tactics for this game: it falls back to a
    random legal card) at one 3-player table, with records, played in this process."""
    bots = [
        ("heuristic", "sample_bots/heuristic/heuristic_bot.py"),
        ("random-py", "sample_bots/python/random_bot.py"),
        ("helper", "sample_bots/python_helper/helper_bot.py"),
    ]
    path = folder / "plain.toml"
    path.write_text(
        f'name = "plain"\nseed = 5\ndeals = 1\nworkers = 1\nrecords = true\n'
        f'output = "{folder / "out"}"\n\n[time]\ndecision_ms = 5000\n\n'
        + "".join(
            f'[[bots]]\nname = "{name}"\nargv = ["{sys.executable}", "{script}", "1"]\n'
            f'cwd = "{ROOT}"\n\n'
            for name, script in bots
        )
        + '[[games]]\ngame = "plain"\nplayers = 3\noptions = { deals = 3 }\n'
    )
    return path


@pytest.fixture(scope="module")
def played(plain_tricks, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The results file of a finished tournament of Plain Tricks."""
    folder = tmp_path_factory.mktemp("plain-tournament")
    done = CliRunner().invoke(main, ["tournament", str(tournament_file(folder))])
    assert done.exit_code == 0, done.output
    return folder / "out" / "results.sqlite"


def test_a_tournament_plays_and_ranks_it(played: Path) -> None:
    with ResultStore.open_read(played) as store:
        matches = store.matches()
    assert len(matches) == 3  # one deal, in each of its 3 rotations of the seats
    assert {m.game_id for m in matches} == {"plain-tricks"}
    assert all(m.status == "completed" and len(m.scores) == 3 for m in matches)
    assert all(not m.faults and not m.forfeited for m in matches)  # the heuristic bot too
    # Every trick scores a point: 3 deals of 5 tricks.
    assert all(sum(m.scores) == 15 for m in matches)
    done = CliRunner().invoke(main, ["standings", str(played)])
    assert done.exit_code == 0, done.output
    assert all(name in done.output for name in ("heuristic", "random-py", "helper"))


def test_arena_replay_rederives_every_record(played: Path) -> None:
    with ResultStore.open_read(played) as store:
        matches = store.matches()
    for match in matches:
        done = CliRunner().invoke(
            main,
            ["replay", str(match.record.path), "--match", match.match_id, "--check"]
            + ["--results", str(played)],
        )
        assert done.exit_code == 0, done.output
        assert "every line agrees with the rules (45 actions, 0 faults)" in done.output
    match = matches[0]
    shown = CliRunner().invoke(
        main, ["replay", str(match.record.path), "--match", match.match_id, "--seat", "1"]
    )
    assert shown.exit_code == 0, shown.output
    assert "plain-tricks" in shown.output and "as seen by seat 1" in shown.output
    assert shown.output.count("dealt to you") == 3 and shown.output.count("deal_end") == 3


def test_the_kit_samples_worlds_and_searches_in_it(plain_tricks) -> None:
    rng = random.Random(3)
    state = SPEC.new_match(4, {"deals": 2}, 9)
    searched = 0
    while not state.is_over:
        seat = state.seat_to_move
        view = state.view(seat)
        events = [e.data for e in state.events if e.visible_to(seat)]
        world = sample_world(view, events, rng, state.options)
        assert world.view(seat) == view  # it agrees with all the seat knows
        assert world.legal_actions() == state.legal_actions()
        hidden = {c for s in range(4) if s != seat for c in world.hands[s]}
        truth = {c for s in range(4) if s != seat for c in state.hands[s]}
        assert hidden | set(world.stock) == truth | set(state.stock)  # the same unseen cards
        if len(state.legal_actions()) > 1 and searched < 5:
            tally = search(view, state.legal_actions(), events, rng, Deadline(30.0), state.options,
                           max_worlds=4)  # fmt: skip
            assert tally.worlds == 4 and tally.best() in state.legal_actions()
            searched += 1
        state.apply(rng.choice(state.legal_actions()))
    assert searched == 5


async def test_the_web_match_view_shows_it_seat_by_seat(played: Path) -> None:
    source, store = source_of(played)
    with store:
        match_id = store.matches()[0].match_id
    async with trio.open_nursery() as nursery:
        url = await nursery.start(server.serve_tournament, source, "127.0.0.1", 0)
        for seat in (None, 0, 2):
            query = {"id": match_id} if seat is None else {"id": match_id, "seat": seat}
            raw = await trio.to_thread.run_sync(
                fetch, url + "api/match?" + urllib.parse.urlencode(query)
            )
            match = json.loads(raw)
            frames = match["frames"]
            assert len(frames) > 3 * 5 * 3  # every card of 3 deals, and the deal frames
            start = frames[0]["view"]
            assert frames[-1]["view"]["game"] == "plain-tricks"
            if seat is None:  # the organiser's view: every hand
                assert [len(hand) for hand in start["hands"]] == [5, 5, 5]
            else:  # a seat's view: its own five cards and the trump card, nothing else
                assert len(start["hand"]) == 5 and "hands" not in start
                shown = set(CARD.findall(json.dumps(start)))
                assert shown == set(start["hand"]) | {start["trump_card"]}
        nursery.cancel_scope.cancel()


def fetch(url: str) -> bytes:
    import urllib.request

    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read()


def test_the_match_page_in_a_real_browser(played: Path) -> None:
    """The match page (served in this process, where the game is registered) steps through a
    Plain Tricks match to the stored scores, and shows one seat only its own cards."""
    from tests.web.test_browser import launch, sync_api  # (skips without chromium, playwright)

    source, store = source_of(played)
    with store:
        stored = store.matches()[0]
    started: queue.Queue = queue.Queue()

    async def serve() -> None:
        async with trio.open_nursery() as nursery:
            url = await nursery.start(server.serve_tournament, source, "127.0.0.1", 0)
            started.put((url, trio.lowlevel.current_trio_token(), nursery.cancel_scope))

    thread = threading.Thread(target=trio.run, args=(serve,))
    thread.start()
    url, token, scope = started.get(timeout=60)
    try:
        with sync_api.sync_playwright() as playwright:
            browser = launch(playwright)
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(url + "match?" + urllib.parse.urlencode({"id": stored.match_id}))
            page.wait_for_selector("#frame")
            last = int(page.inner_text("#frame").split("/")[1])
            assert last == 45  # a frame per card played: 3 deals of 5 tricks of 3 cards
            sync_api.expect(page.locator(".seatrow")).to_have_count(3)
            page.keyboard.press("End")
            assert page.inner_text("#frame") == f"{last} / {last}"
            shown = [int(x) for x in page.locator("#result .final-score").all_inner_texts()]
            assert shown == list(stored.scores)
            # Its SCORING_EVENTS, one a deal, are the page's "scoring so far".
            sync_api.expect(page.locator("#scoring li")).to_have_count(3)
            assert page.locator("#scoring li").first.inner_text().startswith("deal end")
            page.keyboard.press("Home")
            page.select_option("#seat", "1")
            with_cards = page.locator(".seatrow").filter(has=page.locator(".card"))
            sync_api.expect(with_cards).to_have_count(1, timeout=15000)
            assert with_cards.get_attribute("data-seat") == "1"
            browser.close()
        assert errors == []
    finally:
        trio.from_thread.run_sync(scope.cancel, trio_token=token)
        thread.join(timeout=60)
