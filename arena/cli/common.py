"""What several commands share: the --width option and the one-line input error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

width_option: Callable[[Callable[..., Any]], Callable[..., Any]] = click.option(
    "--width",
    type=click.IntRange(40, 1000),
    default=None,
    help="Lay tables out for this many columns [the terminal's; piped: as wide as needed].",
)
