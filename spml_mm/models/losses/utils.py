import torch


def check_target(cls_score: torch.Tensor,
                 target: torch.Tensor,
                 require_positive: bool = False) -> None:
    """Raise ``ValueError`` unless ``target`` is a 0/1 matrix like the logits.

    Args:
        cls_score (torch.Tensor): Logits, shape (B, C).
        target (torch.Tensor): Labels, shape (B, C).
        require_positive (bool): Also require a positive in every row.
            Defaults to False.
    """
    if cls_score.dim() != 2 or target.shape != cls_score.shape:
        raise ValueError(
            f'cls_score must be (B, C) and target of the same shape, got '
            f'{tuple(cls_score.shape)} and {tuple(target.shape)}')
    if not ((target == 0) | (target == 1)).all():
        raise ValueError('target must hold only 0 and 1 (observed labels)')
    if require_positive and not (target.sum(1) > 0).all():
        row = int((target.sum(1) == 0).nonzero()[0])
        raise ValueError(f'target row {row} has no positive label; every '
                         'training sample needs its observed positive')
