"""Rendering: standings, progress and match records drawn from data (terminal now, web next)."""
