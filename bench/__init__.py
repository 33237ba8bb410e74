"""Benchmarks: `python -m bench` runs every bench/p*.py main(); each prints its ratios."""
