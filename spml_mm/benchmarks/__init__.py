"""Generated benchmarks for the repository's tools and tests.

Not imported by ``import spml_mm`` (nor by ``custom_imports=['spml_mm']``):
the scene generator needs Pillow's fonts and SciPy, which training and
testing do not. ``tools/make_proxy_data.py`` imports
:mod:`spml_mm.benchmarks.proxy` by name, so it runs from a checkout and from
an installed package alike.
"""
