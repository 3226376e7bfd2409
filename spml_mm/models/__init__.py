from .backbones import *  # noqa: F401,F403
from .data_preprocessors import *  # noqa: F401,F403
from .heads import *  # noqa: F401,F403
from .label_bank import LabelBank  # noqa: F401
from .corrected_label_bank import CorrectedLabelBank  # noqa: F401
from .opml_label_bank import OPMLLabelBank  # noqa: F401
from .label_updaters import *  # noqa: F401,F403
from .losses import *  # noqa: F401,F403
