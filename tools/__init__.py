"""The repository's tools. The entry points at this level run as scripts
(``python tools/train.py``); ``benchmark`` and ``analysis`` are packages run
from the repository root as modules (``python -m tools.benchmark.accuracy``).

Imports run one way: an entry point imports shared modules (``common.py``
here; ``benchmark/suites.py``, ``training.py``, ``gpu_steps.py`` and the
result pages' renderers in ``benchmark/pages/``), and a shared module never
imports an entry point (``tests/test_imports.py``).
"""
