from .precomputed_features import PrecomputedFeatures

__all__ = ['PrecomputedFeatures']
