from .an_loss import ANLoss, an_loss
from .consistency import ViewConsistency, view_consistency
from .lasd_loss import LASDLoss, lasd_loss, theorem_5_4_lambda_neg

__all__ = [
    'ANLoss', 'an_loss', 'LASDLoss', 'lasd_loss', 'theorem_5_4_lambda_neg',
    'ViewConsistency', 'view_consistency'
]
