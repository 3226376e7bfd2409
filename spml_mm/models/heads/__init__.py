from .decision import apply_decision
from .spml_linear_head import SPMLLinearClsHead

__all__ = ['SPMLLinearClsHead', 'apply_decision']
