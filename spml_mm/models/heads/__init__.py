from .spml_linear_head import SPMLLinearClsHead

__all__ = ['SPMLLinearClsHead']
