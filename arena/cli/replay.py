"""``arena replay``: re-derive a match record from its header and the rules (SPEC 8) and show it;
with ``--check`` only check it, also against its results row, and check a whole results file."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.text import Text

from arena.cli.common import InputError, width_option
from arena.referee.record import (
    RecordPlace,
    ReplayError,
    find_member,
    record_bytes,
    replay_record,
)
from arena.render.replay import render_deal, render_replay
from arena.render.terminal import output_console
from arena.tournament.store import ResultStore, StoredMatch, StoreError, is_results_file


@click.command("replay")
@click.argument("record", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--seat", type=int, default=None, help="Show the match as this seat saw it.")
@click.option(
    "--match",
    "match_id",
    default=None,
    help="The match to replay, by id, from a tournament's records file of many matches "
    "(found by the results file beside its records/ folder, else by reading the file).",
)
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Only re-derive the record (and compare it with its results row); print one line. "
    "Given a results file: check every match in it and its seed.",
)
@click.option(
    "--lines",
    "print_lines",
    is_flag=True,
    help="Print the record's full JSON lines (a compact record written out in full, SPEC 8) "
    "and nothing else.",
)
@click.option(
    "--decisions",
    is_flag=True,
    help="Show each decision: the legal actions, the choice and the time it took "
    "(with --seat, only that seat's).",
)
@click.option(
    "--deal",
    "show_deal",
    is_flag=True,
    help="Also show the same deal's other rotations from the results file, side by side: "
    "each seat's cards in every deal of the match, who held them and what they scored.",
)
@click.option(
    "--results",
    "results_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The results file for --deal, --match and --check [the results.sqlite beside the "
    "record's records/ folder].",
)
@click.option(
    "--ask",
    "ask_text",
    default=None,
    metavar="N|all",
    help="With --seat and --bot: start the bot, send it exactly what the seat was sent up to "
    "its decision N (N,M or N-M for several; numbers as --decisions shows them) and print its "
    "answer beside the recorded one, with its stderr; 'all' asks every decision and lists "
    "those it answers differently (SPEC.md 8).",
)
@click.option(
    "--bot",
    "bot_command",
    default=None,
    metavar="CMD",
    help="The bot --ask starts (a command line, split like a shell; run in this directory).",
)
@width_option
def replay_command(
    record: Path,
    seat: int | None,
    match_id: str | None,
    check_only: bool,
    print_lines: bool,
    decisions: bool,
    show_deal: bool,
    results_path: Path | None,
    ask_text: str | None,
    bot_command: str | None,
    width: int | None,
) -> None:
    """Re-derive a match RECORD from its header and the rules, line by line (SPEC.md 8), and
    show it trick by trick. Exits 1 at the first line that departs, naming it. With --check,
    RECORD may be a results file: every match in it is checked against its record."""
    if is_results_file(record):
        if not check_only or match_id is not None:
            raise InputError(_results_file_given(record))
        _check_results(record)
        return
    place = (
        _located(record, match_id, results_path) if match_id is not None else RecordPlace(record)
    )
    if print_lines:
        try:
            data = record_bytes(place)
        except ReplayError as error:
            raise click.ClickException(str(error)) from None
        except OSError as error:
            raise click.ClickException(f"{record}: cannot read: {error.strerror}") from None
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    try:
        replay = replay_record(place)
    except ReplayError as error:
        hint = ""
        if " line 1: not JSON" in str(error):  # not a record at all: say what is
            hint = (
                " (not a match record: give a record file written by `arena match --record` "
                "or a tournament's records/, .jsonl or .jsonl.gz)"
            )
        raise click.ClickException(f"replay failed: {error}{hint}") from None
    players = replay.header["players"]
    if seat is not None and not 0 <= seat < players:
        raise click.UsageError(f"--seat {seat}: expected 0..{players - 1}")
    if ask_text is not None or bot_command is not None:
        _ask(replay, seat, ask_text, bot_command, output_console(width))
        return
    against = _check_row(place, match_id or replay.header["match_id"], replay, results_path)
    rotations = _deal_rotations(record, replay, results_path) if show_deal else None
    console = output_console(width)
    if not check_only:
        console.print(render_replay(replay, seat, decisions))
    stopped = f"; the match was stopped before its end: {replay.stopped}" if replay.stopped else ""
    console.print(
        Text(
            f"record checked: every line agrees with the rules "
            f"({len(replay.state.actions)} actions, {len(replay.faults)} faults){against}"
            f"{stopped}",
            style="bold green",
        )
    )
    if rotations is not None:
        console.print(render_deal(replay, rotations, console.width))


def _beside(record: Path, results_path: Path | None) -> Path:
    """The results file of a tournament's record: given, or beside its records/ folder."""
    return results_path or record.resolve().parent.parent / "results.sqlite"


