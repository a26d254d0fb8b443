"""Re-asking recorded decisions (``arena replay --ask``, SPEC.md 8): a bot started again is sent
byte for byte what its seat was sent in the match, for every game; its answers are judged as
the referee judges them, and the ones that differ are listed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio
import trio.testing
from click.testing import CliRunner

from arena.cli import main
from arena.cli.match import play_one_match
from arena.games import GAMES, find_game
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.reask import ask, conversation, decision_numbers
from arena.referee.record import RecordFile, replay_record
from arena.referee.results import FaultKind
from tests.referee.test_cli_match import arena
from tests.referee.test_records_file import play_into

BOTS = Path(__file__).resolve().parents[1] / "bots"
TRANSCRIPT = BOTS / "transcript_bot.py"
CONTROL = TimeControl(decision_ms=5000)


def transcript_bot(name: str, path: Path, mode: str = "first") -> BotSpec:
    # Not sealed: it writes its transcript into the test's folder.
    return BotSpec(name, (sys.executable, str(TRANSCRIPT), str(path), mode), sandbox="none")


def play(tmp_path: Path, game_id: str) -> tuple[Path, int]:
    """A match of transcript bots, recorded compact; its record and player count."""
    game = find_game(game_id)
    players = game.default_players
    specs = [transcript_bot(f"t{n}", tmp_path / f"seat{n}.txt") for n in range(players)]
    record = tmp_path / "match.jsonl.gz"
    trio.run(
        lambda: play_one_match(
            game,
            specs,
            seed=11,
            options={},
            control=CONTROL,
            max_faults=3,
            record=record,
            log_dir=tmp_path / "logs",
            affinity=False,
        )
    )
    return record, players


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_a_bot_asked_again_is_sent_exactly_what_its_seat_was_sent(tmp_path, game_id):
    record, players = play(tmp_path, game_id)
    seat = players - 1
    talk = conversation(replay_record(record), seat)
    assert talk.name == f"t{seat}" and len(talk.questions) > 5
    recorded = (tmp_path / f"seat{seat}.txt").read_bytes()

    # Every decision: the whole conversation, match_end and bye included, the same bytes.
    again = tmp_path / "again.txt"
    session = trio.run(ask, talk, transcript_bot("v2", again), None, tmp_path / "logs")
    assert again.read_bytes() == recorded
    assert not session.stopped and len(session.answers) == len(talk.questions)
    assert not any(answer.differs for answer in session.answers)
    for answer in session.answers:
        question = answer.question
        expected = f"thinking about request {question.request_id} ({len(question.legal)} legal)\n"
        assert answer.stderr == expected and answer.action == question.legal[0]
        assert question.recorded_stderr == expected  # (as the match's record kept it)

    # One decision in the middle: the conversation up to its request, then bye.
    middle = talk.questions[len(talk.questions) // 2]
    once = tmp_path / "once.txt"
    session = trio.run(ask, talk, transcript_bot("v2", once), {middle.number}, tmp_path / "logs")
    upto = recorded.index(f'"id":{middle.request_id},'.encode())
    upto = recorded.index(b"\n", upto) + 1
    assert once.read_bytes() == recorded[:upto] + b'{"type":"bye"}\n'
    assert [a.question.number for a in session.answers] == [middle.number]


@pytest.mark.parametrize("game_id", ["vingt-down", "eight-rounds"])
def test_a_bot_that_differs_on_purpose_is_listed_decision_by_decision(tmp_path, game_id):
    record, players = play(tmp_path, game_id)
    talk = conversation(replay_record(record), 0)
    session = trio.run(
        ask, talk, transcript_bot("v2", tmp_path / "v2.txt", "last"), None, tmp_path / "logs"
    )
    differing = {a.question.number for a in session.answers if a.differs}
    expected = {
        q.number
        for q in talk.questions
        if q.decision == "play" and q.legal[-1] != q.legal[0]  # (first legal was recorded)
    }
    assert differing == expected and expected
    result = arena(
        "replay",
        str(record),
        "--seat",
        "0",
        "--ask",
        "all",
        "--bot",
        f"{sys.executable} {TRANSCRIPT} /dev/null last",
    )
    assert result.returncode == 0, result.stderr
    assert (
        f"transcript_bot changes {len(expected)} of {len(talk.questions)} decisions of seat 0 "
        "(t0) in this match; here they are" in result.stdout
    )
    first = min(expected)
    assert f"decision {first} (request " in result.stdout
    assert "thinking about request" in result.stdout  # its stderr, beside its answer


BROKEN = [
    ("crash_bot.py", FaultKind.CRASH, "crashing on purpose"),
    ("illegal_bot.py", FaultKind.ILLEGAL, "not-a-legal-action"),
    ("garbage_bot.py", FaultKind.MALFORMED, ""),
    ("late_bot.py", FaultKind.TIMEOUT, "no answer within 100 ms"),
]


@pytest.mark.parametrize("bot, kind, said", BROKEN)
def test_a_failing_bot_is_a_typed_fault_as_in_a_match(tmp_path, bot, kind, said):
    records = RecordFile(tmp_path / "run.jsonl.gz")
    fast = TimeControl(decision_ms=100, margin_ms=0)
    # (A record of a 100 ms time control, each request's time_left_ms 100; played under the
    # autojump clock, so a busy machine cannot make a fake bot late.)
    trio.run(lambda: _play_fast(records, fast), clock=trio.testing.MockClock(autojump_threshold=0))
    records.close()
    replay = replay_record(records.path)
    talk = conversation(replay, 0)
    spec = BotSpec("broken", (sys.executable, str(BOTS / bot)))
    session = trio.run(ask, talk, spec, None, tmp_path / "logs")
    faults = [a for a in session.answers if a.fault is not None]
    assert faults and faults[0].fault is kind and said in faults[0].reason
    if kind is FaultKind.CRASH:
        assert len(session.answers) == 6 and session.stopped.startswith("decision 6:")
        assert "crashing on purpose" in session.stopped


async def _play_fast(records: RecordFile, control: TimeControl) -> None:
    from arena.referee.match import run_match
    from arena.referee.testing import FakeBot, connect_fake

    async with trio.open_nursery() as nursery:
        procs = [await connect_fake(nursery, FakeBot(n), time_control=control) for n in "abcd"]
        try:
            await run_match(
                find_game("vingt-down"),
                procs,
                seed=3,
                match_id="g/t0/d0/r0",
                record_path=records,
                time_control=control,
            )
        finally:
            for proc in procs:
                await proc.close()


def test_ask_reads_a_records_file_by_match_id_and_says_what_is_wrong(tmp_path):
    records = RecordFile(tmp_path / "run.jsonl.gz")
    for n in range(2):
        trio.run(play_into, records, f"g/t0/d{n}/r0")
    records.close()
    first = f"{sys.executable} {BOTS / 'first_legal_bot.py'}"
    result = arena(
        "replay", str(records.path), "--match", "g/t0/d1/r0", "--seat", "2", "--ask", "3",
        "--bot", first,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "first_legal_bot asked again at 1 decision of seat 2 (c)" in result.stdout
    assert "decision 3 (request " in result.stdout and "  legal     " in result.stdout
    for args, message in [
        (["--ask", "3", "--bot", first], "--ask needs --seat S and --bot CMD"),
        (["--seat", "2", "--ask", "0", "--bot", first], "--ask 0: decision 0: this seat has"),
        (["--seat", "2", "--ask", "x", "--bot", first], "--ask x: 'x' is not a decision number"),
        (["--seat", "2", "--ask", "1", "--bot", "/nonexistent"], "no executable program at"),
    ]:
        # (Through the group, as a user runs it: a command invoked on its own would keep
        # click's default help option, and the help snapshots would then lose -h.)
        result = CliRunner().invoke(
            main, ["replay", str(records.path), "--match", "g/t0/d1/r0", *args]
        )
        assert result.exit_code == 2 and message in result.output, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_decision_numbers():
    assert decision_numbers("all", 9) is None
    assert decision_numbers("2,4-6", 9) == {2, 4, 5, 6}
    with pytest.raises(ValueError, match="this seat has decisions 1..9"):
        decision_numbers("10", 9)
