"""spml-mm: single-positive multi-label learning for MMPretrain."""
from . import datasets, engine, evaluation, models, utils  # noqa: F401

__version__ = '0.1.0'
