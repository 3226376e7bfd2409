"""The one function that turns scores into label sets.

The head (:class:`SPMLLinearClsHead`), the ONNX graph
(:class:`~spml_mm.apis.LabelSetModel`), the serving handler and the
label-sets benchmark all decide by :func:`apply_decision`, so a decision
means the same wherever it is applied.
"""
from typing import Optional, Union

import numpy as np
import torch

Scores = Union[torch.Tensor, np.ndarray]


def apply_decision(scores: Scores, decision: Optional[dict]) -> Scores:
    """The predicted labels (N, C, bool) of raw sigmoid scores (N, C).

    Args:
        scores (Tensor | ndarray): Raw scores ``sigmoid(z)`` (N, C).
        decision (dict): A calibration record of ``tools/calibrate.py`` or
            a head's options: ``thresholds`` (one t_k per class: labels
            ``scores >= t_k``), else ``thr`` (one threshold for all
            classes), else ``topk`` (each image's k highest-scoring
            classes); None or empty: ``thr`` 0.5.

    Returns:
        Tensor | ndarray: Bool labels of the same kind as ``scores``.
    """
    decision = decision or {}
    numpy = isinstance(scores, np.ndarray)
    s = torch.from_numpy(scores) if numpy else scores
    thresholds = decision.get('thresholds')
    thr, topk = decision.get('thr'), decision.get('topk')
    if thresholds is not None:
        t = thresholds.to(s) if isinstance(thresholds, torch.Tensor) else \
            torch.as_tensor(thresholds, dtype=s.dtype, device=s.device)
        labels = s >= t
    elif thr is not None or topk is None:
        labels = s >= (0.5 if thr is None else thr)
    else:
        top = s.topk(int(topk), dim=-1).indices
        labels = torch.zeros_like(s).scatter(-1, top, 1.) > 0
    return labels.numpy() if numpy else labels
