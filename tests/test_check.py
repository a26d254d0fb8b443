"""`arena check` passes every sample bot and fails each broken bot with the right reason."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sample_bot_specs import ROOT, SAMPLE_BOTS, broken_bot, sample_bot

from arena.bots.check import FAILED, PASSED, SKIPPED, CheckSettings, find_positions, run_checks
from arena.cli.check import summary
from arena.games import GAMES
from arena.referee.bot_spec import BotSpec
from arena.referee.process import BotProcess

# Passing bots get generous limits (the result must not depend on the machine's speed); each
# broken bot gets limits it misses by a wide margin.
GENEROUS = dict(decision_ms=20000, startup_ms=60000, low_time_ms=3000, exit_grace_s=20.0)


def settings(tmp_path, **changes) -> CheckSettings:
    return CheckSettings(**{**GENEROUS, "log_dir": tmp_path / "logs", **changes})


def failures(results) -> dict[str, tuple[str, str]]:
    return {r.name: (r.kind, r.reason) for r in results if r.status == FAILED}


def by_name(results, prefix: str):
    return [r for r in results if r.name.startswith(prefix)]


@pytest.mark.parametrize("kind", SAMPLE_BOTS)
async def test_every_sample_bot_passes(kind, tmp_path):
    results = await run_checks(sample_bot(kind, tmp_path), settings(tmp_path))
    assert failures(results) == {}
    assert all(r.status == PASSED for r in results)
    names = [r.name for r in results]
    for game in GAMES.values():
        assert f"full match {game.id}" in names
        assert any(name.startswith(f"decide {game.id} ") for name in names)
    for prefix in (
        "handshake",
        "fault notice",
        "time running low",
        "idle while not asked",
        "long match",
        "bye",
        "end of input",
    ):
        assert by_name(results, prefix), f"no {prefix} check ran"


def test_every_decision_kind_of_every_game_is_checked():
    for game in GAMES.values():
        kinds = {p.decision for p in find_positions(game, seed=1)}
        seen = set()
        for seed in range(30):
            state = game.new_match(game.default_players, {}, seed)
            while not state.is_over:
                seen.add(state.decision)
                state.apply(state.legal_actions()[seed % len(state.legal_actions())])
        assert seen <= kinds, f"{game.id}: decisions {seen - kinds} are never checked"


async def test_mute_bot_fails_the_handshake(tmp_path):
    results = await run_checks(broken_bot("mute"), settings(tmp_path, startup_ms=1500))
    assert failures(results) == {"handshake": ("startup", "no ready message within 1500 ms")}
    assert all(r.status == SKIPPED for r in results[1:])


async def test_garbage_bot_fails_the_handshake(tmp_path):
    results = await run_checks(broken_bot("garbage"), settings(tmp_path))
    kind, reason = failures(results)["handshake"]
    assert kind == "startup"
    assert "expected a ready message" in reason and "hello referee" in reason


@pytest.mark.parametrize(
    "bot, kind, evidence",
    [
        ("wrong_shape", "malformed", '"move"'),
        ("chatty", "malformed", "thinking about request"),
        ("illegal", "illegal", "bid:99"),
    ],
)
async def test_bad_answers_fail_the_decisions(bot, kind, evidence, tmp_path):
    results = await run_checks(broken_bot(bot), settings(tmp_path, only=("decisions",)))
    decisions = by_name(results, "decide ")
    assert decisions and all(r.status == FAILED for r in decisions if r.name.endswith(" bid"))
    first = next(r for r in decisions if r.status == FAILED)
    assert first.kind == kind
    assert evidence in first.reason or evidence in first.received
    assert first.hint and first.sent.startswith("request id")


async def test_slow_bot_times_out(tmp_path):
    game = next(iter(GAMES))
    results = await run_checks(
        broken_bot("slow"), settings(tmp_path, decision_ms=300, games=(game,), only=("decisions",))
    )
    decisions = by_name(results, "decide ")
    assert decisions and all(r.status == FAILED and r.kind == "timeout" for r in decisions)
    assert "within 300 ms" in decisions[0].reason


async def test_bot_that_ignores_the_time_left_fails_when_time_runs_low(tmp_path):
    game = next(iter(GAMES))
    results = await run_checks(
        broken_bot("fixed_think"),
        settings(tmp_path, low_time_ms=50, games=(game,), only=("decisions", "low-time")),
    )
    failed = failures(results)
    assert list(failed) == ["time running low (50 ms left)"]
    assert failed["time running low (50 ms left)"][0] == "timeout"
    assert by_name(results, "decide ") and all(r.passed for r in by_name(results, "decide "))


async def test_crash_mid_match_is_a_crash_with_its_stderr(tmp_path):
    results = await run_checks(broken_bot("crash_mid_match"), settings(tmp_path))
    failed = [r for r in results if r.status == FAILED]
    assert failed and all(r.kind == "crash" for r in failed)
    assert "crashes on purpose on its fifth request" in failed[0].reason
    assert "exited with status 1" in failed[0].reason
    assert by_name(results, "bye")[0].passed, "the crashed bot was restarted for the next checks"


async def test_bot_that_quits_after_one_match_fails_the_next_match(tmp_path):
    results = await run_checks(broken_bot("one_match"), settings(tmp_path, only=("decisions",)))
    decisions = by_name(results, "decide ")
    assert decisions[0].passed
    assert decisions[1].status == FAILED and decisions[1].kind == "crash"
    assert "exited with status 0" in decisions[1].reason
    assert "after match_end keep reading" in decisions[1].hint


async def test_bot_that_chokes_on_a_fault_notice_fails_that_check(tmp_path):
    results = await run_checks(
        broken_bot("fault_intolerant"), settings(tmp_path, only=("decisions", "fault", "future"))
    )
    failed = failures(results)
    assert set(failed) == {"fault notice", "unknown message type and field"}
    kind, reason = failed["fault notice"]
    assert kind == "crash" and "unexpected message type 'fault'" in reason
    assert (
        "unexpected message type 'x_future_notice'" in failed["unknown message type and field"][1]
    )


async def test_bot_that_rejects_unknown_fields_fails_the_future_check(tmp_path):
    results = await run_checks(
        broken_bot("strict_fields"), settings(tmp_path, only=("decisions", "future"))
    )
    failed = failures(results)
    assert list(failed) == ["unknown message type and field"]
    kind, reason = failed["unknown message type and field"]
    assert kind == "crash" and "x_future_field" in reason
    assert by_name(results, "unknown")[0].hint.startswith("Ignore message types and fields")


async def test_bot_that_ignores_bye_fails_both_exit_checks(tmp_path):
    results = await run_checks(
        broken_bot("ignores_bye"), settings(tmp_path, only=("exit",), exit_grace_s=1.0)
    )
    failed = failures(results)
    assert failed["bye, then end of input"][0] == "bye"
    assert failed["end of input without bye"][0] == "eof"
    assert "it was killed" in failed["bye, then end of input"][1]


PONDERER = BotSpec("ponderer", (sys.executable, str(ROOT / "tests" / "bots" / "ponder_bot.py")))
IDLE_FIGURES = re.compile(r"then (\d+) ms of CPU in (\d+) ms$")


async def test_a_bot_that_ponders_after_its_reply_fails_the_idle_check(tmp_path):
    # A window far longer than the default: however little of a loaded machine the spinning
    # thread gets, it passes the 150 ms within it, and the check ends the window right then.
    window_ms = 60_000
    [handshake, idle] = await run_checks(
        PONDERER, settings(tmp_path, only=("idle",), idle_window_ms=window_ms)
    )
    assert handshake.passed and idle.status == FAILED and idle.kind == "idle"
    found = re.fullmatch(
        r"bot ponderer computed while not asked: used (\d+) ms of CPU in the (\d+) ms after "
        r"its reply \(at most 150 ms; SPEC.md section 7\)",
        idle.reason,
    )
    assert found, idle.reason
    used, wall = int(found[1]), int(found[2])
    assert used > 150 and used <= wall + 50  # (one spinning thread: at most its wall time)
    assert wall < window_ms  # ended once the limit was passed
    assert IDLE_FIGURES.search(idle.received)[1] == found[1]
    assert f"then nothing for {window_ms} ms" in idle.sent
    assert idle.hint.startswith("Once you have replied")
    assert idle.cut_short


async def test_a_bot_that_waits_for_its_input_passes_the_idle_check(tmp_path):
    [_, idle] = await run_checks(sample_bot("python", tmp_path), settings(tmp_path, only=("idle",)))
    assert idle.status == PASSED, idle.reason
    used, wall = map(int, IDLE_FIGURES.search(idle.received).groups())
    assert used <= 150 and wall >= 1000  # (nothing at all, measured: a bound far above it)


async def test_the_idle_check_is_skipped_where_cpu_time_cannot_be_read(tmp_path, monkeypatch):
    monkeypatch.setattr(BotProcess, "cpu_seconds", lambda self: None)
    results = await run_checks(PONDERER, settings(tmp_path, only=("idle",)))
    assert [r.status for r in results] == [PASSED, SKIPPED]
    assert "CPU time cannot be read on this machine" in results[1].reason
    assert summary(results).startswith("1 passed, 0 failed, 1 skipped: ready for a tournament")


def run_cli(*args: str, tmpdir: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "TMPDIR": str(tmpdir)} if tmpdir is not None else None
    return subprocess.run(
        [sys.executable, "-m", "arena", "check", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def test_cli_exit_status_and_scorecard(tmp_path):
    good = run_cli(
        "--game",
        "aon",
        "--decision-ms",
        "20000",
        "--low-time-ms",
        "3000",
        "--log-dir",
        str(tmp_path / "good"),
        "--",
        sys.executable,
        "sample_bots/python/random_bot.py",
    )
    assert good.returncode == 0, good.stdout + good.stderr
    assert "0 failed" in good.stdout and "ready for a tournament" in good.stdout
    # The one-decision matches say they were cut short: in the summary, match_end and the record.
    assert re.search(r"\d+ matches were cut short after the decision under test", good.stdout)
    decided = next((tmp_path / "good").glob("check-*-decide-*.jsonl")).read_text().splitlines()
    assert json.loads(decided[-1])["termination"] == "cut short"
    full = next((tmp_path / "good").glob("check-*-full-match-*.jsonl")).read_text().splitlines()
    assert json.loads(full[-1])["termination"] == "completed"
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    bad = run_cli(
        "--game",
        "aon",
        "--only",
        "decisions",
        "--",
        sys.executable,
        "tests/bots/broken/illegal.py",
        tmpdir=temporary,
    )
    assert bad.returncode == 1
    assert "FAIL" in bad.stdout and "illegal" in bad.stdout and "hint" in bad.stdout
    kept = list(temporary.glob("arena-check-*"))  # a failed check keeps its logs and records
    assert len(kept) == 1 and str(kept[0]) in " ".join(bad.stdout.split())
    shutil.rmtree(kept[0])
    passed = run_cli(
        "--game",
        "aon",
        "--only",
        "decisions",
        "--",
        sys.executable,
        "sample_bots/python/random_bot.py",
        tmpdir=temporary,
    )
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert list(temporary.iterdir()) == []  # nothing left behind when every check passed


def test_cli_usage_errors():
    missing = run_cli()
    assert missing.returncode == 2 and "Missing argument" in missing.stderr
    unknown = run_cli("--game", "chess", "--", "true")
    assert unknown.returncode == 2 and "unknown game 'chess'" in unknown.stderr
    assert "Traceback" not in missing.stderr + unknown.stderr
