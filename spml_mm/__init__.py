"""spml-mm: single-positive multi-label learning for MMPretrain."""
import mmengine
import mmpretrain
from mmengine.config.utils import MODULE2PACKAGE
from mmengine.utils import digit_version

from .version import (MMENGINE_VERSION_RANGE, MMPRETRAIN_VERSION_RANGE,
                      __version__, version_info)


def check_version(package: str, version: str, supported: tuple) -> None:
    """Fail unless ``minimum <= version < maximum``, naming the range.

    Args:
        package (str): The distribution's name, for the message.
        version (str): Its installed version.
        supported (tuple): ``(minimum, maximum)``, maximum excluded.
    """
    minimum, maximum = supported
    if not (digit_version(minimum) <= digit_version(version) <
            digit_version(maximum)):
        raise ImportError(
            f'spml-mm {__version__} supports {package}>={minimum},'
            f'<{maximum}, but {package}=={version} is installed; install a '
            f'supported version, e.g. pip install "{package}>={minimum},'
            f'<{maximum}".')


check_version('mmpretrain', mmpretrain.__version__, MMPRETRAIN_VERSION_RANGE)
check_version('mmengine', mmengine.__version__, MMENGINE_VERSION_RANGE)

# MMEngine resolves ``_base_ = ['spml_mm::grloss/resnet50_voc.py']`` only for
# packages in this table, through the directory of the package: the value
# must be a name that ``mmengine.utils.get_installed_path`` turns into the
# directory of the spml_mm being imported. The distribution name would give
# site-packages/spml_mm, which does not exist for an editable install; a
# module of the package has no distribution of its own, so MMEngine finds
# it with importlib instead, the same way for a wheel, an editable install
# and a checkout on PYTHONPATH. The configs are under spml_mm/.mim/configs
# (setup.py puts them there).
MODULE2PACKAGE.setdefault('spml_mm', 'spml_mm.version')

from . import datasets, engine, evaluation, models, utils  # noqa: E402,F401
from .apis.methods import register_models  # noqa: E402

# mmpretrain.list_models() / get_model() know the plugin's models
register_models()

__all__ = ['__version__', 'version_info', 'check_version']
