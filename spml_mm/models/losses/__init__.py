from .an_loss import ANLoss, an_loss
from .consistency import ViewConsistency, view_consistency
from .em_loss import EMLoss, em_loss
from .lasd_loss import LASDLoss, lasd_loss, theorem_5_4_lambda_neg

__all__ = [
    'ANLoss', 'an_loss', 'LASDLoss', 'lasd_loss', 'theorem_5_4_lambda_neg',
    'ViewConsistency', 'view_consistency', 'EMLoss', 'em_loss'
]
