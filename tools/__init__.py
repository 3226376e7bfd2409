"""The repository's tools: what a user runs, each a script at this level
(``python tools/train.py``, ``bash tools/dist_train.sh``, ``bash
tools/gpu_run.sh``); the wheel ships them under ``spml_mm/.mim/tools``.

A tool imports ``spml_mm``, never another tool, and nothing of
``.dev_scripts`` (the benchmarks, analyses, results pages and the GPU run's
harness, which import ``spml_mm`` and run this folder's scripts as processes;
``tests/test_imports.py`` checks it).
"""
