"""The benchmark suite: scripts that print measured figures (benchmarks/README.md maps each goal
to its script). Each runs as ``python3 benchmarks/NAME.py`` or ``python3 -m benchmarks.NAME``;
what they share is in :mod:`benchmarks.common`."""
