from .asymmetric_pseudo_labeling import (AsymmetricPseudoLabeling,
                                         select_pseudo_negatives)
from .base_label_updater import BaseLabelUpdater
from .opml_label_updater import OPMLLabelUpdater, num_corrections

__all__ = [
    'AsymmetricPseudoLabeling', 'BaseLabelUpdater', 'select_pseudo_negatives',
    'OPMLLabelUpdater', 'num_corrections'
]
