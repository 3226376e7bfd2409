"""The per-epoch schedule protocol: a module whose hyperparameters follow
the training epoch.

``SPMLEpochHook`` calls :meth:`EpochScheduled.set_epoch` before every
training epoch on each module of the model that is an
:class:`EpochScheduled` (GR's beta and alpha, any scheduled argument of the
unified framework, LL's rate), and logs the values it returns.
"""
from abc import ABCMeta, abstractmethod
from typing import Dict, Tuple, Union

#: A hyperparameter fixed (a number) or moved linearly over training from
#: its start to its end value (a ``(start, end)`` pair).
Schedule = Union[float, Tuple[float, float]]


def schedule_at(value: Schedule, progress: float) -> float:
    """``value`` at ``progress`` (0 at the start, 1 at the end) along its
    linear schedule; a number is fixed."""
    if isinstance(value, (tuple, list)):
        start, end = value
        return start + (end - start) * progress
    return value


class EpochScheduled(metaclass=ABCMeta):
    """A module with a per-epoch schedule, moved by ``SPMLEpochHook``."""

    @abstractmethod
    def set_epoch(self, epoch: int, max_epochs: int) -> Dict[str, float]:
        """Enter a training epoch.

        Args:
            epoch (int): 0-based epoch about to run (``runner.epoch``).
            max_epochs (int): Number of training epochs T.

        Returns:
            dict: The scheduled values now, by name, which the hook logs as
            ``train/<name>``.
        """
