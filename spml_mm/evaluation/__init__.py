from .metrics import (SPMLAveragePrecision, average_precision_per_class,
                      mean_average_precision)

__all__ = [
    'SPMLAveragePrecision', 'average_precision_per_class',
    'mean_average_precision'
]
