"""The referee: bot processes, their JSON lines, the clock, one match, its record and result.

The only part of the arena that touches bot processes; it joins the rules (``arena.games``) to
the processes and knows no tournament.
"""
