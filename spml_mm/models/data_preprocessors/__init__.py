from .multi_view_data_preprocessor import (MultiViewDataPreprocessor,
                                           is_multi_view, split_views)

__all__ = ['MultiViewDataPreprocessor', 'is_multi_view', 'split_views']
