import logging
from typing import Dict

import torch
from mmengine.logging import print_log
from mmpretrain.registry import HOOKS

from spml_mm.models.label_banks.batch import training_set_size
from .base import LabelBankHook

#: What a loaded checkpoint's teacher scores that differ from the files'
#: lead to (``resume_scores``).
RESUME_SCORES = ('refuse', 'checkpoint', 'file')


def _named(record) -> str:
    if not record:
        return 'a score file the checkpoint does not name (written before ' \
            'checkpoints recorded it)'
    return f'{record["score_file"]} (sha256 {record["sha256"][:12]}...)'


@HOOKS.register_module()
class SPMLTeacherScoreHook(LabelBankHook):
    """Fill the teacher label banks of the model from their score files.

    Before training, every label bank of the model written by a teacher
    (``WRITTEN_BY = 'teacher'``: :class:`TeacherLabelBank`,
    :class:`DAMPLabelBank`) is filled from its ``score_file``, read for the
    training set, which refuses a file written for other images, image
    files or classes (or without crop scores, for a bank that reads them).
    Every rank reads the same file, so the banks are identical on all ranks.
    The log names the file and says how many teacher scores per image reach
    the bank's threshold.

    Checkpoints carry the banks' scores and name their files
    (``meta['teacher_scores']``: path and sha256). A checkpoint loaded
    afterwards (``--resume``, ``load_from``) whose scores differ from the
    files' is refused with both files named, unless ``resume_scores``
    chooses: ``'checkpoint'`` trains on the checkpoint's scores,
    ``'file'`` on the score file's; the log says which.

    Args:
        resume_scores (str): ``'refuse'`` (default), ``'checkpoint'`` or
            ``'file'``.

    Example:
        >>> default_hooks = dict(
        ...     teacher_scores=dict(type='SPMLTeacherScoreHook'))
    """

    priority = 'NORMAL'
    WRITTEN_BY = 'teacher'
    NO_BANK = ('SPMLTeacherScoreHook found no teacher label bank in the '
               "model; set model.head.label_bank=dict(type='TeacherLabelBank'"
               ', score_file=...) or remove the hook.')

    def __init__(self, resume_scores: str = 'refuse'):
        if resume_scores not in RESUME_SCORES:
            raise ValueError(f'resume_scores must be one of {RESUME_SCORES}, '
                             f'got {resume_scores!r}')
        self.resume_scores = resume_scores
        # bank name -> the score file its rows come from (path, sha256)
        self.sources: Dict[str, dict] = {}

    def before_run(self, runner) -> None:
        from spml_mm.datasets.teacher_scores import (file_sha256,
                                                     load_teacher_table)

        banks = self.banks_to_size(runner)
        if not banks:
            return
        dataset = runner.train_dataloader.dataset
        training_set_size(dataset, 'SPMLTeacherScoreHook', 'teacher scores')
        for name, bank in banks.items():
            stats = bank.fill_from(
                load_teacher_table(bank.score_file, dataset,
                                   crops=bank.READS_CROPS))
            self.sources[name] = dict(score_file=bank.score_file,
                                      sha256=file_sha256(bank.score_file))
            summary = ', '.join(f'{k}: {v:.2f}' for k, v in stats.items())
            runner.logger.info(
                f'Teacher scores of {bank.num_samples} training images from '
                f'{_named(self.sources[name])} ({summary})')

    def before_save_checkpoint(self, runner, checkpoint: dict) -> None:
        if self.sources:
            checkpoint.setdefault('meta', {})['teacher_scores'] = {
                name: dict(record) if record else None
                for name, record in self.sources.items()
            }

    def after_load_checkpoint(self, runner, checkpoint: dict) -> None:
        """Compare the checkpoint's teacher scores with the files' (before
        they are loaded into the model) and keep the chosen ones."""
        if not self.sources:  # not training: the checkpoint's scores serve
            return
        state = checkpoint.get('state_dict', {})
        recorded = (checkpoint.get('meta') or {}).get('teacher_scores') or {}
        for name, bank in self.banks(runner).items():
            keys = {buf: f'{name}.{buf}' for buf in bank.row_buffers}
            if not all(key in state for key in keys.values()):
                continue
            ours, theirs = self.sources[name], recorded.get(name)
            differ = torch.zeros(bank.num_samples, dtype=torch.bool)
            for buf, key in keys.items():
                saved = state[key].cpu()
                if saved.shape != getattr(bank, buf).shape:
                    differ[:] = True
                    break
                differ |= (saved != getattr(bank, buf).cpu()).flatten(1).any(1)
            if not differ.any():
                print_log(
                    f'Resumed {name}: the checkpoint holds the teacher '
                    f'scores of {_named(ours)}, as the config names',
                    logger='current')
                continue
            rows = len(state[keys[bank.row_buffers[0]]])
            what = (f'the checkpoint\'s teacher scores of {name} '
                    f'({rows} images, from {_named(theirs)}) differ from '
                    f'those of {_named(ours)} '
                    f'(model.head.label_bank.score_file) in '
                    f'{int(differ.sum())} of its {bank.num_samples} images')
            if self.resume_scores == 'refuse':
                former = theirs['score_file'] if theirs else 'ITS_FILE'
                raise ValueError(
                    f'{what}. Resume with model.head.label_bank.score_file='
                    f'{former} to train on as before, or choose: '
                    'default_hooks.teacher_scores.resume_scores=checkpoint '
                    "trains on the checkpoint's scores, =file on "
                    f"{ours['score_file']}'s from here on.")
            if self.resume_scores == 'file':
                for buf, key in keys.items():
                    state[key] = getattr(bank, buf).detach().clone()
                used = _named(ours)
            else:
                self.sources[name] = theirs
                used = f"the checkpoint's, from {_named(theirs)}"
            print_log(f'{what}; resume_scores={self.resume_scores!r}: '
                      f'training on the teacher scores of {used}',
                      logger='current', level=logging.WARNING)
