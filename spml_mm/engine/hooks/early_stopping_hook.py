from typing import Dict, Optional

from mmengine.hooks import Hook
from mmpretrain.registry import HOOKS

from spml_mm.evaluation import selection_score


@HOOKS.register_module()
class SPMLEarlyStoppingHook(Hook):
    """Stop training when the validation score falls from its best.

    After every validation, the score ``monitor`` is compared with the best
    score of the earlier validations, and the training loop stops after this
    epoch when

    - ``max_drop=None``: the score is not a new best (the EM + APL release
      and the EM paper, Sec. 5.1: stop "when mAP on the validation set
      descends");
    - ``max_drop=d``: the score is more than ``d`` below the best (the GR
      release: 2 mAP points; the Large Loss Matters release: 3);
    - ``patience=k``: ``k`` validations in a row brought no new best (with
      ``max_drop=2.`` and ``patience=2``, the AEVLP release's rule). Either
      rule set stops training when it fires.

    The epoch's checkpoints are written as usual, so the best validation
    checkpoint (``CheckpointHook(save_best=...)``) is the one to test, as the
    releases report. The best score and the count of validations without a
    new best are kept in the message hub's runtime information, which
    checkpoints carry; an epoch's checkpoint is written before its
    validation, and ``SPMLCheckpointHook`` (the configs' checkpoint hook)
    validates that epoch again when a run is resumed from it, so a resumed
    run stops where the uninterrupted one does.

    Any validation metric can be watched: ``SPMLAveragePrecision``'s
    ``spml/mAP`` (full labels), ``spml/mAP_observed`` (observed labels,
    unknown ones negative) or ``spml/mAP_annotated`` (annotated entries
    only) (docs/methods/protocol.md, "Evaluation without full labels").
    The default, ``'auto'``, watches the first key the validation reports,
    as ``save_best='auto'`` does: ``spml/mAP`` on full validation labels,
    ``spml/mAP_observed`` with ``val_labels='observed'``. A key named
    explicitly is kept as it is, and ``SPMLPreflightHook`` refuses it
    before training when validation will not report it. The log names the
    key when it is chosen and when training stops.

    Args:
        monitor (str): Validation metric to watch, higher is better, or
            ``'auto'``: the first key the validation reports. Defaults to
            ``'auto'``.
        max_drop (float, optional): Largest tolerated fall below the best
            score, in the metric's unit; ``float('inf')`` never stops on a
            fall (every epoch trains, the best is kept). Defaults to None.
        patience (int, optional): Validations in a row without a new best
            after which training stops. Defaults to None. With both
            ``max_drop`` and ``patience`` None, training stops at the first
            epoch that is no new best.

    Example:
        >>> custom_hooks = [dict(type='SPMLEarlyStoppingHook', max_drop=2.)]
        >>> # on observed validation labels
        >>> custom_hooks = [dict(type='SPMLEarlyStoppingHook',
        ...                      monitor='spml/mAP_observed')]
    """

    # before CheckpointHook ('VERY_LOW'), which saves the best checkpoint
    priority = 'LOW'

    def __init__(self,
                 monitor: str = 'auto',
                 max_drop: Optional[float] = None,
                 patience: Optional[int] = None):
        if max_drop is not None and not (isinstance(max_drop, (int, float))
                                         and max_drop >= 0):
            raise ValueError('max_drop must be None or a number >= 0, '
                             f'got {max_drop!r}')
        if patience is not None and not (isinstance(patience, int)
                                         and patience >= 1):
            raise ValueError('patience must be None or an integer >= 1, '
                             f'got {patience!r}')
        self.monitor = monitor
        self.max_drop = max_drop
        self.patience = patience

    @property
    def _key(self) -> str:
        return f'early_stopping/best_{self.monitor}'

    @property
    def _stale_key(self) -> str:
        return f'early_stopping/stale_{self.monitor}'

    def _rules(self) -> str:
        if self.max_drop is None and self.patience is None:
            return 'no new best'
        rules = [] if self.max_drop is None else [
            f'more than {self.max_drop} below the best']
        if self.patience is not None:
            rules.append(f'{self.patience} validations in a row without a '
                         'new best')
        return ' or '.join(rules)

    def before_train(self, runner) -> None:
        runner.logger.info(f'SPMLEarlyStoppingHook: stops at {self._rules()} '
                           f'of the validation metric {self.monitor}' +
                           (' (the first key validation reports).'
                            if self.monitor == 'auto' else '.'))

    def after_val_epoch(self,
                        runner,
                        metrics: Optional[Dict[str, float]] = None) -> None:
        if not metrics:
            return
        if self.monitor == 'auto':
            self.monitor = next(iter(metrics))
            runner.logger.info(f'SPMLEarlyStoppingHook: monitor=auto watches '
                               f'{self.monitor}.')
        score = selection_score(metrics, self.monitor,
                                'SPMLEarlyStoppingHook monitors')
        best = runner.message_hub.get_info(self._key)
        if best is None or score > best:
            runner.message_hub.update_info(self._key, score)
            runner.message_hub.update_info(self._stale_key, 0)
            return
        stale = runner.message_hub.get_info(self._stale_key, 0) + 1
        runner.message_hub.update_info(self._stale_key, stale)
        if self.max_drop is None and self.patience is None:
            stop = True
        else:
            stop = (self.max_drop is not None
                    and best - score > self.max_drop) or (
                        self.patience is not None and stale >= self.patience)
        if stop:
            runner.logger.info(
                f'Early stopping after epoch {runner.epoch}: '
                f'{self.monitor} {score:.4f} against the best {best:.4f}, '
                f'{stale} validation(s) without a new best (rule: '
                f'{self._rules()}).')
            runner.train_loop.stop_training = True
