"""A seconds-long MMEngine run (linear regression) for checkpoint tests.

Run as a script it trains until killed, writing a checkpoint every
iteration: ``python tests/engine/toy_runner.py WORK_DIR [HOOK_TYPE]``.
"""
import sys

import torch
import torch.nn as nn
from mmengine.evaluator import BaseMetric
from mmengine.model import BaseModel
from mmengine.runner import Runner

import spml_mm  # noqa: F401  (registers the hooks and the file backend)


class ToyModel(BaseModel):

    def __init__(self, bulk: int = 0):
        super().__init__()
        torch.manual_seed(0)
        self.linear = nn.Linear(8, 1)
        # weights that only make the checkpoint large
        self.bulk = nn.Parameter(torch.zeros(bulk))

    def forward(self, inputs, targets=None, mode='tensor'):
        out = self.linear(inputs).squeeze(1)
        if mode == 'loss':
            return dict(loss=((out - targets)**2).mean() +
                        0 * self.bulk.sum())
        if mode == 'predict':
            return [((out - targets)**2).mean()]
        return out


class ToyDataset(torch.utils.data.Dataset):

    def __init__(self, size: int = 16):
        gen = torch.Generator().manual_seed(0)
        self.inputs = torch.randn(size, 8, generator=gen)
        self.targets = self.inputs.sum(1)

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        return dict(inputs=self.inputs[i], targets=self.targets[i])


class ToyScore(BaseMetric):
    """Minus the validation error: improves while the model learns."""

    default_prefix = 'toy'

    def process(self, data_batch, data_samples):
        self.results.extend(float(x) for x in data_samples)

    def compute_metrics(self, results):
        return dict(score=-sum(results) / len(results))


def loader():
    return dict(
        dataset=ToyDataset(),
        sampler=dict(type='DefaultSampler', shuffle=False),
        batch_size=4,
        collate_fn=dict(type='default_collate'))


def make_runner(work_dir: str,
                max_epochs: int = 2,
                bulk: int = 0,
                checkpoint: dict = None,
                resume=False,
                load_from=None,
                train_cfg: dict = None,
                optim_wrapper: dict = None,
                name: str = 'toy') -> Runner:
    """A runner with the checkpoint setup of ``default_runtime.py``."""
    checkpoint = checkpoint or dict(
        type='SPMLCheckpointHook',
        interval=1,
        max_keep_ckpts=1,
        save_best='toy/score',
        rule='greater')
    return Runner(
        model=ToyModel(bulk),
        work_dir=work_dir,
        experiment_name=name,
        train_dataloader=loader(),
        val_dataloader=loader(),
        val_evaluator=[ToyScore()],
        train_cfg=train_cfg or dict(by_epoch=True, max_epochs=max_epochs),
        val_cfg=dict(),
        optim_wrapper=optim_wrapper or dict(
            optimizer=dict(type='Adam', lr=0.05)),
        param_scheduler=dict(type='MultiStepLR', milestones=[1]),
        default_hooks=dict(checkpoint=checkpoint, logger=None),
        custom_hooks=[dict(type='SafeCheckpointHook')],
        default_scope='mmpretrain',
        resume=resume,
        load_from=load_from,
        randomness=dict(seed=0))


if __name__ == '__main__':
    # a checkpoint of ~48 MB (weights and Adam state) every iteration, so
    # that a kill lands inside a write most of the time
    make_runner(
        sys.argv[1],
        bulk=4_000_000,
        checkpoint=dict(
            type=sys.argv[2] if len(sys.argv) > 2 else 'SPMLCheckpointHook',
            by_epoch=False,
            interval=1,
            max_keep_ckpts=1),
        train_cfg=dict(by_epoch=False, max_iters=10_000, val_interval=10**9),
        name='toy_kill').train()
