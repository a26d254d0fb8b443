"""The league: authors submit bot versions over the web, the arena plays them continuously in
duplicate deal-sets and keeps the ladder current (SPEC.md 12)."""
