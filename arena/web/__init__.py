"""The read-only web pages of a tournament (``arena serve``, ``arena tournament --web``).

``source`` keeps what the pages show, ``matchview`` derives a match's frames from its record,
``server`` serves them (hypercorn + starlette: the optional ``web`` extra, imported only when a
page is served, so the referee and the other commands never load them).
"""
