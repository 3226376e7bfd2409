"""The compact storage of a label bank: entry states as 2-bit codes, four
per byte, and soft labels as float16 or uint8."""
import functools

import torch
import torch.nn.functional as F

#: Storage modes of a bank: bytes per (sample, class) entry. ``full`` keeps
#: an int8 state and a float32 soft label; the compact modes keep the state
#: as a 2-bit code (four entries per byte) and the soft label as float16 or
#: uint8.
STORAGE_BYTES = dict(full=5., float16=2.25, uint8=1.25)

#: Classes per byte of the compact states, so a class block of a compact
#: bank starts at a multiple of it.
STATES_PER_BYTE = 4


@functools.lru_cache(maxsize=None)
def _state_words(device: torch.device) -> torch.Tensor:
    """byte -> the int8 states of its four 2-bit codes (entry j in bits 2j
    and 2j + 1), as one int32 word: a table built once per device, on the
    device (no copy from the host)."""
    byte = torch.arange(256, device=device)[:, None]
    shift = 2 * torch.arange(4, device=device)
    return ((((byte >> shift) & 3) ^ 2) - 2).to(torch.int8).view(
        torch.int32).view(-1)


def encode_states(pseudo_label: torch.Tensor) -> torch.Tensor:
    """States (N, C) in {-1, 0, 1} as 2-bit two's complement codes, four
    per byte (N, ceil(C / 4)) uint8; a zero byte is four unlabelled entries.
    """
    codes = F.pad((pseudo_label & 3).view(torch.uint8),
                  (0, -pseudo_label.size(-1) % STATES_PER_BYTE))
    # 1, 4, 16, 64, made on the device (no copy from the host)
    weights = 4**torch.arange(4, dtype=torch.uint8, device=codes.device)
    # codes <= 3 in separate bit pairs: the uint8 sum cannot overflow
    return (codes.unflatten(-1, (-1, 4)) * weights).sum(-1, dtype=torch.uint8)


def decode_states(codes: torch.Tensor, num_classes: int) -> torch.Tensor:
    """The int8 states (N, num_classes) of codes from
    :func:`encode_states`: one table look-up per byte."""
    words = _state_words(codes.device).index_select(0,
                                                    codes.reshape(-1).int())
    return words.view(*codes.shape).view(torch.int8)[:, :num_classes]


def encode_soft_labels(soft_label: torch.Tensor,
                       storage: str) -> torch.Tensor:
    """Soft labels in [0, 1] in a compact storage's dtype: float16 (relative
    error <= 2^-11), or uint8 steps of 1/255 (error <= 1/510)."""
    if storage == 'float16':
        return soft_label.half()
    return soft_label.mul(255).add_(0.5).clamp_(0, 255).to(torch.uint8)


def decode_soft_labels(code: torch.Tensor) -> torch.Tensor:
    """Float32 soft labels of codes from :func:`encode_soft_labels`."""
    if code.dtype == torch.uint8:
        return code.float().div_(255)
    return code.float()
