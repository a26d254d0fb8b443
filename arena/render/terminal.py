"""Standings and progress on screen: pure renderables, plus the thin loops that show them live.

``standings_table`` and ``live_view`` are pure functions from data to rich renderables (tests
render them on a fixed-width console without colour). ``show_progress`` is the loop a running
tournament starts beside its matches: a rich ``Live`` view on a terminal, refreshed a few times a
second, or plain progress lines when the output is not a terminal (CI, a pipe).
"""

from __future__ import annotations

import io
import shlex
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO, cast

from rich import box
from rich.console import Console, Group, JustifyMethod, RenderableType
from rich.progress_bar import ProgressBar
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from arena.stats.moments import Estimate
from arena.tournament.standings import OVERALL, BotReport, BotStanding, Standings
from arena.tournament.store import fault_reason

if TYPE_CHECKING:  # only the live view needs them, imported there: `arena standings` does not
    from arena.tournament.runner import Progress

PIPED_WIDTH = 1000  # piped output is as wide as it needs: no table is expanded to this

LIVE_REFRESH_S = 0.5  # screen refresh: ~15 ms of the referee's CPU each time
STANDINGS_EVERY_S = 1.0  # the standings fold runs at most this often
PLAIN_EVERY_S = 5.0  # a plain progress line at most this often


