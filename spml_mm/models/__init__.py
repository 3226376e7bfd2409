from .backbones import *  # noqa: F401,F403
from .classifiers import *  # noqa: F401,F403
from .data_preprocessors import *  # noqa: F401,F403
from .heads import *  # noqa: F401,F403
from .label_banks import *  # noqa: F401,F403
from .losses import *  # noqa: F401,F403
