from .calibration import (CalibrationError, conformal_thresholds,
                          estimate_class_priors, estimate_positives_per_image,
                          f1_optimal_thresholds, global_conformal_threshold,
                          prior_thresholds)
from .label_set_metric import SPMLLabelSetMetric
from .metrics import (SPMLAveragePrecision,
                      annotated_average_precision_per_class,
                      average_precision_per_class, mean_average_precision,
                      selection_score)
from .real_accuracy import SPMLReaLAccuracy
from .score_dump import SPMLScoreDump

__all__ = [
    'CalibrationError', 'SPMLAveragePrecision', 'SPMLLabelSetMetric',
    'SPMLScoreDump', 'SPMLReaLAccuracy',
    'conformal_thresholds', 'estimate_class_priors',
    'estimate_positives_per_image', 'f1_optimal_thresholds',
    'global_conformal_threshold', 'prior_thresholds',
    'annotated_average_precision_per_class',
    'average_precision_per_class', 'mean_average_precision',
    'selection_score'
]
