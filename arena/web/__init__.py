"""The read-only web pages of a tournament (``arena serve``, ``arena tournament --web``).

``source`` wires one tournament's parts together: ``index`` (what is stored), ``fold`` (the
standings), ``running`` (the matches being played, read by ``records``), ``feed`` (what changed
since), ``sealed`` (what each viewer may see of the cards) and ``pages`` (each page's JSON);
``matchview`` derives a match's frames from its record, ``server`` serves them (hypercorn +
starlette: the optional ``web`` extra, imported only when a page is served, so the referee and
the other commands never load them).
"""
