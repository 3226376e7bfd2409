"""The ``spml_mm`` registry scope.

Every class of the plugin registers in MMPretrain's registries
(``mmpretrain.registry.MODELS``, ...), so configs with
``default_scope='mmpretrain'`` build them. A config that inherits from a
packaged config, ``_base_ = ['spml_mm::grloss/resnet50_voc.py']``, gets
``_scope_='spml_mm'`` on every inherited component (MMEngine marks external
bases so), and MMEngine then builds those components from the registries of
scope ``spml_mm``, which it finds by importing this module. The registries
here are empty children of MMPretrain's: a lookup in them falls through to
MMPretrain (and MMEngine above it), where the plugin's classes are, and
their ``locations`` import the plugin first.
"""
from mmengine.registry import Registry
from mmpretrain import registry as mmpretrain

SCOPE = 'spml_mm'


def _scope_of(parent: Registry) -> Registry:
    return Registry(
        parent.name, parent=parent, scope=SCOPE, locations=['spml_mm'])


RUNNERS = _scope_of(mmpretrain.RUNNERS)
RUNNER_CONSTRUCTORS = _scope_of(mmpretrain.RUNNER_CONSTRUCTORS)
LOOPS = _scope_of(mmpretrain.LOOPS)
HOOKS = _scope_of(mmpretrain.HOOKS)
LOG_PROCESSORS = _scope_of(mmpretrain.LOG_PROCESSORS)
OPTIMIZERS = _scope_of(mmpretrain.OPTIMIZERS)
OPTIM_WRAPPERS = _scope_of(mmpretrain.OPTIM_WRAPPERS)
OPTIM_WRAPPER_CONSTRUCTORS = _scope_of(mmpretrain.OPTIM_WRAPPER_CONSTRUCTORS)
PARAM_SCHEDULERS = _scope_of(mmpretrain.PARAM_SCHEDULERS)
DATASETS = _scope_of(mmpretrain.DATASETS)
DATA_SAMPLERS = _scope_of(mmpretrain.DATA_SAMPLERS)
TRANSFORMS = _scope_of(mmpretrain.TRANSFORMS)
MODELS = _scope_of(mmpretrain.MODELS)
MODEL_WRAPPERS = _scope_of(mmpretrain.MODEL_WRAPPERS)
WEIGHT_INITIALIZERS = _scope_of(mmpretrain.WEIGHT_INITIALIZERS)
BATCH_AUGMENTS = _scope_of(mmpretrain.BATCH_AUGMENTS)
TASK_UTILS = _scope_of(mmpretrain.TASK_UTILS)
TOKENIZER = _scope_of(mmpretrain.TOKENIZER)
METRICS = _scope_of(mmpretrain.METRICS)
EVALUATORS = _scope_of(mmpretrain.EVALUATORS)
VISUALIZERS = _scope_of(mmpretrain.VISUALIZERS)
VISBACKENDS = _scope_of(mmpretrain.VISBACKENDS)
