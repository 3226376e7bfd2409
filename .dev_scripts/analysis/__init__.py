"""Analyses of trained runs, run from the repository root as
``PYTHONPATH=.dev_scripts python -m analysis.<name>``."""
