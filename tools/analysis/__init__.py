"""Analyses of trained runs, run from the repository root as
``python -m tools.analysis.<name>``."""
