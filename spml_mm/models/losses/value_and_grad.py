"""One autograd op for every loss written as its value and gradient.

Each SPML loss is a pure function ``<method>_value_and_grad(z, s, ...)`` that
returns the scalar loss and its analytic gradient with respect to the logits
``z``, computed in float32 from log-sigmoids. :func:`differentiable` turns such
a function into a loss that autograd can back-propagate through: the forward
pass runs the function once, the backward pass scales the stored gradient.
Compared with recording every small tensor operation of the formula, this
keeps one node in the graph and one (B, C) tensor in memory.
"""
import contextlib
import functools
import inspect
from typing import Callable, Tuple

import torch

ValueAndGrad = Callable[..., Tuple[torch.Tensor, torch.Tensor]]


class _LossFromGradient(torch.autograd.Function):
    """``value`` in the forward pass, ``grad_output * dvalue/dz`` backward."""

    @staticmethod
    def forward(ctx, z: torch.Tensor, value_and_grad: ValueAndGrad,
                args: tuple) -> torch.Tensor:
        # the formulas run in float32 whatever autocast would choose
        device = z.device.type
        with (torch.autocast(device, enabled=False)
              if torch.amp.is_autocast_available(device)
              and torch.is_autocast_enabled(device) else
              contextlib.nullcontext()):
            value, grad = value_and_grad(z.float(), *args)
        ctx.save_for_backward(grad.to(z.dtype))
        return value

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        grad, = ctx.saved_tensors
        return grad * grad_output.to(grad.dtype), None, None


def indicator(compare: Callable, x: torch.Tensor, value: float,
              like: torch.Tensor) -> torch.Tensor:
    """``[compare(x, value)]`` as 0/1 in the dtype of ``like``, written by
    the comparison itself (a boolean mask and a cast would cost two slow
    passes on the CPU). The losses choose entries with such weights.

    Example:
        >>> above = indicator(torch.gt, p, 0.9, p)  # [p > 0.9]
    """
    return compare(x, value, out=torch.empty_like(like))


def differentiable(value_and_grad: ValueAndGrad) -> Callable:
    """The loss ``f(z, *args)`` of ``value_and_grad(z, *args) -> (value,
    grad)``, differentiable in ``z`` (the other arguments are constants).

    Example:
        >>> def square_value_and_grad(z):
        ...     return (z ** 2).sum(), 2 * z
        >>> square = differentiable(square_value_and_grad)
    """

    signature = inspect.signature(value_and_grad)

    @functools.wraps(value_and_grad)
    def loss(z: torch.Tensor, *args, **kwargs) -> torch.Tensor:
        if kwargs:
            bound = signature.bind(z, *args, **kwargs)
            bound.apply_defaults()
            args = tuple(bound.arguments.values())[1:]
        return _LossFromGradient.apply(z, value_and_grad, args)

    return loss
