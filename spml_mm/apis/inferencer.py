from typing import List, Optional, Union

import numpy as np
import torch
from mmcv import imread
from mmengine.config import Config
from mmengine.dataset import default_collate
from mmpretrain.apis import ImageClassificationInferencer
from mmpretrain.structures import DataSample

from spml_mm.utils import load_checkpoint_safely
from .model import check_fit, checkpoint_classes, load_model
from .thresholds import resolve_decision

#: The most pixels an image may have when the test pipeline feeds it to the
#: model whole (no Resize or crop step): the model's memory grows with it.
MAX_PIXELS_WHOLE = 2048 * 2048
#: The most pixels an image may have at all (decoding it takes 3 bytes a
#: pixel), when the pipeline resizes it.
MAX_PIXELS_DECODED = 16384 * 16384


def sizes_image(pipeline) -> bool:
    """Whether a pipeline brings every image to a bounded size (a resize or
    crop step)."""
    return any('Resize' in t['type'] or 'Crop' in t['type']
               for t in pipeline)


def image_size(path: str) -> Optional[tuple]:
    """(width, height) of an image file from its header, without decoding
    it; None when the header cannot be read."""
    from PIL import Image
    try:
        with Image.open(path) as img:
            return img.size
    except Exception:  # not an image PIL knows: mmcv reports it
        return None


class SPMLInferencer(ImageClassificationInferencer):
    """MMPretrain's image classification inferencer, answering with label
    sets.

    Each image's answer is the set of classes the head predicts by the
    decision :func:`~spml_mm.apis.resolve_decision` finds (the one recorded
    in the checkpoint by ``tools/calibrate.py``, a thresholds file, or the
    head's ``thr``), where MMPretrain's inferencer gives one argmax
    class. An image that cannot be read is answered with its ``error``
    and the others are still predicted.

    Args:
        model (str | Config): The config (path or object) of an SPML model.
        pretrained (str): Its checkpoint.
        device (str, optional): Device; default CUDA when available.
        thresholds (str, optional): A thresholds file, ``'auto'`` (the
            default: the decision recorded in the checkpoint, else the file
            beside it, ``<checkpoint>_thresholds.json``, else the head's) or
            ``'none'`` (the head's own ``thr``/``topk``). A decision
            calibrated for another model (classes, weights or config) is
            refused (``ValueError``).
        allow_other (bool): Decide by a thresholds file of other weights or
            another config anyway (:attr:`warnings` says so).
        cfg_options (dict, optional): The ``--cfg-options`` merged into the
            config, so that a decision they set is not silently replaced
            by a thresholds file.
        max_pixels (int, optional): The most pixels an image may have; a
            larger one is answered with its ``error``, read from its header
            before it is decoded. Default: :data:`MAX_PIXELS_WHOLE` when the
            test pipeline has no Resize or crop step (the model takes the
            image whole), else :data:`MAX_PIXELS_DECODED`.

    A checkpoint that does not fit the config is refused
    (:class:`~spml_mm.utils.CheckpointMismatchError`), as by
    ``tools/test.py``.

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
                 allow_other: bool = False,
                 cfg_options: Optional[dict] = None,
                 max_pixels: Optional[int] = None,
                 **kwargs) -> None:
        cfg = model if isinstance(model, Config) else Config.fromfile(model)
        cfg = cfg.copy()
        checkpoint = load_checkpoint_safely(pretrained, map_location='cpu')
        classes = checkpoint_classes(checkpoint, cfg.model.head.num_classes)
        check_fit(cfg, checkpoint, pretrained)
        decision = resolve_decision(cfg, checkpoint, thresholds, allow_other,
                                    cfg_options, filename=pretrained)
        #: What decides (a line for the log), its warnings.
        self.decision, self.warnings = decision['line'], decision['warnings']
        #: What decides when a calibration does (the line without its
        #: ``thresholds `` prefix), else None.
        self.thresholds = decision['line'].replace('thresholds ', '', 1) \
            if decision['record'] else None
        net = load_model(cfg, checkpoint, device, filename=pretrained)
        net._config = cfg
        net._dataset_meta = dict(classes=classes)
        del checkpoint
        super().__init__(net, pretrained=False, device=None,
                         classes=classes, **kwargs)
        pipeline = cfg.test_dataloader.dataset.pipeline
        self.max_pixels = max_pixels or (MAX_PIXELS_DECODED
                                         if sizes_image(pipeline) else
                                         MAX_PIXELS_WHOLE)
        self.resized = sizes_image(pipeline)
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
                size = image_size(input_) if isinstance(
                    input_, str) else input_.shape[1::-1] if isinstance(
                        input_, np.ndarray) else None
                if size and size[0] * size[1] > self.max_pixels:
                    self.failed[i] = self.too_large(size)
                    continue
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

    def too_large(self, size) -> str:
        """Why an image of ``size`` (width, height) is not read."""
        found = f'{size[0]} x {size[1]} pixels, more than {self.max_pixels}'
        if self.resized:
            return (f'{found} (not decoded: it would take '
                    f'{3 * size[0] * size[1] / 2**30:.1f} GiB); resize it, '
                    'or raise --max-pixels (max_pixels)')
        return (f'{found}: the config\'s test pipeline has no Resize, so the '
                'model would take it whole (memory grows with its area) and '
                'score it at another scale than it was trained on; add '
                "dict(type='Resize', scale=(H, W)) after LoadImageFromFile "
                'in test_dataloader.dataset.pipeline (a config that inherits '
                'this one) at the size the model was trained on, resize the '
                'image, or raise --max-pixels (max_pixels)')

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
            scores = sample.pred_score
            labels = torch.as_tensor(sample.pred_label).cpu().tolist()
            labels = sorted(labels, key=lambda k: -float(scores[k]))
            results.append(
                dict(pred_label=labels,
                     pred_class=[self.classes[k] for k in labels],
                     pred_score=[float(scores[k]) for k in labels],
                     pred_scores=scores.float().cpu().numpy()))
        return results
