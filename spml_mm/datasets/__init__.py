from .demo import make_demo_dataset
from .protocol import observe_uniform, split_train_val
from .spml_dataset import SPMLDataset
from .transforms import SinglePositiveLabel

__all__ = [
    'SPMLDataset', 'SinglePositiveLabel', 'make_demo_dataset',
    'observe_uniform', 'split_train_val'
]
