"""Label sets for a server: the logic of the TorchServe handler
(``tools/torchserve/spml_handler.py``), kept here so that it runs and is
tested without TorchServe."""
import base64
from typing import List, Optional, Union

import mmcv
import numpy as np

from .inferencer import SPMLInferencer


class LabelSetService:
    """Answer requests of encoded images with label sets, by the decision
    :func:`~spml_mm.apis.resolve_decision` finds for the checkpoint (the
    one ``tools/calibrate.py`` recorded in it, else the head's ``thr``),
    through :class:`SPMLInferencer`, as ``tools/predict.py`` answers.

    TorchServe's handler calls :meth:`preprocess`, :meth:`inference` and
    :meth:`postprocess` on a batch of requests; :meth:`__call__` does all
    three.

    Args:
        config (str): The model's config (a file that needs no ``_base_``
            beside it, as ``Config.dump`` writes it, for an archive).
        checkpoint (str): The checkpoint.
        device (str, optional): Device; default CUDA when available.
        thresholds (str): As :class:`SPMLInferencer`'s; default ``'auto'``.
        max_pixels (int, optional): As :class:`SPMLInferencer`'s.
    """

    def __init__(self,
                 config: str,
                 checkpoint: str,
                 device: Optional[str] = None,
                 thresholds: str = 'auto',
                 max_pixels: Optional[int] = None):
        self.inferencer = SPMLInferencer(config, checkpoint, device=device,
                                         thresholds=thresholds,
                                         max_pixels=max_pixels)
        #: What decides, the line the tools print after ``decision:``.
        self.decision = self.inferencer.decision

    def preprocess(self, requests: List) -> List[Union[np.ndarray, str]]:
        """Each request's image, decoded (BGR, or grey as the config's
        test pipeline loads it), or why it cannot be: a request is a dict
        with ``data`` or ``body`` (bytes, or base64 text), or the bytes."""
        images = []
        for request in requests:
            data = request
            if isinstance(request, dict):
                data = request.get('data')
                if data is None:
                    data = request.get('body')
            try:
                if isinstance(data, str):
                    data = base64.b64decode(data, validate=True)
                if not isinstance(data, (bytes, bytearray)):
                    raise ValueError('no image in the request (send the '
                                     'image file\'s bytes as its body)')
                image = mmcv.imfrombytes(bytes(data),
                                         flag=self.inferencer.color_type)
                if image is None:
                    raise ValueError('not a decodable image')
            except Exception as err:  # any failure is the request's
                image = f'{type(err).__name__}: {err}'
            images.append(image)
        return images

    def inference(self, images: List[Union[np.ndarray, str]]) -> List[dict]:
        """The inferencer's answer for each decoded image, ``error`` for
        the others."""
        readable = [x for x in images if not isinstance(x, str)]
        answers = iter(self.inferencer(readable, batch_size=len(readable))
                       if readable else [])
        return [dict(error=x) if isinstance(x, str) else next(answers)
                for x in images]

    def postprocess(self, results: List[dict]) -> List[dict]:
        """One JSON-ready answer per request: ``labels`` (the label set,
        best first) and ``scores`` (their raw scores), or ``error``."""
        return [
            dict(error=r['error']) if 'error' in r else dict(
                labels=r['pred_class'], scores=r['pred_score'])
            for r in results
        ]

    def __call__(self, requests: List) -> List[dict]:
        return self.postprocess(self.inference(self.preprocess(requests)))
