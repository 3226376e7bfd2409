from .ignore_classifier import (IGNOREClassifier, cam_mask,
                                positive_cam)

__all__ = ['IGNOREClassifier', 'cam_mask', 'positive_cam']
