from .asymmetric_pseudo_labeling import (AsymmetricPseudoLabeling,
                                         select_pseudo_negatives)
from .base_label_updater import BaseLabelUpdater

__all__ = [
    'AsymmetricPseudoLabeling', 'BaseLabelUpdater', 'select_pseudo_negatives'
]
