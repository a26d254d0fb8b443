"""What checking a bot's line costs: msgspec alone vs ``decode_from_bot`` (which also rejects
repeated keys), per line, for the usual action lines and for a line that takes the exact check.

    python3 benchmarks/decode.py [--number 200000]
"""

from __future__ import annotations

import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from benchmarks import common
from protocol import codec

LINES = {
    "action by value": b'{"type":"action","id":123,"action":"QS"}',
    "action by index": b'{"type":"action","id":123,"index":3}',
    "escaped quote (exact check)": b'{"type":"action","id":123,"action":"Q\\"S"}',
}


def per_line_ns(decode, line: bytes, number: int) -> float:
    """The fastest of 5 timings of ``number`` decodes, per line, in ns."""
    return min(timeit.repeat(lambda: decode(line), number=number, repeat=5)) / number * 1e9


def main() -> None:
    parser = common.parser(__doc__)
    parser.add_argument("--number", type=int, default=200_000)
    number = common.parse(parser, smoke={"number": 2000}).number
    rows = []
    for label, line in LINES.items():
        plain = per_line_ns(codec._from_bot_decoder.decode, line, number)
        checked = per_line_ns(codec.decode_from_bot, line, number)
        rows.append((label, f"{plain:.0f}", f"{checked:.0f}", f"{checked - plain:+.0f}"))
    print(f"the fastest of 5 x {number} decodes per line; {common.load_note()}")
    common.table(["line", "msgspec ns", "decode_from_bot ns", "difference ns"], rows)


if __name__ == "__main__":
    main()
