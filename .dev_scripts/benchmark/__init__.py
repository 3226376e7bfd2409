"""Accuracy, cost and robustness benchmarks, run from the repository root
with ``.dev_scripts`` on the path::

    PYTHONPATH=.dev_scripts python -m benchmark.<name> ...

Results go to work_dirs/results, or to docs/results with ``--out-dir
docs/results``. ``python -m benchmark.gpu_run`` is the GPU command that
``bash tools/gpu_run.sh`` starts.

Shared by them: ``common`` (the repository's folders, how a page names its
command, :func:`common.dev_env` for a process that runs one of these
modules), ``suites`` (which config each method trains with), ``training``
(training and testing through ``tools/train.py`` and ``tools/test.py``),
``gpu_steps`` (the step the GPU tools time) and ``pages`` (each results page
from its json, which ``.dev_scripts/docs_tables.py`` checks). A shared module
never imports an entry point (``tests/test_imports.py``).
"""
