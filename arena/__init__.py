"""Trick Arena: a referee and tournament arena for bots that play trick-taking card games."""

__version__ = "0.1.0"
