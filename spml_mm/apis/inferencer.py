import os.path as osp
from typing import List, Optional, Union

import numpy as np
import torch
from mmcv import imread
from mmengine.config import Config
from mmengine.dataset import default_collate
from mmpretrain.apis import ImageClassificationInferencer
from mmpretrain.structures import DataSample

from .model import checkpoint_classes
from .thresholds import apply_thresholds, default_thresholds_path, describe


class SPMLInferencer(ImageClassificationInferencer):
    """MMPretrain's image classification inferencer, answering with label
    sets.

    Each image's answer is the set of classes the head predicts (its
    ``thr``, or the calibrated decision of a thresholds file of
    ``tools/calibrate.py``), where MMPretrain's inferencer gives one argmax
    class. An image that cannot be read is answered with its ``error``
    and the others are still predicted.

    Args:
        model (str | Config): The config (path or object) of an SPML model.
        pretrained (str): Its checkpoint.
        device (str, optional): Device; default CUDA when available.
        thresholds (str, optional): A thresholds file, ``'auto'`` (the
            default: the file beside the checkpoint,
            ``<checkpoint>_thresholds.json``, when there is one) or
            ``'none'`` (the head's own ``thr``/``topk``).

    Example:
        >>> from spml_mm.apis import SPMLInferencer
        >>> infer = SPMLInferencer('configs/an/an_vgg11bn_demo.py',
        ...                        'work_dirs/an_demo/best.pth')
        >>> infer(['a.png', 'b.png'], batch_size=32)[0]
        {'pred_label': [1, 4], 'pred_class': ['1', '4'],
         'pred_score': [0.93, 0.71], 'pred_scores': array([...])}
    """

    def __init__(self,
                 model: Union[str, Config],
                 pretrained: str,
                 device: Optional[str] = None,
                 thresholds: Optional[str] = 'auto',
                 **kwargs) -> None:
        cfg = model if isinstance(model, Config) else Config.fromfile(model)
        cfg = cfg.copy()
        classes = checkpoint_classes(pretrained, cfg.model.head.num_classes)
        if thresholds == 'auto':
            found = default_thresholds_path(pretrained)
            thresholds = found if osp.isfile(found) else None
        self.thresholds = None
        if thresholds not in (None, 'none'):
            record = apply_thresholds(cfg, thresholds, classes, pretrained)
            self.thresholds = describe(record, thresholds)
        super().__init__(cfg, pretrained=pretrained, device=device,
                         classes=classes, **kwargs)
        self.failed = {}

    def _init_pipeline(self, cfg: Config):
        loads = [t for t in cfg.test_dataloader.dataset.pipeline
                 if t['type'] == 'LoadImageFromFile']
        self.color_type = loads[0].get('color_type',
                                       'color') if loads else 'color'
        return super()._init_pipeline(cfg)

    def preprocess(self, inputs: List, batch_size: int = 1):
        """Batches of the readable images; :attr:`failed` maps the position
        of each unreadable one to the reason."""
        self.failed = {}

        def readable():
            for i, input_ in enumerate(inputs):
                try:
                    img = imread(input_, flag=self.color_type)
                except Exception as err:  # any failure is the image's
                    self.failed[i] = f'{type(err).__name__}: {err}'
                    continue
                if img is None:
                    self.failed[i] = 'not a decodable image'
                    continue
                yield self.pipeline(
                    dict(img=img, img_shape=img.shape[:2],
                         ori_shape=img.shape[:2]))

        chunks = self._get_chunk_data(readable(), batch_size)
        yield from map(default_collate, chunks)

    def visualize(self, ori_inputs: List, preds: List[DataSample], **kwargs):
        kept = [x for i, x in enumerate(ori_inputs) if i not in self.failed]
        return super().visualize(kept, preds, **kwargs)

    def postprocess(self,
                    preds: List[DataSample],
                    visualization: List[np.ndarray],
                    return_datasamples: bool = False) -> list:
        if return_datasamples:
            return preds
        answers = iter(preds)
        results = []
        for i in range(len(preds) + len(self.failed)):
            if i in self.failed:
                results.append(dict(error=self.failed[i]))
                continue
            sample = next(answers)
            scores = sample.get('raw_score', sample.pred_score)
            labels = torch.as_tensor(sample.pred_label).cpu().tolist()
            labels = sorted(labels, key=lambda k: -float(scores[k]))
            results.append(
                dict(pred_label=labels,
                     pred_class=[self.classes[k] for k in labels],
                     pred_score=[float(scores[k]) for k in labels],
                     pred_scores=scores.float().cpu().numpy()))
        return results
