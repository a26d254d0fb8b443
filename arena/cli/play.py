"""``arena play``: a person takes a seat against bots, in the terminal (SPEC.md 11).

Parse, call, print: the person's seat is a seat like a bot's (arena.referee.person), told what
its seat is told (arena.render.seat) and answering from the keyboard.
"""

from __future__ import annotations

import secrets
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

import click
import trio

from arena.cli.match import bot_name, parse_bot_command, parse_options, remove_if_empty
from arena.games import GameSpec, OptionError, find_game
from arena.referee.bot_spec import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.match import MatchStop, MatchStopped
from arena.referee.process import BotStartupError
from arena.referee.results import MatchResult
from arena.render.seat import Narrator, others_move, pick
from arena.tournament.errors import unwrapped

EXIT_STOPPED = 130  # 128 + SIGINT, what a shell reports for a command stopped by Ctrl-C
STOPPED_BY_PERSON = "stopped by the person at seat {seat} (Ctrl-C)"
INPUT_ENDED = "the person at seat {seat} left (end of input)"


class Stopped(click.ClickException):
    exit_code = EXIT_STOPPED


class TerminalPerson:
    """The person at the keyboard: each message its seat gets is printed as it comes; a
    request is answered by a number or the action's name, typed on a line."""

    def __init__(
        self,
        narrator: Narrator,
        lines: trio.MemoryReceiveChannel[str | None],
        pace_s: float,
        on_input_end: Any,
    ) -> None:
        self.narrator = narrator
        self.lines = lines
        self.pace_s = pace_s
        self.on_input_end = on_input_end

    def write(self, text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    async def show(self, message: dict[str, Any]) -> None:
        narrator = self.narrator
        if message.get("type") == "request":
            self.write("")
            for line in narrator.table(message.get("view") or {}):
                self.write(line)
            limit = message.get("time_left_ms")
            for line in narrator.choices(message.get("decision", "move"), message["legal"]):
                self.write(line)
            if isinstance(limit, int) and limit < 3_600_000:
                self.write(f"(you have {limit / 1000:.1f} s)")
            return
        for line in narrator.lines(message):
            self.write(line)
        if self.pace_s and others_move(message, narrator.seat):
            await trio.sleep(self.pace_s)  # one move at a time, at a pace a person can follow

    async def choose(self, request: dict[str, Any]) -> str:
        legal = request["legal"]
        while True:
            sys.stdout.write("> ")
            sys.stdout.flush()
            line = await self.lines.receive()
            if line is None:  # end of input: the person has gone
                self.on_input_end()
                await trio.sleep_forever()
            action = pick(line, legal)
            if action is not None:
                return action
            self.write(f"{line.strip()!r} is not one of the choices: a number 1-{len(legal)}")


def _read_lines(send: trio.MemorySendChannel[str | None]) -> None:
    """Read standard input line by line into ``send`` (in a thread: a blocking read)."""
    try:
        for line in sys.stdin:
            trio.from_thread.run(send.send, line)
        trio.from_thread.run(send.send, None)
    except (trio.RunFinishedError, trio.Cancelled):
        pass


async def _play(
    game: GameSpec,
    seat: int,
    name: str,
    bots: list[BotSpec],
    seed: int,
    options: dict[str, Any],
    control: TimeControl,
    person_ms: int | None,
    record: Path | None,
    logs: Path,
    pace_s: float,
    web: tuple[str, int] | None,
) -> MatchResult | MatchStopped:
    from arena.referee.person import play_person_match

    stop = MatchStop()
    closing = trio.Event()  # Ctrl-C once the match is over: the page's server closes

    async def watch_ctrl_c(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        with trio.open_signal_receiver(signal.SIGINT) as signals:
            task_status.started()
            async for _ in signals:
                stop.stop(STOPPED_BY_PERSON.format(seat=seat))
                closing.set()

    outcome: MatchResult | MatchStopped | BotStartupError
    async with trio.open_nursery() as nursery:
        await nursery.start(watch_ctrl_c)
        person: Any
        if web is None:
            send, receive = trio.open_memory_channel[str | None](16)
            width = max(40, min(shutil.get_terminal_size((80, 24)).columns, 100))
            person = TerminalPerson(
                Narrator(width), receive, pace_s, lambda: stop.stop(INPUT_ENDED.format(seat=seat))
            )
            nursery.start_soon(
                lambda: trio.to_thread.run_sync(_read_lines, send, abandon_on_cancel=True)
            )
        else:
            from arena.web.play import WebPerson, serve_play

            person = WebPerson(pace_s)
            try:
                with unwrapped(OSError):
                    url = await nursery.start(serve_play, person, *web)
            except OSError as error:
                raise click.ClickException(
                    f"cannot listen on {web[0]}:{web[1]}: {error.strerror or error} "
                    "(--port N chooses another port, 0 any free one)"
                ) from None
            click.echo(f"your seat is at {url} (Ctrl-C stops the match)", err=True)
        try:
            outcome = await play_person_match(
                game,
                person,
                name=name,
                seat=seat,
                bots=bots,
                seed=seed,
                options=options,
                control=control,
                person_ms=person_ms,
                record=record,
                log_dir=logs,
                stop=stop,
                nursery=nursery,
            )
        except (MatchStopped, BotStartupError) as error:
            outcome = error  # (raised out of the nursery, not wrapped in its group)
        if web is not None and isinstance(outcome, MatchResult):
            click.echo("the match is over: the page shows it until Ctrl-C", err=True)
            await closing.wait()
        nursery.cancel_scope.cancel()
    if isinstance(outcome, BotStartupError):
        raise outcome
    return outcome


@click.command("play")
@click.argument("game_name", metavar="GAME")
@click.option(
    "--bot",
    "bot_commands",
    multiple=True,
    required=True,
    metavar="CMD",
    help="A bot's command line (split like a shell): one per other seat in seat order, or one "
    "for every other seat.",
)
@click.option("--seat", type=click.IntRange(0), default=0, show_default=True, help="Your seat.")
@click.option(
    "--players",
    type=int,
    default=None,
    help="Number of seats (default: one more than the --bot given; with a single --bot, the "
    "game's default player count).",
)
@click.option(
    "--seed",
    type=click.IntRange(0, (1 << 64) - 1),
    default=None,
    help="Match seed (default: a secret one, shown after the match).",
)
@click.option("--option", "option_items", multiple=True, metavar="KEY=VALUE", help="A game option.")
@click.option(
    "--decision-ms",
    type=click.IntRange(1),
    default=None,
    help="Your time per decision; past it the autopilot moves for you [no limit].",
)
@click.option(
    "--bot-decision-ms",
    type=click.IntRange(1),
    default=1000,
    show_default=True,
    help="The bots' time per decision.",
)
@click.option(
    "--record",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the match record (JSONL; compact when it ends in .gz) here.",
)
@click.option(
    "--name", default="human", show_default=True, help="Your name at the table (and in the record)."
)
@click.option(
    "--web",
    is_flag=True,
    help="Play in the browser instead: serves your seat's page (on 127.0.0.1) and prints its "
    "address.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8019,
    show_default=True,
    help="With --web: the page's port (0: any free one).",
)
@click.option(
    "--pace-ms",
    type=click.IntRange(0),
    default=700,
    show_default=True,
    help="Pause after each other seat's move, to follow the play.",
)
def play_command(
    game_name: str,
    bot_commands: tuple[str, ...],
    seat: int,
    players: int | None,
    seed: int | None,
    option_items: tuple[str, ...],
    decision_ms: int | None,
    bot_decision_ms: int,
    record: Path | None,
    name: str,
    web: bool,
    port: int,
    pace_ms: int,
) -> None:
    """Take a seat at GAME against bots, in the terminal (pick each move by number or by name)
    or with --web in the browser (click a card). Ctrl-C stops the match (its record says so)."""
    try:
        game = find_game(game_name)
    except OptionError as error:
        raise click.UsageError(str(error)) from None
    argvs = [parse_bot_command(text) for text in bot_commands]
    if players is None:
        players = len(argvs) + 1 if len(argvs) > 1 else game.default_players
    try:
        game.check_players(players)
    except OptionError as error:
        raise click.UsageError(str(error)) from None
    if len(argvs) == 1:
        argvs = argvs * (players - 1)
    elif len(argvs) != players - 1:
        raise click.UsageError(
            f"{len(argvs)} --bot given for the {players - 1} other seats: give one per other "
            "seat or a single one for all of them"
        )
    if seat >= players:
        raise click.UsageError(f"--seat {seat}: expected 0..{players - 1}")
    if not name.strip():
        raise click.UsageError("--name '': expected a name")
    options = parse_options(game, option_items)
    if record is not None and not record.parent.is_dir():
        raise click.UsageError(f"--record {record}: directory {record.parent} does not exist")
    if seed is None:
        seed = secrets.randbits(63)
    taken = {name}  # (the bots' names differ from the person's)
    bots = [BotSpec(bot_name(argv, taken), argv, cwd=str(Path.cwd())) for argv in argvs]
    control = TimeControl(decision_ms=bot_decision_ms)
    logs = Path(tempfile.mkdtemp(prefix="arena-logs-"))
    try:
        with unwrapped(click.ClickException):
            outcome = trio.run(
                _play,
                game,
                seat,
                name,
                bots,
                seed,
                options,
                control,
                decision_ms,
                record,
                logs,
                pace_ms / 1000,
                ("127.0.0.1", port) if web else None,
            )
    except BotStartupError as error:
        raise click.ClickException(str(error)) from None
    except KeyboardInterrupt:
        raise Stopped("interrupted before the match began: nothing was played") from None
    finally:
        remove_if_empty(logs)
    where = f"; the record {record} says so" if record is not None else ""
    if isinstance(outcome, MatchStopped):
        raise Stopped(f"{outcome.reason}: the match was not finished{where}")
    click.echo(f"the match's seed: {outcome.seed}")
    if record is not None:
        click.echo(f"the record (arena replay shows it): {record}")
