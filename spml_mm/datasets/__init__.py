from .class_folders import SPMLClassFolderDataset, load_class_folder_split
from .coco import SPMLCOCO, load_coco_split
from .cub import SPMLCUB, load_cub_split
from .demo import make_demo_dataset
from .feature_cache import LoadCachedFeatures
from .image_cache import LoadCachedImage
from .imagenet import SPMLImageNet, load_imagenet_split, read_real_labels
from .layout import ParsedSplit, SPMLLayoutDataset
from .multilabel import SPMLMultiLabelDataset, load_multilabel_annotations
from .nuswide import SPMLNUSWIDE, load_nuswide_split
from .open_images import SPMLOpenImages, load_open_images_split
from .prepare import prepare_official
from .protocol import (OBSERVE_RULES, observe_labels, observe_uniform,
                       split_train_val)
from .spml_dataset import SPMLDataset
from .teacher_scores import load_teacher_scores, save_teacher_scores
from .transforms import SinglePositiveLabel
from .voc import SPMLVOC, load_voc_split

__all__ = [
    'SPMLDataset', 'SinglePositiveLabel', 'make_demo_dataset',
    'observe_uniform', 'observe_labels', 'OBSERVE_RULES', 'split_train_val',
    'ParsedSplit', 'SPMLLayoutDataset',
    'SPMLVOC', 'SPMLCOCO', 'SPMLNUSWIDE', 'SPMLCUB', 'SPMLMultiLabelDataset',
    'load_voc_split', 'load_coco_split', 'load_nuswide_split',
    'load_cub_split', 'load_multilabel_annotations', 'prepare_official',
    'LoadCachedFeatures', 'LoadCachedImage', 'load_teacher_scores',
    'save_teacher_scores', 'SPMLImageNet', 'load_imagenet_split',
    'read_real_labels', 'SPMLClassFolderDataset', 'load_class_folder_split',
    'SPMLOpenImages', 'load_open_images_split'
]
