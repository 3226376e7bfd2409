from .grouped_optim_wrapper_constructor import GroupedOptimWrapperConstructor

__all__ = ['GroupedOptimWrapperConstructor']
