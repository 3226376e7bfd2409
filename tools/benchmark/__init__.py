"""Accuracy, cost and robustness benchmarks, run from the repository root as
``python -m tools.benchmark.<name>``; results go to docs/results/."""
