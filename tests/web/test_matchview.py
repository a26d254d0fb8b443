"""The match page's data: derived from real records by the rules engine; a seat's view never
holds a card that seat could not see."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from arena.games import find_game
from arena.games.cards import Dealer, Rng
from arena.referee.record import RecordPlace, RecordShelf, RecordWriter, read_span, replay_record
from arena.tournament.store import ResultStore
from arena.web.matchview import MatchViewError, match_frames, read_entries
from tests.web.conftest import CARD
from tests.web.test_server import go_on


def records(results: Path) -> list[tuple[RecordPlace, object]]:
    """Where each stored match's record is: its member of a records file (SPEC 8)."""
    with ResultStore.open_read(results) as store:
        found = [(m.record, m) for m in store.matches()]
    assert found and all(record.length for record, _ in found)
    return found


def replay(record: RecordPlace):
    return replay_record(record)


def secret_cards(state, seat: int) -> set[str]:
    """Cards held by the other seats or still in the stock: secrets unless ``seat`` may see
    them some other way (its own view, an event it was sent)."""
    everything = state.view(None)
    secret = set()
    for other, hand in enumerate(everything.get("hands") or []):
        if other != seat:
            secret |= set(hand)
    secret |= set(everything.get("stock") or [])
    for other, cards in enumerate(everything.get("discards") or []):
        if other != seat:
            secret |= set(cards)
    return secret


def seen(state, seat: int, since: int) -> set[str]:
    """Cards ``seat`` may know of now: its view, and the events since ``since`` sent to it (the
    rules engine's own audiences, independently of the code under test)."""
    known = set(CARD.findall(json.dumps(state.view(seat))))
    for event in state.events[since:]:
        if event.visible_to(seat):
            known |= set(CARD.findall(json.dumps(event.data)))
    return known


def without_own_fault_text(frame: dict) -> dict:
    """The frame without the messages of the seat's own faults: the rules' explanation of its own
    decision, whose examples ("e.g. discard:7H,KS") name cards for illustration only."""
    decision = frame.get("decision")
    if not decision:
        return frame
    faults = [{k: v for k, v in f.items() if k != "message"} for f in decision["faults"]]
    return {**frame, "decision": {**decision, "faults": faults}}


def one_per_game(results: Path) -> list[tuple[RecordPlace, object]]:
    chosen: dict[str, tuple[RecordPlace, object]] = {}
    for record, stored in records(results):
        chosen.setdefault(stored.game, (record, stored))
    return list(chosen.values())


def test_a_seat_view_never_holds_hidden_cards(played: Path) -> None:
    checked_frames = 0
    for record, _stored in one_per_game(played):
        entries = replay(record).entries
        header = entries[0]
        actions = [e for e in entries if e["type"] == "action"]
        for seat in range(header["players"]):
            data = match_frames(entries, seat)
            assert len(data["frames"]) == len(actions) + 1
            spec = find_game(header["game"])
            state = spec.new_match(
                header["players"], header["options"], header["seed"], Dealer(Rng(header["seed"]))
            )
            # Frame k shows the k-th action: compare it with the secrets just before and after.
            for k, frame in enumerate(data["frames"]):
                before_secrets, before_known = secret_cards(state, seat), seen(state, seat, 0)
                since = len(state.events)
                if k:
                    state.apply(actions[k - 1]["action"])
                else:
                    since = 0
                secrets = before_secrets | secret_cards(state, seat)
                allowed = before_known | seen(state, seat, since)
                sent = set(CARD.findall(json.dumps(without_own_fault_text(frame))))
                leaked = sent & (secrets - allowed)
                assert not leaked, f"{record} seat {seat} frame {k}: {sorted(leaked)}"
                checked_frames += 1
            # Nothing outside the frames either (header, seats, result).
            rest = {key: value for key, value in data.items() if key != "frames"}
            assert not CARD.findall(json.dumps(rest))
    assert checked_frames > 1000
    assert len(one_per_game(played)) == 4


def test_the_detector_sees_the_all_hands_view_as_full_of_secrets(played: Path) -> None:
    """The check above can fail: the all-hands data holds the others' cards at once."""
    record, _ = records(played)[0]
    entries = replay(record).entries
    header = entries[0]
    spec = find_game(header["game"])
    state = spec.new_match(
        header["players"], header["options"], header["seed"], Dealer(Rng(header["seed"]))
    )
    frame = match_frames(entries, None)["frames"][0]
    assert set(CARD.findall(json.dumps(frame))) & (secret_cards(state, 0) - seen(state, 0, 0))


def test_frames_follow_the_record_decisions_faults_and_scores(played: Path) -> None:
    autopilot = faults = 0
    for record, stored in records(played):
        replayed = replay(record)
        data = match_frames(replayed.entries, None)
        decisions = [f["decision"] for f in data["frames"][1:]]
        actions = [e for e in replayed.entries if e["type"] == "action"]
        assert [d["action"] for d in decisions] == [a["action"] for a in actions]
        assert all(d["action"] in d["legal"] for d in decisions)
        for d in decisions:
            if d["by"] == "bot":
                assert d["ms"] is not None and d["ms"] >= 0
            else:
                assert d["ms"] is None
        autopilot += sum(d["by"] == "autopilot" for d in decisions)
        recorded_faults = [e for e in replayed.entries if e["type"] == "fault"]
        shown = [f for d in decisions for f in d["faults"]]
        assert [(f["seat"], f["kind"], f["message"]) for f in shown] == [
            (f["seat"], f["kind"], f["message"]) for f in recorded_faults
        ]
        faults += len(shown)
        assert data["over"]
        assert data["result"]["scores"] == list(stored.scores)
        assert data["frames"][-1]["view"]["scores"] == list(replayed.state.result().scores)
    assert autopilot > 0 and faults > 0  # the illegal bot faulted and was forfeited


