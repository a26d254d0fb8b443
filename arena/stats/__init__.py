"""Pure statistics over tournament results: per-deal means and t-intervals, paired differences
with the probability that one bot is better, separation of ranks, and the SPRT of ``arena
compare``. Standard library only; no processes, no SQL (SPEC.md 10.6)."""
