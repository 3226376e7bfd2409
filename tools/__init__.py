"""The repository's tools. The entry points at this level run as scripts
(``python tools/train.py``); ``benchmark`` and ``analysis`` are packages run
from the repository root as modules (``python -m tools.benchmark.accuracy``).
"""
