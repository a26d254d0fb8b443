"""Answers hello with a line that is not JSON."""

import sys

for _line in sys.stdin:
    print("hello referee, nice to meet you!", flush=True)
