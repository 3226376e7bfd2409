"""Accuracy, cost and robustness benchmarks, run from the repository root as
``python -m tools.benchmark.<name>``; results go to docs/results/.

Shared by them: ``suites`` (which config each method trains with),
``training`` (training and testing through the tools), ``gpu_steps`` (the
step the GPU tools time) and ``pages`` (each results page from its json,
which ``tools/docs_tables.py`` checks).
"""
