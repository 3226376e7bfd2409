from .an_loss import ANLoss, an_loss
from .base import BaseSPMLLoss, PseudoLabelLoss
from .consistency import ViewConsistency, view_consistency
from .em_loss import EMLoss, em_loss
from .epr_loss import EPRLoss, epr_loss
from .gpr import GPRLoss, gpr_loss
from .gr import GRLoss, gr_loss
from .ignore_loss import IGNORELoss, ignore_loss, ignore_rejection
from .large_loss import LLLoss, large_loss_selection, ll_loss
from .lasd_loss import LASDLoss, lasd_loss, theorem_5_4_lambda_neg
from .role_loss import ROLELoss, role_loss
from .opml_loss import OPMLLoss, high_rank_penalty, opml_loss
from .partial_bce_loss import PartialBCELoss, partial_bce_loss
from .unified_spml_loss import UnifiedSPMLLoss, unified_spml_loss
from .vlpl_loss import VLPLLoss, vlpl_loss

__all__ = [
    'BaseSPMLLoss', 'PseudoLabelLoss', 'ANLoss', 'an_loss', 'LASDLoss',
    'lasd_loss', 'theorem_5_4_lambda_neg',
    'ViewConsistency', 'view_consistency', 'EMLoss', 'em_loss',
    'GRLoss', 'gr_loss', 'GPRLoss', 'gpr_loss', 'VLPLLoss', 'vlpl_loss',
    'UnifiedSPMLLoss', 'unified_spml_loss', 'OPMLLoss', 'opml_loss',
    'high_rank_penalty', 'EPRLoss', 'epr_loss', 'LLLoss', 'll_loss',
    'large_loss_selection', 'ROLELoss', 'role_loss', 'PartialBCELoss',
    'partial_bce_loss', 'IGNORELoss', 'ignore_loss', 'ignore_rejection'
]
