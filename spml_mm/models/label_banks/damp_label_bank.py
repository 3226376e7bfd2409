from typing import Dict, Optional, Tuple

import torch
from mmpretrain.registry import MODELS

from ..label_states import UNLABELLED
from .teacher_label_bank import TeacherLabelBank


@MODELS.register_module()
class DAMPLabelBank(TeacherLabelBank):
    """AEVLP's dynamic augmented multi-focus pseudo-labels (DAMP) from a
    teacher's scores of whole images and of their crops.

    A :class:`TeacherLabelBank` whose ``teacher_score`` holds the scores
    ``s_g`` of the whole images, with three more buffers (N, C) from the
    score file's crop scores (``crop_scores``, N x K x C, e.g.
    ``tools/score_teacher.py --crops 4``): their maximum ``a``, minimum
    ``m`` and mean over the K crops. For each batch, with ``y`` the
    observed positives of image i::

        eta_i   = min(max_{c in y} s_g[i, c], eta)
        s_ag    = a if a > eta_i else m             (per class)
        s_final = (s_g + s_ag) / 2

    positive pseudo-labels are the ``top_k`` highest ``s_final`` that are
    at least ``threshold``. The ``int(negative_fraction * C)`` classes of
    lowest ``(s_g + mean) / 2`` become negative pseudo-labels with
    ``negative_pseudo_labels``; without it (the release, which writes 0
    there) they are left unlabelled, which drops a positive pseudo-label
    among them. All buffers are saved in checkpoints.

    Args:
        num_classes (int): Number of classes C (set by the head).
        score_file (str): The teacher score ``.npz`` of the training set,
            with crop scores.
        eta (float): eta, the cap of the per-image crop threshold. Defaults
            to 0 (the release's VOC; COCO and NUS-WIDE 0.3, CUB 0.005).
        threshold (float): tau, the least ``s_final`` of a positive
            pseudo-label. Defaults to 0.5 (VOC, COCO; NUS-WIDE 0.6, CUB
            0.005).
        top_k (int, optional): At most this many positive pseudo-labels per
            image. Defaults to 3 (CUB 32).
        negative_fraction (float): Share of each image's classes, the
            lowest-scoring, chosen as negatives, in [0, 1). Defaults to 0.2
            (the release's negative_ratio: VOC, NUS-WIDE, CUB 0.2, COCO
            0.3).
        negative_pseudo_labels (bool): Make the chosen classes negative
            pseudo-labels (GPR's negative term) instead of leaving them
            unlabelled as the release does
            (docs/methods/teacher_pseudo_labels.md). Defaults to False.
        num_samples (int): Number of training samples N; 0 leaves the bank
            to be filled when training starts. Defaults to 0.

    Example:
        >>> label_bank = dict(type='DAMPLabelBank',
        ...                   score_file='data/voc/teacher_clip_crops.npz',
        ...                   eta=0., threshold=0.5, top_k=3)
    """

    NAME = 'DAMP label bank'
    READS_CROPS = True

    def __init__(self,
                 num_classes: int,
                 score_file: str,
                 eta: float = 0.,
                 threshold: float = 0.5,
                 top_k: Optional[int] = 3,
                 negative_fraction: float = 0.2,
                 negative_pseudo_labels: bool = False,
                 num_samples: int = 0):
        super().__init__(num_classes, score_file, threshold, top_k,
                         negative_fraction, num_samples)
        if not (isinstance(eta, (int, float)) and 0 <= eta <= 1):
            raise ValueError(f'eta must be in [0, 1], got {eta!r}')
        self.eta = float(eta)
        self.negative_pseudo_labels = bool(negative_pseudo_labels)
        if not negative_pseudo_labels:
            self.lowest_state = UNLABELLED
        for name in ('crop_max', 'crop_min', 'crop_mean'):
            self.register_buffer(name, torch.zeros(num_samples, num_classes))

    @property
    def row_buffers(self) -> Tuple[str, ...]:
        return ('teacher_score', 'crop_max', 'crop_min', 'crop_mean')

    def fill_from(self, table: Dict[str, torch.Tensor]) -> Dict[str, float]:
        """Fill the whole-image and crop scores (see
        :meth:`TeacherLabelBank.fill_from`; the hook reads them with
        ``crops=True``, which refuses a file without crop scores)."""
        crops = table['crop_scores']
        self._check_columns(crops, 'crop_scores')
        stats = super().fill_from(table)
        self.crop_max.copy_(crops.amax(1))
        self.crop_min.copy_(crops.amin(1))
        self.crop_mean.copy_(crops.mean(1))
        stats['teacher_crops'] = crops.size(1)
        return stats

    def scores(self, index: torch.Tensor, target: torch.Tensor
               ) -> Tuple[torch.Tensor, torch.Tensor]:
        """DAMP's ``s_final`` (positives) and ``(s_g + mean) / 2``
        (negatives) of a batch."""
        whole = self.teacher_score[index]
        crop_max = self.crop_max[index]
        eta = (whole * target).amax(1, keepdim=True).clamp_(max=self.eta)
        combined = torch.where(crop_max > eta, crop_max, self.crop_min[index])
        return ((whole + combined) / 2, (whole + self.crop_mean[index]) / 2)
