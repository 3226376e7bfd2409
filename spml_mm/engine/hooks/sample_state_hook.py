from mmpretrain.registry import HOOKS

from spml_mm.models.label_banks.batch import training_set_size
from .base import LabelBankHook


@HOOKS.register_module()
class SPMLSampleStateHook(LabelBankHook):
    """Size and synchronise per-sample state written in the training step.

    Some methods change per-sample state inside the training step (LL-Cp's
    permanent corrections, :class:`CorrectedLabelBank`; ROLE's
    :class:`LabelEstimateTable`): each rank writes the rows of its own
    samples. This hook serves every label bank of the model written by the
    loss (:class:`BaseLabelBank`, ``WRITTEN_BY = 'loss'``):

    - before training (and before ``--resume`` loads a checkpoint), it sizes
      the state for the training set (its length N);
    - after every training epoch, before the checkpoint is written, it calls
      ``merge_ranks()``, after which all ranks hold the same state.

    The DDP wrapper must not broadcast buffers (MMEngine's default), or rank
    0's rows would overwrite the others' at every forward pass; the hook
    refuses such a run.

    Example:
        >>> default_hooks = dict(
        ...     epoch_schedule=dict(type='SPMLEpochHook'),
        ...     sample_state=dict(type='SPMLSampleStateHook'))
    """

    # before CheckpointHook ('VERY_LOW'): checkpoints hold the merged state
    priority = 'NORMAL'
    WRITTEN_BY = 'loss'
    NO_BANK = ('SPMLSampleStateHook found no per-sample state in the model '
               "(e.g. the head's label_bank=dict(type='CorrectedLabelBank'"
               ')); remove the hook or add the state.')

    def before_run(self, runner) -> None:
        states = self.banks_to_size(runner)
        if not states:
            return
        if getattr(runner.model, 'broadcast_buffers', False):
            raise ValueError(
                'SPMLSampleStateHook: the DDP wrapper broadcasts buffers, '
                "which would overwrite every rank's per-sample rows with "
                "rank 0's at each forward pass; keep "
                'model_wrapper_cfg.broadcast_buffers=False (the default).')
        num_samples = training_set_size(runner.train_dataloader.dataset,
                                        'SPMLSampleStateHook',
                                        'per-sample state')
        for state in states.values():
            state.allocate(num_samples)

    def after_train_epoch(self, runner) -> None:
        for state in self.banks(runner).values():
            state.merge_ranks()
