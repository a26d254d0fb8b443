"""Following a results file while a tournament writes it: only new rows are read, the standings
settle to exactly what ``arena standings`` prints, and a restarted file is read afresh."""

from __future__ import annotations

from pathlib import Path

from arena.tournament.standings import compute_standings, standings_as_data
from arena.tournament.store import ResultStore
from arena.web.source import SETTLE_S, TournamentSource


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_watched_file_is_followed_across_a_resume_and_a_restart(
    played: Path, tmp_path: Path
) -> None:
    with ResultStore.open_read(played) as finished:
        definition = finished.definition()
        matches = finished.matches(include_aborted=True)
    path = tmp_path / "live.sqlite"
    writer = ResultStore.open_for_run(path, name="webtest", fingerprint="f", definition=definition)
    for match in matches[:4]:
        writer.save(match)
    clock = Clock()
    reader = ResultStore.open_read(path)
    source = TournamentSource(
        path, name="webtest", definition=definition, records_dir=None, clock=clock
    )
    assert source.poll_file(reader)
    assert not source.poll_file(reader)  # nothing new: one PRAGMA, no rows read
    assert source.is_running()  # the writer holds the file's lock
    await source.refresh()
    assert source.summary()["progress"]["completed"] == 4 and source.summary()["exact"]

    for match in matches[4:10]:
        writer.save(match)
    assert source.poll_file(reader)
    clock.now += 1
    await source.refresh()
    live = source.summary()
    assert live["progress"]["completed"] == 10 and not live["exact"]  # still arriving
    clock.now += SETTLE_S
    await source.refresh()
    settled = source.summary()
    bots = [b["name"] for b in definition["bots"]]
    games = [g["label"] for g in definition["games"]]
    expected = standings_as_data(compute_standings(matches[:10], bots, games))
    assert settled["exact"] and settled["standings"] == expected

    # The tournament stops, and is run again with --restart: the file starts afresh.
    writer.close()
    assert not source.is_running()
    writer = ResultStore.open_for_run(
        path, name="webtest", fingerprint="f", definition=definition, restart=True
    )
    writer.save(matches[0])
    assert source.poll_file(reader)
    assert list(source.matches) == [matches[0].match_id]
    for match in matches[1:]:
        writer.save(match)
    source.poll_file(reader)
    clock.now += SETTLE_S
    await source.refresh()
    assert source.summary()["progress"]["completed"] == len(matches) == 16
    assert source.summary()["standings"] == standings_as_data(
        compute_standings(matches, bots, games)
    )
    writer.close()
    reader.close()
