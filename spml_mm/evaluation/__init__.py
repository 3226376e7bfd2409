from .metrics import (SPMLAveragePrecision,
                      annotated_average_precision_per_class,
                      average_precision_per_class, mean_average_precision,
                      selection_score)

__all__ = [
    'SPMLAveragePrecision', 'annotated_average_precision_per_class',
    'average_precision_per_class', 'mean_average_precision',
    'selection_score'
]
