from typing import Dict, Optional, Tuple

import torch
from mmpretrain.registry import MODELS

from ..label_states import PSEUDO_NEGATIVE, PSEUDO_POSITIVE
from .base_label_bank import BaseLabelBank


@MODELS.register_module()
class TeacherLabelBank(BaseLabelBank):
    """A teacher's scores of the training set, and the pseudo-labels they
    give each batch (VLPL).

    One buffer ``teacher_score`` (N, C), float32 in [0, 1], row ``i`` the
    teacher's scores of the image of ``sample_idx`` i, read from a teacher
    score file (``tools/score_teacher.py``; checked against the training
    set's images and classes) by :class:`SPMLTeacherScoreHook` before
    training. It is saved in checkpoints and restored by ``--resume``.

    For each batch, :meth:`entries` gives the loss ``pseudo_label`` (B, C):
    ``1`` (positive) where the teacher's score is at least ``threshold``
    (among the image's ``top_k`` highest scores when ``top_k`` is set),
    ``-1`` (negative) on the image's ``int(negative_fraction * C)``
    lowest-scoring classes, ``0`` elsewhere; losses ignore pseudo-labels on
    observed labels. The teacher's scores do not change during training, so
    neither do the pseudo-labels.

    Args:
        num_classes (int): Number of classes C (set by the head).
        score_file (str): The teacher score ``.npz`` of the training set.
        threshold (float): tau, the least score of a positive pseudo-label.
            Defaults to 0.3 (VLPL's release).
        top_k (int, optional): At most this many positive pseudo-labels per
            image, the highest-scoring. Defaults to None (no limit).
        negative_fraction (float): Share of each image's classes, the
            lowest-scoring, that become negative pseudo-labels, in [0, 1).
            Defaults to 0 (VLPL's ResNet-50 release).
        num_samples (int): Number of training samples N; 0 leaves the bank
            to be filled when training starts. Defaults to 0.

    Example:
        >>> label_bank = dict(type='TeacherLabelBank',
        ...                   score_file='data/voc/teacher_clip.npz',
        ...                   threshold=0.3)
        >>> default_hooks = dict(
        ...     teacher_scores=dict(type='SPMLTeacherScoreHook'))
    """

    ENTRY_KEYS = ('pseudo_label', )
    WRITTEN_BY = 'teacher'
    NAME = 'teacher label bank'
    #: Whether the bank reads crop scores too, so that a score file without
    #: them is refused when it is read.
    READS_CROPS = False

    def __init__(self,
                 num_classes: int,
                 score_file: str,
                 threshold: float = 0.3,
                 top_k: Optional[int] = None,
                 negative_fraction: float = 0.,
                 num_samples: int = 0):
        super().__init__(num_classes)
        if not isinstance(score_file, str) or not score_file:
            raise ValueError(
                f'{type(self).__name__} needs score_file, the teacher score '
                f'.npz of the training set (tools/score_teacher.py), got '
                f'{score_file!r}')
        if not (isinstance(threshold, (int, float)) and 0 <= threshold <= 1):
            raise ValueError(
                f'threshold (tau) must be in [0, 1], got {threshold!r}')
        if top_k is not None and not (isinstance(top_k, int)
                                      and 1 <= top_k <= num_classes):
            raise ValueError(f'top_k must be None or an int in [1, '
                             f'{num_classes}], got {top_k!r}')
        if not (isinstance(negative_fraction, (int, float))
                and 0 <= negative_fraction < 1):
            raise ValueError('negative_fraction must be in [0, 1), got '
                             f'{negative_fraction!r}')
        self.score_file = score_file
        self.threshold = float(threshold)
        self.top_k = top_k
        self.num_negatives = int(negative_fraction * num_classes)
        # what the lowest-scoring classes become
        self.lowest_state = PSEUDO_NEGATIVE
        self.register_buffer('teacher_score',
                             torch.zeros(num_samples, num_classes))

    @property
    def row_buffers(self) -> Tuple[str, ...]:
        return ('teacher_score', )

    def fill_from(self, table: Dict[str, torch.Tensor]) -> Dict[str, float]:
        """Size the bank and fill it from the teacher scores of the training
        set: the tensors of
        :func:`~spml_mm.datasets.teacher_scores.load_teacher_table`, which
        ``SPMLTeacherScoreHook`` reads from ``score_file`` (and refuses when
        the file was written for other images, image files or classes).

        Returns:
            dict: The mean number per image of teacher scores at least
            ``threshold``, for the log.
        """
        scores = table['scores']
        self._check_columns(scores, 'scores')
        self.allocate(len(scores))
        self.teacher_score.copy_(scores)
        return dict(teacher_above_threshold=float(
            (scores >= self.threshold).sum(1).double().mean()))

    def _check_columns(self, scores: torch.Tensor, what: str) -> None:
        if scores.size(-1) != self.num_classes:
            raise ValueError(
                f'{self.score_file}: {what} have {scores.size(-1)} classes '
                f'but model.head.num_classes is {self.num_classes}')

    def scores(self, index: torch.Tensor, target: torch.Tensor
               ) -> Tuple[torch.Tensor, torch.Tensor]:
        """The scores (B, C) that choose the positive and the negative
        pseudo-labels of a batch: here both the teacher's."""
        score = self.teacher_score[index]
        return score, score

    def entries(self,
                index: torch.Tensor,
                target: torch.Tensor,
                observed_negative: Optional[torch.Tensor] = None
                ) -> Dict[str, torch.Tensor]:
        """The batch's pseudo-labels (B, C), int8."""
        positive_score, negative_score = self.scores(
            self.rows(index), target)
        positive = positive_score >= self.threshold
        if self.top_k is not None:
            top = positive_score.topk(self.top_k, dim=1).indices
            positive &= torch.zeros_like(positive).scatter_(1, top, True)
        states = positive.to(torch.int8).mul_(PSEUDO_POSITIVE)
        if self.num_negatives:
            lowest = negative_score.topk(
                self.num_negatives, dim=1, largest=False).indices
            states.scatter_(1, lowest, self.lowest_state)
        return dict(pseudo_label=states)