def _check_row(record: RecordPlace, match_id: str, replay: Any, results_path: Path | None) -> str:
    """Compare a re-derived tournament record with its results row, its definition and the
    tournament's seed; what the summary line adds (ClickException for a difference)."""
    from arena.tournament.audit import check_record_row, stored_match_of

    results = _beside(record.path, results_path)
    if not results.is_file():
        return ""
    found = stored_match_of(results, match_id, record)
    if found is None:
        return ""
    audit, stored = found
    problem = check_record_row(audit, stored, replay)
    if problem is not None:
        raise click.ClickException(
            f"replay failed: {record.path} (match {match_id}) and its row in {results} disagree: "
            f"{problem}"
        )
    return f", and with its row in {results}; {audit.source.note}"


def _check_results(path: Path) -> None:
    """Every match of a results file against its record, and the file's seed (one line each
    problem, on standard error; exit 1 if any)."""
    from arena.tournament.audit import audit_results, lines

    try:
        report = audit_results(path)
    except StoreError as error:
        raise click.ClickException(str(error)) from None
    for problem in report.problems:
        click.echo(problem, err=True)
    for line in lines(report):
        click.echo(line)
    if report.problems:
        raise click.ClickException(
            f"{path}: {len(report.problems)} problems (each on a line above)"
        )


def _located(record: Path, match_id: str, results_path: Path | None) -> RecordPlace:
    """Where match ``match_id``'s record is in the records file ``record``: as the results file
    stores it (given, or beside the records/ folder), else found by reading the file."""
    path = _beside(record, results_path)
    if path.is_file():
        try:
            with ResultStore.open_read(path) as store:
                stored = store.match(match_id, times=False)
        except StoreError:
            stored = None  # (read the records file instead)
        place = None if stored is None else stored.record
        if (
            place is not None
            and place.span is not None
            and place.path.resolve() == record.resolve()
        ):
            return place
    try:
        member = find_member(record, match_id)
    except ReplayError as error:
        raise click.ClickException(str(error)) from None
    except OSError as error:
        raise click.ClickException(f"{record}: cannot read: {error.strerror}") from None
    if member is None or member.length is None:
        raise click.UsageError(f"--match {match_id}: no whole record of that match in {record}")
    return RecordPlace(record, member.at, member.length)


def _deal_rotations(record: Path, replay: Any, results_path: Path | None) -> list[StoredMatch]:
    """The stored rotations of the record's deal (its own included), from the results file."""
    path = _beside(record, results_path)
    if not path.is_file():
        raise click.UsageError(
            f"--deal: no results file at {path}; give the tournament's results file with --results"
        )
    match_id = replay.header.get("match_id", "")
    try:
        with ResultStore.open_read(path) as store:
            stored = store.match(match_id)
            if stored is None:
                raise click.UsageError(f"--deal: match {match_id!r} is not in {path}")
            return store.deal_matches(stored.game, stored.table, stored.deal)
    except StoreError as error:
        raise click.UsageError(f"--deal: {error}") from None


def _ask(
    replay: Any, seat: int | None, ask_text: str | None, bot_command: str | None, console: Any
) -> None:
    """--ask: the bot asked again at the seat's recorded decisions; its answers printed."""
    import os
    import shutil
    import tempfile

    import trio

    from arena.cli.match import StartupFailed, bot_name, parse_bot_command
    from arena.referee.bot_spec import BotSpec
    from arena.referee.process import BotStartupError
    from arena.referee.reask import ask, conversation, decision_numbers
    from arena.render.replay import render_asked

    if ask_text is None or bot_command is None or seat is None:
        raise click.UsageError("--ask needs --seat S and --bot CMD (and --bot needs --ask)")
    talk = conversation(replay, seat)
    try:
        numbers = decision_numbers(ask_text, len(talk.questions))
    except ValueError as error:
        raise click.UsageError(f"--ask {ask_text}: {error}") from None
    argv = parse_bot_command(bot_command)
    spec = BotSpec(bot_name(argv, set()), argv, cwd=os.getcwd())
    logs = Path(tempfile.mkdtemp(prefix="arena-ask-"))
    try:
        session = trio.run(ask, talk, spec, numbers, logs)
    except BotStartupError as error:
        raise StartupFailed(str(error)) from None
    except KeyboardInterrupt:
        raise click.ClickException("interrupted: the bot was stopped") from None
    finally:
        shutil.rmtree(logs, ignore_errors=True)  # (its stderr is shown with each answer)
    console.print(render_asked(session, spec.name, every=numbers is None))
    if session.stopped:
        raise click.ClickException(f"{spec.name} crashed at {session.stopped}")


def _results_file_given(path: Path) -> str:
    """What a results file given for one match's replay is, and what to give instead: a
    command that works, made from the file's first match with a record."""
    example = ""
    try:
        with ResultStore.open_read(path) as store:
            first = next((m for m in store.matches() if m.record), None)
    except StoreError:
        first = None
    if first is not None and first.record is not None:
        match = f" --match {first.match_id}" if first.record.at is not None else ""
        example = f" (e.g. `arena replay {first.record.path}{match}`)"
    return (
        f"{path} is a results file (SQLite), not a match record: give a match's records file "
        f"and --match ID{example}, `arena standings {path} --bot NAME` for a bot's worst "
        f"matches with their replay commands, or `arena replay --check {path}` to check every "
        "match in it"
    )
