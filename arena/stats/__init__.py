"""Pure statistics over tournament results: per-deal means and t-intervals, paired differences
with the probability that one bot is better, Holm's procedure for the separation of ranks, and
the sequential test and always-valid interval of ``arena compare``. Standard library only; no
processes, no SQL (SPEC.md 10.6, 10.10)."""
