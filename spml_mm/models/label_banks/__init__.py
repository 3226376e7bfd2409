from .base_label_bank import BaseLabelBank
from .corrected_label_bank import CorrectedLabelBank
from .damp_label_bank import DAMPLabelBank
from .label_bank import LabelBank
from .label_estimate_table import LabelEstimateTable
from .opml_label_bank import OPMLLabelBank
from .teacher_label_bank import TeacherLabelBank
from .updaters import *  # noqa: F401,F403

__all__ = [
    'BaseLabelBank', 'CorrectedLabelBank', 'DAMPLabelBank', 'LabelBank',
    'LabelEstimateTable', 'OPMLLabelBank', 'TeacherLabelBank'
]
