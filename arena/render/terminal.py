"""Standings and progress on screen: pure renderables, plus the thin loops that show them live.

``standings_table`` and ``live_view`` are pure functions from data to rich renderables (tests
render them on a fixed-width console without colour). ``show_progress`` is the loop a running
tournament starts beside its matches: a rich ``Live`` view on a terminal, refreshed a few times a
second, or plain progress lines when the output is not a terminal (CI, a pipe).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

import trio
from rich import box
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from arena.stats.moments import Estimate
from arena.tournament.runner import Progress
from arena.tournament.standings import OVERALL, BotStanding, Standings

PIPED_WIDTH = 1000  # piped output is as wide as it needs: no table is expanded to this

LIVE_REFRESH_S = 0.5  # screen refresh: ~15 ms of the referee's CPU each time
STANDINGS_EVERY_S = 1.0  # the standings fold runs at most this often
PLAIN_EVERY_S = 5.0  # a plain progress line at most this often


def output_console(width: int | None = None) -> Console:
    """Where a command prints: ``width`` columns when given; else the terminal's width, or, when
    the output is not a terminal (a pipe, a file), as wide as each line needs."""
    if width is not None:
        return Console(width=width)
    console = Console()
    return console if console.is_terminal else Console(width=PIPED_WIDTH)


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
    """The rank (shared by a run of rows not separated from each other), with ``=`` when the
    bot is not separated from a neighbour (SPEC 10.6)."""
    return f"{rank}=" if row.tied else str(rank)


def faults_text(row: BotStanding) -> str:
    parts = [f"{count} {kind}" for kind, count in row.faults.items()]
    if row.forfeits:
        parts.append(f"{row.forfeits} forfeit")
    return ", ".join(parts) or "-"


def standings_table(standings: Standings, scope: str = OVERALL) -> Table:
    """One table: a game's label, or ``"overall"``. Rows are best first (by rating ordinal)."""
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
    table = Table(
        title=title,
        title_justify="left",
        expand=False,
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column("#", justify="right")
    table.add_column("bot", no_wrap=True)
    table.add_column("played", justify="right", no_wrap=True)
    table.add_column("wins", justify="right", no_wrap=True)
    table.add_column("place", justify="right", no_wrap=True)
    if with_scores:
        table.add_column("score", justify="right", no_wrap=True)
        table.add_column("dup", justify="right", no_wrap=True)
    table.add_column("rating", justify="right", no_wrap=True)
    table.add_column("faults")
    table.add_column("ms", justify="right", no_wrap=True)
    for rank, row in zip(standings.shared_ranks(scope), rows):
        cells = [
            rank_text(rank, row),
            row.bot,
            str(row.played),
            str(row.wins),
            _with_interval(row.mean_placing, row.placing_estimate, 2),
        ]
        if with_scores:
            cells += [
                _with_interval(row.mean_score, row.score_estimate, 1),
                _with_interval(row.duplicate, row.dup_estimate, 1, signed=True),
            ]
        # The rating shown is the sort key itself, so the order never contradicts the numbers.
        cells += [f"{row.ordinal:.1f}", faults_text(row), _number(row.median_ms)]
        table.add_row(*cells)
    notes = ["rating: OpenSkill mu - 3 sigma, the sort key"]
    if any(
        r.placing_estimate is not None and r.placing_estimate.half_width is not None for r in rows
    ):
        notes.append(f"±: {standings.confidence:.0%} interval by deal")
    if any(r.tied for r in rows):
        notes.append(f"=: not separated (P(better) < {standings.confidence:.0%})")
    if notes:
        table.caption = "\n".join(notes)
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


def standings_tables(standings: Standings, *, with_pairs: bool = False) -> Group:
    """Every game's table, then the overall one (``with_pairs``: each followed by its pairwise
    table)."""
    parts: list[RenderableType] = []
    for scope in [*standings.games, OVERALL]:
        parts.append(standings_table(standings, scope))
        pairs = pairs_table(standings, scope) if with_pairs else None
        if pairs is not None:
            parts.append(pairs)
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
) -> Group:
    """Standings (every game's, or only the overall table), a progress bar with done/total, rate
    and ETA, and the latest faults."""
    finished = progress.already_done + progress.done
    parts: list[RenderableType] = []
    if standings is not None:
        parts.append(
            standings_tables(standings) if every_game else standings_table(standings, OVERALL)
        )
    parts.append(ProgressBar(total=max(progress.total, 1), completed=finished, width=width))
    parts.append(Text(progress_line(progress, now)))
    if progress.recent_faults:
        parts.append(Text("latest faults:", style="bold"))
        parts.extend(
            Text("  " + line, overflow="ellipsis", no_wrap=True) for line in progress.recent_faults
        )
    return Group(*parts)


def _lines_needed(standings: Standings) -> int:
    """Roughly how many lines every game's table takes (title, header, rows, edges)."""
    return sum(len(rows) + 5 for rows in standings.tables.values()) + 10


async def show_progress(
    progress: Progress, standings: Callable[[], Standings], console: Console
) -> None:
    """Run until cancelled: a Live view on a terminal, plain lines otherwise."""
    if console.is_terminal:
        await _live_loop(progress, standings, console)
    else:
        await _plain_loop(progress, console)


async def _live_loop(
    progress: Progress, standings: Callable[[], Standings], console: Console
) -> None:
    """Transient: the caller prints the final standings (in schedule order) when it ends."""
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
            live.update(live_view(shown, progress, now, every_game=every_game), refresh=True)
            await trio.sleep(LIVE_REFRESH_S)


async def _plain_loop(progress: Progress, console: Console) -> None:
    progress.unprinted_faults = deque()  # from now on every fault is kept until printed
    printed_faults = 0
    last_line, last_at = "", 0.0
    try:
        while True:
            printed_faults = _print_new_faults(progress, console, printed_faults)
            now = time.monotonic()
            line = progress_line(progress, now)
            if now - last_at >= PLAIN_EVERY_S and line.split(",")[0] != last_line.split(",")[0]:
                console.print(line, highlight=False, soft_wrap=True, markup=False)
                last_line, last_at = line, now
            await trio.sleep(LIVE_REFRESH_S)
    finally:
        _print_new_faults(progress, console, printed_faults)
        console.print(progress_line(progress), highlight=False, soft_wrap=True, markup=False)


def _print_new_faults(progress: Progress, console: Console, printed: int) -> int:
    """Every fault noted since the last call, each on its own line (SPEC 10.4), however many."""
    if progress.unprinted_faults is None:
        progress.unprinted_faults = deque()
    queue = progress.unprinted_faults
    while queue:
        line = queue.popleft()
        console.print(f"fault: {line}", highlight=False, soft_wrap=True, markup=False)
    return progress.faults_seen
