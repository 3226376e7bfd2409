"""What the hooks read of the runner: its model without the DDP wrapper,
whether it trains, and the label banks that one writer fills."""
from typing import Dict

import torch.nn as nn
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper

from spml_mm.models.label_banks.base_label_bank import BaseLabelBank


def unwrapped_model(runner) -> nn.Module:
    """The runner's model, without its wrapper (DDP) where it has one."""
    model = runner.model
    return model.module if is_model_wrapper(model) else model


def trains(runner) -> bool:
    """Whether the runner trains: ``Runner.test()`` and ``Runner.val()``
    call ``before_run`` too (the idiom of MMEngine's LoggerHook)."""
    return not (isinstance(runner._train_loop, dict)
                or runner._train_loop is None)


class LabelBankHook(Hook):
    """Base of the hooks that serve the label banks of one writer
    (:attr:`~spml_mm.models.label_banks.BaseLabelBank.WRITTEN_BY`).

    A subclass names the writer and the refusal of a training run whose
    model has none of its banks.
    """

    #: The writer of the banks the hook serves: ``'loss'``, ``'teacher'``.
    WRITTEN_BY: str
    #: The refusal of a training run without such a bank.
    NO_BANK: str

    def banks(self, runner) -> Dict[str, BaseLabelBank]:
        """The model's banks of :attr:`WRITTEN_BY`, by module name."""
        return {
            name: m
            for name, m in unwrapped_model(runner).named_modules()
            if isinstance(m, BaseLabelBank)
            and m.WRITTEN_BY == self.WRITTEN_BY
        }

    def banks_to_size(self, runner) -> Dict[str, BaseLabelBank]:
        """The banks that ``before_run`` sizes for the training set: none
        where the runner does not train (there a bank keeps the size of the
        checkpoint it loads); a training run without one is refused."""
        if not trains(runner):
            return {}
        banks = self.banks(runner)
        if not banks:
            raise ValueError(self.NO_BANK)
        return banks
