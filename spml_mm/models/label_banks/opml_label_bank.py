from typing import Dict, Optional

import torch
from mmpretrain.registry import MODELS

from .label_bank import LabelBank


@MODELS.register_module()
class OPMLLabelBank(LabelBank):
    """The label bank of OPML: corrected labels and the per-class AP.

    A :class:`LabelBank` whose ``pseudo_label`` buffer holds OPML's label
    corrections (``1``, a positive pseudo-label; they persist) and which adds
    a buffer ``class_ap`` (C,): each class's average precision, in [0, 1], of
    the training-set scores against the observed labels at the last epoch
    end, or ``-1`` before the first one. :class:`OPMLLabelUpdater` writes
    both from :class:`SPMLPseudoLabelHook`; :class:`OPMLLoss` reads them
    (``pseudo_label`` and ``class_ap`` of each batch) for its corrected
    positives and its soft labels ``p * AP_k^gamma``. Both buffers are saved
    in checkpoints and restored by ``--resume``. The base bank's soft labels
    are not used.

    Args:
        num_classes (int): Number of classes C (set by the head).
        num_samples (int): Number of training samples N; 0 leaves the bank
            to be sized when training starts. Defaults to 0.
        storage (str): ``'full'``, ``'float16'`` or ``'uint8'``, as in
            :class:`LabelBank`; OPML stores only states, which every mode
            keeps exactly, so ``'uint8'`` loses nothing. Defaults to
            ``'full'``.

    Example:
        >>> model = dict(head=dict(
        ...     type='SPMLLinearClsHead', num_classes=20, in_channels=2048,
        ...     loss=dict(type='OPMLLoss', soft_labels=True),
        ...     label_bank=dict(type='OPMLLabelBank')))
    """

    ENTRY_KEYS = ('pseudo_label', 'class_ap')

    def __init__(self,
                 num_classes: int,
                 num_samples: int = 0,
                 storage: str = 'full'):
        super().__init__(num_classes, num_samples, storage)
        self.register_buffer('class_ap', torch.full((num_classes, ), -1.))

    def entries(self,
                index: torch.Tensor,
                target: torch.Tensor,
                observed_negative: Optional[torch.Tensor] = None
                ) -> Dict[str, torch.Tensor]:
        """The batch's states (corrected labels) and the per-class AP."""
        return dict(
            pseudo_label=super().entries(index, target)['pseudo_label'],
            class_ap=self.class_ap)
