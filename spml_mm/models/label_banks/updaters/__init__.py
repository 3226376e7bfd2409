from .asymmetric_pseudo_labeling import AsymmetricPseudoLabeling
from .base_label_updater import BaseLabelUpdater
from .opml_label_updater import OPMLLabelUpdater, num_corrections
from .selection import count_per_class, lowest_per_class

__all__ = [
    'AsymmetricPseudoLabeling', 'BaseLabelUpdater', 'OPMLLabelUpdater',
    'count_per_class', 'lowest_per_class', 'num_corrections'
]