def test_another_seats_decision_shows_only_who_and_when(played: Path) -> None:
    record, stored = next((r, m) for r, m in records(played) if m.faults)
    bad_seat = stored.faults[0].seat
    seat = (bad_seat + 1) % stored.players
    data = match_frames(replay(record).entries, seat)
    others = [f["decision"] for f in data["frames"][1:] if f["decision"]["seat"] != seat]
    assert others and all(d["legal"] is None and d["action"] is None for d in others)
    assert all(d["replies"] == [] for d in others)
    foreign = [f for d in others for f in d["faults"]]
    assert foreign and all(set(f) == {"seat", "kind"} for f in foreign)


def compact_lines(record: RecordPlace) -> list[bytes]:
    """A stored record's lines as written: compact (SPEC 8), each with its newline."""
    assert record.at is not None and record.length is not None
    member = read_span(record.path, record.at, record.length)
    return zlib.decompress(member, 16 + zlib.MAX_WBITS).splitlines(keepends=True)


@pytest.mark.parametrize("layout", ["plain", "gzip", "records file"])
def test_a_record_being_written_shows_the_frames_so_far(
    played: Path, tmp_path: Path, layout: str
) -> None:
    """Half a record's lines, as a running match leaves them: in a file of its own (an older
    arena's), plain or gzip up to its last flush with the start of the next line; or the last,
    unfinished gzip member of a records file, after a finished match's."""
    (record, _), (other, _) = records(played)[:2]
    lines = compact_lines(record)
    half = b"".join(lines[: len(lines) // 2])
    # the start of the next line, never a whole one (a short decision array may be 7 bytes)
    following = lines[len(lines) // 2].rstrip(b"\n")
    more = following[: max(1, len(following) // 2)]
    at = None
    if layout == "records file":
        file = RecordShelf(tmp_path).take()
        at = file.append(read_span(other.path, other.at, other.length))[1]  # (its length)
        # to a sync point: the member goes on, unfinished
        go_on(RecordWriter(file), [line.rstrip(b"\n") for line in lines[: len(lines) // 2]])
        file.close()
        cut = file.path
    elif layout == "gzip":
        cut = tmp_path / "running.jsonl.gz"
        gzip = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
        cut.write_bytes(gzip.compress(half + more) + gzip.flush(zlib.Z_SYNC_FLUSH))
    else:
        cut = tmp_path / "running.jsonl"
        cut.write_bytes(half + more)
    data = match_frames(read_entries(RecordPlace(cut, at), partial=True), 0)
    assert not data["over"] and data["result"] is None
    assert data["match_id"] == replay(record).header["match_id"]
    assert 1 < len(data["frames"]) < len(match_frames(replay(record).entries, 0)["frames"])
    with pytest.raises(MatchViewError, match="line|cut"):
        read_entries(RecordPlace(cut, at), partial=False)


def test_a_damaged_records_file_is_one_line(played: Path, tmp_path: Path) -> None:
    (record, _), *_ = records(played)
    damaged = tmp_path / "damaged.jsonl.gz"
    member = compact_lines(record)  # (only to have a header to start the damage with)
    gzip = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
    whole = gzip.compress(b"".join(member)) + gzip.flush()
    damaged.write_bytes(whole[:40] + b"\xff" * 200 + whole[240:])
    for at, length in ((0, len(whole)), (0, None), (5, None), (len(whole) + 9, 10)):
        with pytest.raises(MatchViewError) as caught:
            read_entries(RecordPlace(damaged, at, length), partial=length is None)
        assert "\n" not in str(caught.value) and str(damaged) in str(caught.value)
    with pytest.raises(MatchViewError, match="cannot read"):
        read_entries(RecordPlace(tmp_path / "gone.jsonl.gz", 0), partial=True)


def test_a_seat_that_does_not_exist_is_one_line(played: Path) -> None:
    record, _ = records(played)[0]
    with pytest.raises(MatchViewError, match="seat 9: the match has seats 0 to"):
        match_frames(replay(record).entries, 9)


def test_the_first_deal_from_the_seed_is_the_recorded_one(played: Path) -> None:
    """The duplicate view's hands (seed only, no record) are the cards the record dealt before
    the first card was played or exchanged, or (All Fours) a seat stood or begged: a run of the
    pack after a beg deals more, and whether the random bots beg follows from the match id they
    are sent, which is the results file's own (SPEC 4.1)."""
    from arena.web.matchview import first_deal

    for record, stored in one_per_game(played):
        dealt: list[list[str]] = [[] for _ in range(stored.players)]
        for entry in read_entries(record, partial=False):
            if entry["type"] != "event":
                continue
            data = entry["data"]
            if data["type"] in ("play", "exchange", "trick", "stand", "beg"):
                break
            if data["type"] == "deal":
                dealt[data["seat"]] += data["cards"]
        hands = first_deal(stored.game_id, stored.players, stored.options, stored.seed)
        assert [sorted(h) for h in hands] == [sorted(h) for h in dealt], stored.match_id
        assert all(hands)
