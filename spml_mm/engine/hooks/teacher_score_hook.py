from typing import List

from mmengine.hooks import Hook
from mmpretrain.registry import HOOKS

from spml_mm.models.label_banks.base_label_bank import BaseLabelBank
from spml_mm.models.label_banks.batch import training_set_size


@HOOKS.register_module()
class SPMLTeacherScoreHook(Hook):
    """Fill the teacher label banks of the model from their score files.

    Before training (and before ``--resume`` loads a checkpoint, which then
    restores the same rows), every label bank of the model written by a
    teacher (``WRITTEN_BY = 'teacher'``: :class:`TeacherLabelBank`,
    :class:`DAMPLabelBank`) reads its ``score_file`` for the training set,
    which refuses a file written for other images or classes. Every rank
    reads the same file, so the banks are identical on all ranks. The log
    says how many teacher scores per image reach the bank's threshold.

    Example:
        >>> default_hooks = dict(
        ...     teacher_scores=dict(type='SPMLTeacherScoreHook'))
    """

    priority = 'NORMAL'

    @staticmethod
    def _banks(runner) -> List[BaseLabelBank]:
        return [
            m for m in runner.model.modules()
            if isinstance(m, BaseLabelBank) and m.WRITTEN_BY == 'teacher'
        ]

    def before_run(self, runner) -> None:
        # Runner.test() calls before_run too; there the bank keeps the size
        # of the checkpoint it loads
        if isinstance(runner._train_loop, dict) or runner._train_loop is None:
            return
        banks = self._banks(runner)
        if not banks:
            raise ValueError(
                'SPMLTeacherScoreHook found no teacher label bank in the '
                "model; set model.head.label_bank=dict(type='TeacherLabelBank'"
                ", score_file=...) or remove the hook.")
        dataset = runner.train_dataloader.dataset
        training_set_size(dataset, 'SPMLTeacherScoreHook', 'teacher scores')
        for bank in banks:
            stats = bank.fill(dataset)
            summary = ', '.join(f'{k}: {v:.2f}' for k, v in stats.items())
            runner.logger.info(
                f'Teacher scores of {bank.num_samples} training images from '
                f'{bank.score_file} ({summary})')
