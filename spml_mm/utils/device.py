"""Host-to-device copies that do not make the host wait."""
from typing import Union

import torch


def to_device(tensor: torch.Tensor,
              device: Union[str, torch.device]) -> torch.Tensor:
    """``tensor`` on ``device``, copied without blocking the host.

    A host tensor bound for a GPU is copied from pinned memory with
    ``non_blocking=True`` (a copy from pageable memory waits for the GPU);
    a tensor already on ``device`` is returned as is.

    Args:
        tensor (torch.Tensor): The tensor.
        device (str | torch.device): Where it is needed.

    Returns:
        torch.Tensor: ``tensor`` on ``device``.
    """
    device = torch.device(device)
    if tensor.device.type == device.type and device.index in (
            None, tensor.device.index):
        return tensor
    if device.type == 'cuda' and tensor.device.type == 'cpu' \
            and not tensor.is_pinned():
        tensor = tensor.pin_memory()
    return tensor.to(device, non_blocking=True)