class TrimmedLines(io.TextIOBase):
    """A text stream that passes whole lines on with their trailing spaces removed (rich pads
    table cells and lines to their width: a log read by a program, or diffed, should not have
    them)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.pending = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.pending += text
        if "\n" in self.pending:
            *lines, self.pending = self.pending.split("\n")
            self.out.write("".join(line.rstrip(" ") + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self.pending:
            self.out.write(self.pending)
            self.pending = ""
        self.out.flush()

    def isatty(self) -> bool:
        return False


def output_console(width: int | None = None) -> Console:
    """Where a command prints: ``width`` columns when given; else the terminal's width, or, when
    the output is not a terminal (a pipe, a file), as wide as each line needs. Output that is
    not a terminal has no trailing spaces on any line."""
    console = Console() if width is None else Console(width=width)
    if console.is_terminal:
        return console
    return Console(width=width or PIPED_WIDTH, file=cast(TextIO, TrimmedLines(sys.stdout)))


def _number(value: float | None, digits: int = 2, *, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def _with_interval(
    value: float | None, est: Estimate | None, digits: int, *, signed: bool = False
) -> str:
    """``value ±h`` with h the half-width of the by-deal interval (none below two deals)."""
    text = _number(value, digits, signed=signed)
    half = None if est is None else est.half_width
    return text if value is None or half is None else f"{text} ±{half:.{digits}f}"


def rank_text(rank: int, row: BotStanding) -> str:
    """The rank (1 + the rows above separated from it), with ``=`` when the bot is not
    separated from a neighbour (SPEC 10.6)."""
    return f"{rank}=" if row.tied else str(rank)


def faults_text(row: BotStanding) -> str:
    parts = [f"{count} {kind}" for kind, count in row.faults.items()]
    if row.forfeits:
        parts.append(f"{row.forfeits} forfeit")
    return ", ".join(parts) or "-"


FAULTS_SHOWN = 10  # reasons per kind in a bot's report
KEEP_ALWAYS = 1_000_000  # a column that is never dropped (the rank, the bot's name)


@dataclass(frozen=True)
class Column:
    """One column of a table that fits its width. When the table is too wide, the column with the
    lowest ``keep`` is dropped first (``KEEP_ALWAYS``: never); ``wrap`` columns wrap at spaces
    before anything is dropped. Cells of other columns are never wrapped or cut: a name too long
    for the screen folds onto the next line rather than losing characters."""

    header: str
    keep: int = KEEP_ALWAYS
    justify: JustifyMethod = "right"
    wrap: bool = False


# The standings' columns, most expendable first when the screen is narrow: a column added later
# (e.g. a statistic) picks its own ``keep`` among these.
STANDINGS_KEEP = {
    "#": KEEP_ALWAYS,
    "bot": KEEP_ALWAYS,
    "faults": 90,
    "rating": 80,
    "place": 70,
    "dup": 60,
    "score": 50,
    "wins": 40,
    "played": 30,
    "ms": 20,
}

_MEASURE = Console(width=PIPED_WIDTH)


def fitted_table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    *,
    width: int | None,
    title: str | None = None,
    **style: Any,
) -> Table:
    """A table of ``rows`` that fits ``width`` columns (None: as wide as it needs), dropping the
    lowest-``keep`` columns while it does not fit; a caption names what was dropped."""
    shown = list(range(len(columns)))
    dropped: list[str] = []

    def build(squeeze: bool, *, narrowest: bool = False) -> Table:
        """``narrowest``: each wrapping column as narrow as its longest word (to measure)."""
        table = Table(title=title, **{**_TABLE_STYLE, **style})
        for i in shown:
            column = columns[i]
            words = [column.header, *(w for row in rows for w in row[i].split())]
            table.add_column(
                column.header,
                justify=column.justify,
                # squeezed (even the kept columns do not fit): fold long cells, lose nothing
                no_wrap=not (column.wrap or squeeze),
                overflow="fold",
                max_width=max(map(len, words)) if narrowest and column.wrap else None,
            )
        for row in rows:
            table.add_row(*[row[i] for i in shown])
        return table

    while True:
        table = build(squeeze=False)
        if width is None or _natural_width(build(False, narrowest=True)) <= width:
            break
        expendable = [i for i in shown if columns[i].keep < KEEP_ALWAYS]
        if not expendable:
            table = build(squeeze=True)
            break
        drop = min(expendable, key=lambda i: (columns[i].keep, -i))
        shown.remove(drop)
        dropped.insert(0, columns[drop].header)
    if dropped:
        table.caption = f"not shown at {width} columns: {', '.join(dropped)} (--width N)"
        table.caption_justify = "left"
    return table


def _natural_width(table: Table) -> int:
    """The width ``table`` takes when nothing squeezes it: its longest line as rendered (rich's
    own minimum measure leaves out some of the padding, so a table it says fits gets cut)."""
    lines = _MEASURE.render_lines(table, _MEASURE.options, pad=False)
    return max((Segment.get_line_length(line) for line in lines), default=0)


_TABLE_STYLE: dict[str, Any] = dict(
    title_justify="left",
    expand=False,
    box=box.SIMPLE_HEAD,
    pad_edge=False,
    collapse_padding=True,
)


def standings_table(standings: Standings, scope: str = OVERALL, width: int | None = None) -> Table:
    """One table: a game's label, or ``"overall"``. Rows are best first (by rating ordinal).
    ``width``: the columns to fit (None: every column)."""
    rows = standings.tables.get(scope, [])
    with_scores = scope != OVERALL
    matches = standings.matches.get(scope, 0)
    title = f"{'Overall' if scope == OVERALL else scope} ({matches} matches)"
    unrated = standings.unrated.get(scope, 0)
    if unrated:
        title += (
            f" — {'all' if unrated == matches else unrated} unrated: a bot sat on both "
            "teams (ratings unchanged)"
        )
    headers = ["#", "bot", "played", "wins", "place"]
    if with_scores:
        headers += ["score", "dup"]
    headers += ["rating", "faults", "ms"]
    columns = [
        Column(
            h,
            keep=STANDINGS_KEEP[h],
            justify="left" if h in ("bot", "faults") else "right",
            wrap=h == "faults",
        )
        for h in headers
    ]
    cells = []
    for rank, row in zip(standings.shared_ranks(scope), rows):
        line = [
            rank_text(rank, row),
            row.bot,
            str(row.played),
            str(row.wins),
            _with_interval(row.mean_placing, row.placing_estimate, 2),
        ]
        if with_scores:
            line += [
                _with_interval(row.mean_score, row.score_estimate, 1),
                _with_interval(row.duplicate, row.dup_estimate, 1, signed=True),
            ]
        # The rating shown is the sort key itself, so the order never contradicts the numbers.
        line += [f"{row.ordinal:.1f}", faults_text(row), _number(row.median_ms)]
        cells.append(line)
    table = fitted_table(columns, cells, width=width, title=title)
    notes = ["rating: OpenSkill mu - 3 sigma, the sort key"]
    if any(
        r.placing_estimate is not None and r.placing_estimate.half_width is not None for r in rows
    ):
        notes.append(f"±: {standings.confidence:.0%} interval by deal")
    if any(r.tied for r in rows):
        notes.append(f"=: not separated from a neighbour at {standings.confidence:.0%}")
    if notes:
        caption = "\n".join(notes)
        table.caption = f"{table.caption}\n{caption}" if table.caption else caption
        table.caption_justify = "left"
    return table


def pairs_table(standings: Standings, scope: str = OVERALL) -> Group | None:
    """The pairwise table of one scope: row bot over column bot, the mean per-deal difference
    (game tables: of ``dup``; overall: of placing) and P(row better); None when no pair met."""
    pairs = standings.pairs.get(scope, [])
    if not pairs:
        return None
    bots = [r.bot for r in standings.tables.get(scope, [])]
    met = {(p.row, p.column): p for p in pairs}
    shown = [b for b in bots if any(b in key for key in met)]
    what = "dup" if scope != OVERALL else "placing"
    heading = Text(
        f"{'Overall' if scope == OVERALL else scope} pairs: row minus column, mean {what} "
        "difference per deal (P(row better))",
        style="italic",
    )
    table = Table(
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column("", no_wrap=True)
    for bot in shown:
        table.add_column(bot, justify="right", no_wrap=True)
    digits = 1 if scope != OVERALL else 2
    for row in shown:
        cells = [row]
        for column in shown:
            pair = met.get((row, column))
            if pair is None or pair.estimate.mean is None:
                cells.append("-" if row != column else "")
                continue
            p = pair.p_better
            cells.append(
                f"{pair.estimate.mean:+.{digits}f} " + ("(?)" if p is None else f"({p:.0%})")
            )
        table.add_row(*cells)
    return Group(heading, table)


def standings_tables(
    standings: Standings, width: int | None = None, *, with_pairs: bool = False
) -> Group:
    """Every game's table, then the overall one, each fitted to ``width`` columns
    (``with_pairs``: each followed by its pairwise table)."""
    parts: list[RenderableType] = []
    for scope in [*standings.games, OVERALL]:
        parts.append(standings_table(standings, scope, width))
        pairs = pairs_table(standings, scope) if with_pairs else None
        if pairs is not None:
            parts.append(pairs)
    return Group(*parts)


def gauntlet_tables(standings: Standings, named: Sequence[str], width: int | None = None) -> Group:
    """A gauntlet's view (SPEC 10.6): in every table, the field relative to each named bot:
    each other bot's mean per-deal difference over it (``dup`` in a game, placing overall;
    positive: the field bot did better), its interval and P(field bot better)."""
    parts: list[RenderableType] = []
    columns = [
        Column("bot", justify="left"),
        Column("deals", keep=30),
        Column("difference"),
        Column("P(better)"),
    ]
    for scope in [*standings.games, OVERALL]:
        pairs = {(p.row, p.column): p for p in standings.pairs.get(scope, [])}
        what = "dup" if scope != OVERALL else "placing"
        digits = 1 if scope != OVERALL else 2
        for hero in named:
            rows = []
            for row in standings.tables.get(scope, []):
                pair = pairs.get((row.bot, hero))
                if row.bot == hero or pair is None or pair.estimate.mean is None:
                    continue
                p = pair.p_better
                rows.append(
                    [
                        row.bot,
                        str(pair.estimate.n),
                        _with_interval(pair.estimate.mean, pair.estimate, digits, signed=True),
                        "?" if p is None else f"{p:.0%}",
                    ]
                )
            if rows:
                title = (
                    f"{'Overall' if scope == OVERALL else scope}: the field against {hero} "
                    f"(mean {what} difference per deal, bot minus {hero})"
                )
                parts.append(Text(title, style="italic"))  # (a table's title wraps to it)
                parts.append(fitted_table(columns, rows, width=width))
    return Group(*parts)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    return (
        f"{seconds // 3600}h{seconds // 60 % 60:02d}m"
        if seconds >= 3600
        else f"{seconds // 60}m{seconds % 60:02d}s"
    )


def progress_line(progress: Progress, now: float | None = None) -> str:
    finished = progress.already_done + progress.done
    percent = 100 * finished / progress.total if progress.total else 100.0
    line = (
        f"{finished}/{progress.total} matches ({percent:.0f}%), "
        f"{progress.per_second(now):.2f}/s, ETA {_duration(progress.eta_s(now))}"
    )
    if progress.aborted:
        line += f", {progress.aborted} aborted"
    if progress.stage:
        line += f"; {progress.stage}"
    return line


def live_view(
    standings: Standings | None,
    progress: Progress,
    now: float | None = None,
    width: int = 40,
    every_game: bool = True,
    screen: int | None = None,
) -> Group:
    """Standings (every game's, or only the overall table) fitted to ``screen`` columns, a
    progress bar of ``width`` with done/total, rate and ETA, and the latest faults."""
    finished = progress.already_done + progress.done
    parts: list[RenderableType] = []
    if standings is not None:
        parts.append(
            standings_tables(standings, screen)
            if every_game
            else standings_table(standings, OVERALL, screen)
        )
    parts.append(ProgressBar(total=max(progress.total, 1), completed=finished, width=width))
    parts.append(Text(progress_line(progress, now)))
    if progress.recent_faults:
        parts.append(Text("latest faults:", style="bold"))
        # folded, not cut: the reason is the end of the line
        parts.extend(Text("  " + line, overflow="fold") for line in progress.recent_faults)
    return Group(*parts)


def _lines_needed(standings: Standings) -> int:
    """Roughly how many lines every game's table takes (title, header, rows, edges)."""
    return sum(len(rows) + 5 for rows in standings.tables.values()) + 10


@dataclass(frozen=True)
class LogOptions:
    """What a plain log (not a terminal) prints: ``quiet``, no line per match and no progress
    lines (faults still, each on its line); ``report_every`` N: the standings every N matches
    finished (0: only at the end). On a terminal, ``quiet`` prints the plain log too."""

    quiet: bool = False
    report_every: int = 0


async def show_progress(
    progress: Progress,
    standings: Callable[[], Standings],
    console: Console,
    log: LogOptions = LogOptions(),
) -> None:
    """Run until cancelled: a Live view on a terminal, plain lines otherwise."""
    if console.is_terminal and not log.quiet and not log.report_every:
        await _live_loop(progress, standings, console)
    else:
        await _plain_loop(progress, standings, console, log)


async def _live_loop(
    progress: Progress, standings: Callable[[], Standings], console: Console
) -> None:
    """Transient: the caller prints the final standings (in schedule order) when it ends."""
    import trio  # here, not at the top: the commands that only print tables never need trio
    from rich.live import Live

    shown: Standings | None = None
    folded_at, folded_done = -1e9, -1
    with Live(
        console=console, auto_refresh=False, transient=True, vertical_overflow="ellipsis"
    ) as live:
        while True:
            now = time.monotonic()
            if progress.done != folded_done and now - folded_at >= STANDINGS_EVERY_S:
                shown, folded_at, folded_done = standings(), now, progress.done
            every_game = shown is None or _lines_needed(shown) <= console.height
            view = live_view(shown, progress, now, every_game=every_game, screen=console.width)
            live.update(view, refresh=True)
            await trio.sleep(LIVE_REFRESH_S)


async def _plain_loop(
    progress: Progress, standings: Callable[[], Standings], console: Console, log: LogOptions
) -> None:
    """A log a program can read: a line per finished match and each fault (as they come), a
    progress line at most every PLAIN_EVERY_S, the standings every ``log.report_every``
    matches."""
    import trio

    progress.unprinted = deque()  # from now on every fault is kept until printed
    progress.log_finished = not log.quiet  # and every finished match
    progress.report_every, progress.report = log.report_every, standings
    # paced on trio's clock (a test's autojump clock too); rates are wall-clock figures
    last_line, last_at = "", trio.current_time()
    try:
        while True:
            _print_new_lines(progress, console)
            now = trio.current_time()
            line = progress_line(progress)
            if (
                not log.quiet
                and now - last_at >= PLAIN_EVERY_S
                and line.split(",")[0] != last_line.split(",")[0]
            ):
                _plain(console, line)
                last_line, last_at = line, now
            await trio.sleep(LIVE_REFRESH_S)
    finally:
        _print_new_lines(progress, console)
        line = progress_line(progress)
        # once, and only when this run finished a match (not before a preflight error)
        if not log.quiet and progress.done + progress.aborted and line != last_line:
            _plain(console, line)


def _plain(console: Console, line: str) -> None:
    console.print(line, highlight=False, soft_wrap=True, markup=False)


def _print_new_lines(progress: Progress, console: Console) -> None:
    """Every fault and finished match noted since the last call, each on its own line (SPEC
    10.4), however many."""
    queue = progress.unprinted
    while queue:
        line = queue.popleft()
        if isinstance(line, str):
            _plain(console, line)
        else:  # the standings when that many matches had finished (fastchess's interim report)
            finished, standings = line
            _plain(console, f"standings after {finished} of {progress.total} matches:")
            console.print(standings_tables(standings, console.width))


class RefoldDisplay:
    """What ``arena standings`` shows while it refolds a results file without a usable cached
    fold: one line saying why and how many matches, then rich's bar (as a tournament's) on a
    terminal, or, elsewhere, a line when it is done. On standard error: the standings, and
    ``--json``, stay clean on standard output."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.bar: Any = None
        self.task: Any = None
        self.started = time.monotonic()
        self.total = 0

    def __call__(self, why: str, total: int) -> Callable[[int], None]:
        self.total, self.started = total, time.monotonic()
        _plain(self.console, f"refolding the standings of {total} matches: {why}")
        if self.console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

            self.bar = Progress(
                "refolding",
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=self.console,
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task("refold", total=max(total, 1))
        return self.advance

    def advance(self, folded: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=folded)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
        if self.total:
            _plain(
                self.console,
                f"refolded {self.total} matches in {time.monotonic() - self.started:.1f} s",
            )
            self.total = 0


# -- one bot's report ---------------------------------------------------------------------------------


def _ms(value: float) -> str:
    return f"{value:.2f}"


def bot_report_view(report: BotReport, width: int | None = None) -> Group:
    """``arena standings FILE --bot NAME``: results per game, faults by kind with their reasons,
    decision-time percentiles, and the worst matches by duplicate score over its game's spread
    (the commands that replay them: :func:`replay_lines`)."""
    parts: list[RenderableType] = [
        Text(f"{report.bot}: {report.matches} completed matches", style="bold")
    ]
    columns = [
        Column("table", justify="left"),
        Column("rank", keep=95),
        Column("played", keep=30),
        Column("wins", keep=40),
        Column("place", keep=70),
        Column("score", keep=50),
        Column("dup", keep=60),
        Column("rating", keep=80),
        Column("faults", keep=90, justify="left", wrap=True),
    ]
    rows = [
        [
            scope,
            f"{report.ranks[scope][0]}/{report.ranks[scope][1]}",
            str(row.played),
            str(row.wins),
            _number(row.mean_placing),
            _number(row.mean_score, 1),
            _number(row.duplicate, 1, signed=True),
            f"{row.ordinal:.1f}",  # (the standings' rating, its sort key: one way everywhere)
            faults_text(row),
        ]
        for scope, row in report.rows.items()
    ]
    parts.append(fitted_table(columns, rows, width=width, title="Results per game"))
    if report.times:
        columns = [
            Column("table", justify="left"),
            Column("decisions", keep=10),
            Column("p50 ms"),
            Column("p90 ms"),
            Column("p99 ms", keep=40),
            Column("max ms", keep=50),
        ]
        rows = [
            [scope, str(t.count), _ms(t.p50), _ms(t.p90), _ms(t.p99), _ms(t.max)]
            for scope, t in report.times.items()
        ]
        parts.append(fitted_table(columns, rows, width=width, title="Decision times"))
    if report.faults:
        # kind -> reason -> matches: the same reason in many matches is shown once
        by_kind: dict[str, dict[str, list[str]]] = {}
        for fault in report.faults:
            reason = fault_reason(fault.message)
            by_kind.setdefault(fault.kind, {}).setdefault(reason, []).append(
                f"{fault.match_id} (seat {fault.seat})"
            )
        parts.append(Text(f"Faults ({len(report.faults)})", style="bold"))
        for kind, reasons in by_kind.items():
            count = sum(len(where) for where in reasons.values())
            parts.append(Text(f"  {kind}: {count}", style="yellow"))
            for reason, where in list(reasons.items())[:FAULTS_SHOWN]:
                more = f" and {len(where) - 3} more" if len(where) > 3 else ""
                parts.append(
                    Text(f"    {len(where)}x {reason}\n      in {', '.join(where[:3])}{more}")
                )
            if len(reasons) > FAULTS_SHOWN:
                parts.append(
                    Text(f"    ... {len(reasons) - FAULTS_SHOWN} other reasons (--json lists all)")
                )
    else:
        parts.append(Text("Faults: none", style="bold"))
    if report.worst:
        columns = [
            Column("#"),
            Column("match", justify="left"),
            Column("seat", keep=30),
            Column("score", keep=40),
            Column("place", keep=50),
            Column("dup"),
            Column("dup/sd", keep=20),
        ]
        rows = [
            [
                str(n),
                m.match_id,
                ",".join(map(str, m.seats)),
                _number(m.score, 1),
                _number(m.placing, 1),
                _number(m.duplicate, 1, signed=True),
                _number(m.scaled, 2, signed=True),
            ]
            for n, m in enumerate(report.worst, 1)
        ]
        parts.append(
            fitted_table(
                columns,
                rows,
                width=width,
                title="Worst matches by duplicate score over its game's spread (dup/sd, worst "
                "first; sd: "
                + ", ".join(f"{g} {sd:.1f}" for g, sd in report.spreads.items())
                + ")",
            )
        )
    else:
        parts.append(Text("Worst matches: none (no deal played in two or more rotations)"))
    return Group(*parts)


def replay_lines(report: BotReport, worst_logs: str = "") -> list[str]:
    """The lines that replay a bot's worst matches, one command each (numbered as the worst
    matches' table), and the ``grep`` that finds the worst one in its stderr logs
    (``worst_logs``): printed on lines of their own, never cut or folded, to be copied whole."""
    lines = []
    for n, m in enumerate(report.worst, 1):
        if m.record:
            command = (
                f"arena replay {shlex.quote(str(m.record.path))}"
                + (f" --match {shlex.quote(m.match_id)}" if m.record.at is not None else "")
                + f" --seat {m.seats[0]} --decisions"
            )
        else:
            command = f"(no record kept of {m.match_id})"
        lines.append(f"{n}: {command}")
    if report.worst and worst_logs:
        lines.append(
            f"its stderr in match 1: grep -n -A40 'match {report.worst[0].match_id} ' {worst_logs}"
        )
    return lines
