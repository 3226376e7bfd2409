"""SPMLPreflightHook on a seconds-long MMEngine run whose metric gives its
keys only once it runs (no ``dry_run``): the sanity batches find them, a
key no hook can select on is refused before the first iteration, a crash in
the metric shows before training, and the sanity batches leave training
as it would be without them."""
import pytest
import torch
from mmengine.runner import Runner

from spml_mm.engine.hooks import SPMLPreflightHook
from tests.engine.toy_runner import ToyDataset, ToyModel, ToyScore, loader


class BrokenScore(ToyScore):

    def process(self, data_batch, data_samples):
        raise IndexError('index 10 is out of bounds for dimension 0')


def toy_runner(tmp_path, save_best='toy/score', sanity_batches=2,
               metric=None, max_epochs=1, name='toy'):
    hooks = dict(
        checkpoint=dict(type='SPMLCheckpointHook', interval=1,
                        save_best=save_best, rule='greater'),
        preflight=dict(type='SPMLPreflightHook',
                       sanity_batches=sanity_batches),
        logger=None)
    custom = [dict(type='SPMLEarlyStoppingHook', max_drop=1.)]
    return Runner(
        model=ToyModel(),
        work_dir=str(tmp_path / name),
        # MMEngine's message hub, logger and visualizer are instances by
        # experiment name: another test's runner built in the same second
        # under the same name would share them
        experiment_name=f'{tmp_path.name}_{name}',
        train_dataloader=loader(),
        val_dataloader=loader(),
        val_evaluator=[metric or ToyScore()],
        train_cfg=dict(by_epoch=True, max_epochs=max_epochs),
        val_cfg=dict(),
        optim_wrapper=dict(optimizer=dict(type='Adam', lr=0.05)),
        default_hooks=hooks,
        custom_hooks=custom,
        default_scope='mmpretrain',
        randomness=dict(seed=0),
        # the config the hooks' keys are named from, as Runner.from_cfg has
        cfg=dict(default_hooks=hooks, custom_hooks=custom))


def test_a_key_validation_does_not_report_is_refused_before_training(
        tmp_path):
    runner = toy_runner(tmp_path, save_best='toy/scor')
    with pytest.raises(ValueError) as err:
        runner.train()
    assert str(err.value) == (
        "default_hooks.checkpoint.save_best='toy/scor' names a metric that "
        "validation will not report: it reports ['toy/score']. Set "
        "default_hooks.checkpoint.save_best='toy/score' (in --cfg-options: "
        "default_hooks.checkpoint.save_best=toy/score), or 'auto' to select "
        'on the first key validation reports.')
    assert runner.iter == 0
    assert not list((tmp_path / 'toy').glob('*.pth'))


def test_auto_keys_select_on_the_first_reported(tmp_path):
    runner = toy_runner(tmp_path, save_best='auto', max_epochs=2)
    runner.train()
    assert (tmp_path / 'toy' / 'best_toy_score_epoch_2.pth').is_file()
    early = next(h for h in runner.hooks
                 if type(h).__name__ == 'SPMLEarlyStoppingHook')
    assert early.monitor == 'toy/score'


def notes(err):
    return ' '.join(getattr(err.value, '__notes__', []))


def test_a_metric_crash_shows_before_training(tmp_path):
    runner = toy_runner(tmp_path, metric=BrokenScore())
    with pytest.raises(IndexError) as err:
        runner.train()
    assert runner.iter == 0
    assert notes(err) == (
        'Raised by SPMLPreflightHook before training, in the metrics on '
        'validation batch 1: look at val_evaluator and '
        'model.head.num_classes. default_hooks.preflight.sanity_batches=2; '
        '0 skips this check, and the error then comes at the first '
        'validation.')


class BrokenImages(ToyDataset):

    def __getitem__(self, i):
        if i >= 4:
            raise FileNotFoundError(f'image {i}')
        return super().__getitem__(i)


def test_a_loading_crash_names_the_dataset_keys(tmp_path):
    """The first batch loads, the second does not."""
    runner = toy_runner(tmp_path)
    runner._val_dataloader = dict(loader(), dataset=BrokenImages())
    with pytest.raises(FileNotFoundError) as err:
        runner.train()
    assert runner.iter == 0
    assert notes(err).startswith(
        'Raised by SPMLPreflightHook before training, loading validation '
        'batch 2: look at val_dataloader.dataset (its data_root, ann_file '
        'and pipeline).')


def test_a_model_crash_names_the_model_and_the_batch(tmp_path):
    runner = toy_runner(tmp_path)
    runner.model.linear = torch.nn.Linear(7, 1)  # 8 features come
    with pytest.raises(RuntimeError) as err:
        runner.train()
    assert runner.iter == 0
    assert notes(err).startswith(
        'Raised by SPMLPreflightHook before training, in the model on '
        'validation batch 1 (inputs of shape (4, 8), from '
        'val_dataloader.dataset.pipeline): look at model (data_preprocessor, '
        'backbone, head) and at that pipeline.')


def test_without_sanity_batches_an_unknown_key_is_not_refused(tmp_path):
    """sanity_batches=0: a metric without dry_run has no keys to check
    against; the run trains (and MMEngine's hook fails at validation)."""
    runner = toy_runner(tmp_path, save_best='toy/scor', sanity_batches=0)
    with pytest.raises(KeyError, match="names 'toy/scor'"):
        runner.train()
    assert runner.iter == 4  # a whole epoch trained first


def test_sanity_batches_leave_training_unchanged(tmp_path):
    weights = []
    for sanity_batches, name in ((0, 'off'), (2, 'on')):
        runner = toy_runner(tmp_path, sanity_batches=sanity_batches,
                            name=name)
        runner.model.linear.register_forward_pre_hook(
            lambda module, args: (torch.nn.functional.dropout(
                args[0], 0.2, module.training), ))
        runner.train()
        weights.append(runner.model.linear.weight.detach().clone())
    torch.testing.assert_close(weights[0], weights[1], rtol=0, atol=0)


def test_sanity_batches_must_be_a_count():
    with pytest.raises(ValueError, match='sanity_batches must be an integer'):
        SPMLPreflightHook(sanity_batches=-1)
