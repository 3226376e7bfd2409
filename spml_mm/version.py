"""The version of spml-mm and the versions of OpenMMLab it supports.

The one place these are written: ``pyproject.toml`` reads ``__version__``
from here when the package is built, ``spml_mm/__init__.py`` checks the
installed MMPretrain and MMEngine against the ranges below at import, and
``tests/test_packaging.py`` checks that ``pyproject.toml``'s dependencies
state the same ranges.
"""

__version__ = '0.1.0'

#: Supported versions as ``(minimum, maximum)``: minimum included, maximum
#: excluded (the OpenMMLab convention).
MMPRETRAIN_VERSION_RANGE = ('1.2.0', '2.0.0')
MMENGINE_VERSION_RANGE = ('0.10.7', '1.0.0')


#: ``__version__`` as a tuple of ints, e.g. ``(0, 1, 0)``.
version_info = tuple(int(part) for part in __version__.split('.'))

__all__ = [
    '__version__', 'version_info', 'MMPRETRAIN_VERSION_RANGE',
    'MMENGINE_VERSION_RANGE'
]
