from .multi_view_data_preprocessor import (MultiViewDataPreprocessor,
                                           is_multi_view, split_views)
from .spml_data_preprocessor import SPMLDataPreprocessor

__all__ = [
    'MultiViewDataPreprocessor', 'SPMLDataPreprocessor', 'is_multi_view',
    'split_views'
]
