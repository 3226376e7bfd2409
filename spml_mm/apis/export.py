"""An SPML classifier with its label-set decision as one ONNX graph."""
from typing import Sequence

import torch
from torch import nn

from spml_mm.models.heads import apply_decision

#: The metadata key an exported graph carries (:func:`exported_by_spml_mm`).
METADATA_KEY = 'spml_mm.label_sets'


class LabelSetModel(nn.Module):
    """A classifier from images to raw scores and label sets.

    ``forward`` takes a float batch (N, 3, H, W) of images as the config's
    test pipeline gives them (loaded, resized, cropped; channels in the
    loaded order, values 0-255) and returns the raw sigmoid scores (N, C) and
    the predicted labels (N, C, bool): the data preprocessor's channel
    conversion and normalisation, the backbone, neck and head, and the
    head's decision (``thr``, per-class ``thresholds`` or ``topk``) are all
    in the graph.

    Args:
        model (nn.Module): An MMPretrain ``ImageClassifier`` with a
            multi-label head, in eval mode.
    """

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model
        preprocessor = model.data_preprocessor
        self.to_rgb = bool(getattr(preprocessor, '_channel_conversion', False))
        self.normalize = bool(getattr(preprocessor, '_enable_normalize',
                                      False))
        head = model.head
        self.thr, self.topk = head.thr, head.topk
        self.register_buffer('thresholds',
                             getattr(head, 'class_thresholds', None))

    def forward(self, images: torch.Tensor):
        preprocessor = self.model.data_preprocessor
        if self.to_rgb:
            images = images.flip(1)
        if self.normalize:
            images = (images - preprocessor.mean) / preprocessor.std
        logits = self.model.head(self.model.extract_feat(images))
        scores = torch.sigmoid(logits)
        labels = apply_decision(
            scores, dict(thr=self.thr, topk=self.topk,
                         thresholds=self.thresholds))
        return scores, labels


def export_onnx(model: nn.Module, path: str,
                input_shape: Sequence[int]) -> None:
    """Export :class:`LabelSetModel` of ``model`` to ONNX at ``path``, with
    inputs ``images`` (N, C, H, W) of ``input_shape`` (the batch size is
    dynamic) and outputs ``scores`` and ``labels``.

    The graph is written with torch's exporter (``torch.onnx.export``,
    which needs the ``onnx`` and ``onnxscript`` packages), and carries the
    metadata entry :data:`METADATA_KEY` (the plugin's version), by which
    ``tools/export_onnx.py`` knows a file it may replace.
    """
    wrapper = LabelSetModel(model.cpu().eval()).eval()
    example = torch.zeros(2, *input_shape[1:])
    batch = torch.export.Dim('batch', min=1)
    with torch.no_grad():
        torch.onnx.export(
            wrapper, (example, ),
            path,
            input_names=['images'],
            output_names=['scores', 'labels'],
            dynamic_shapes={'images': {0: batch}},
            dynamo=True,
            external_data=False)
    import onnx

    from spml_mm.version import __version__
    graph = onnx.load(path)
    entry = graph.metadata_props.add()
    entry.key, entry.value = METADATA_KEY, __version__
    onnx.save(graph, path)


def exported_by_spml_mm(path: str) -> bool:
    """Whether ``path`` is an ONNX graph :func:`export_onnx` wrote."""
    import onnx
    graph = onnx.load(path, load_external_data=False)
    return any(p.key == METADATA_KEY for p in graph.metadata_props)
