"""What checking a bot's line costs: msgspec alone vs ``decode_from_bot`` (which also rejects
repeated keys), per line, for the usual action lines and for a line that takes the exact check.

    python benchmarks/decode.py [--number 200000]
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocol import codec

LINES = {
    "action by value": b'{"type":"action","id":123,"action":"QS"}',
    "action by index": b'{"type":"action","id":123,"index":3}',
    "escaped quote (exact check)": b'{"type":"action","id":123,"action":"Q\\"S"}',
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=200_000)
    number = parser.parse_args().number
    for label, line in LINES.items():
        plain = (
            min(
                timeit.repeat(
                    lambda line=line: codec._from_bot_decoder.decode(line), number=number, repeat=5
                )
            )
            / number
            * 1e9
        )
        checked = (
            min(
                timeit.repeat(
                    lambda line=line: codec.decode_from_bot(line), number=number, repeat=5
                )
            )
            / number
            * 1e9
        )
        print(
            f"{label:30s} msgspec {plain:7.0f} ns   decode_from_bot {checked:7.0f} ns   "
            f"(+{checked - plain:.0f} ns)"
        )


if __name__ == "__main__":
    main()
