"""Exits after its first match_end, as if one match were all there is."""

import sys

from _base import serve


def on_message(message):
    if message["type"] == "match_end":
        sys.exit(0)


serve(on_message=on_message)
