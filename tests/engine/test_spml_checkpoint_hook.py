"""SPMLCheckpointHook: the last good checkpoint survives failed writes and
kills, best checkpoints resume exactly, other work dirs are never touched."""
import builtins
import errno
import os
import os.path as osp
import shutil
import signal
import subprocess
import time
from unittest import mock

import pytest
import torch

from spml_mm.engine.hooks.spml_checkpoint_hook import recorded_constructor
from spml_mm.utils import (CheckpointMismatchError, find_best_checkpoint,
                           find_last_checkpoint, load_checkpoint_safely,
                           model_signature, write_atomically)
from spml_mm.utils.atomic_backend import is_partial_file, partial_path
from tests.conftest import PYTHON, REPO
from tests.engine.toy_runner import ToyScore, make_runner

CHECKPOINT_NAMES = ('.pth', '.partial', 'last_checkpoint')


class FailingOpen:
    """``open`` whose ``n``-th checkpoint write fails halfway with ENOSPC."""

    def __init__(self, n: int):
        self.n, self.count, self.real = n, 0, builtins.open

    def __call__(self, file, mode='r', *args, **kwargs):
        f = self.real(file, mode, *args, **kwargs)
        if not (isinstance(file, str) and file.endswith(CHECKPOINT_NAMES)
                and 'w' in mode):
            return f
        self.count += 1
        if self.count != self.n:
            return f
        write = f.write

        def half_then_full(data):
            write(data[:len(data) // 2])
            raise OSError(errno.ENOSPC, 'No space left on device')

        f.write = half_then_full
        return f


def assert_resumable(work):
    """``last_checkpoint`` names a complete checkpoint with resume state,
    the best checkpoint is complete, no partial file is left."""
    path = find_last_checkpoint(work)
    assert path is not None and osp.dirname(path) == work
    ckpt = load_checkpoint_safely(path)
    assert {'state_dict', 'optimizer', 'param_schedulers',
            'message_hub'} <= set(ckpt)
    best = [f for f in os.listdir(work) if f.startswith('best_')]
    assert best, os.listdir(work)
    for name in best:
        assert 'optimizer' in load_checkpoint_safely(osp.join(work, name))
    assert not [f for f in os.listdir(work) if f.endswith('.partial')]
    return ckpt


# Epoch 2 writes: epoch_2.pth, last_checkpoint, best_toy_score_epoch_2.pth,
# epoch_2.pth again (with the new best in its message hub), last_checkpoint;
# epoch 1 wrote the same five files before.
@pytest.mark.parametrize('failing_write', [6, 7, 8, 9, 10])
def test_a_failed_write_leaves_the_last_good_checkpoint(tmp_path,
                                                        failing_write):
    work = str(tmp_path)
    runner = make_runner(work, max_epochs=2, name=f'fail{failing_write}')
    with mock.patch('builtins.open', FailingOpen(failing_write)):
        with pytest.raises(OSError, match='No space left'):
            runner.train()
    ckpt = assert_resumable(work)
    # the checkpoint it names is the newest one completely written
    assert ckpt['meta']['epoch'] == (1 if failing_write <= 7 else 2)
    resumed = make_runner(work, max_epochs=3, resume=True,
                          name=f'resume{failing_write}')
    resumed.train()
    assert resumed.epoch == 3
    assert_resumable(work)


def test_a_failed_rename_leaves_the_last_good_checkpoint(tmp_path):
    work = str(tmp_path)
    make_runner(work, max_epochs=1, name='rename1').train()
    before = torch.load(osp.join(work, 'epoch_1.pth'), weights_only=True)
    runner = make_runner(work, max_epochs=2, resume=True, name='rename2')
    with mock.patch('os.replace',
                    side_effect=OSError(errno.EIO, 'Input/output error')):
        with pytest.raises(OSError, match='Input/output error'):
            runner.train()
    assert assert_resumable(work)['meta']['epoch'] == 1
    after = torch.load(osp.join(work, 'epoch_1.pth'), weights_only=True)
    torch.testing.assert_close(after['state_dict'], before['state_dict'])


def test_write_atomically_keeps_the_old_file_on_error(tmp_path):
    path = str(tmp_path / 'f.bin')
    write_atomically(b'old', path)
    with mock.patch('os.fsync', side_effect=OSError(errno.ENOSPC, 'full')):
        with pytest.raises(OSError, match='full'):
            write_atomically(b'new' * 1000, path)
    assert open(path, 'rb').read() == b'old'
    assert os.listdir(tmp_path) == ['f.bin']


@pytest.mark.slow
@pytest.mark.parametrize('delay', [0.3, 1.1, 2.3])
def test_sigkill_during_saving_leaves_a_resumable_checkpoint(tmp_path, delay):
    """A run saving a 48 MB checkpoint every iteration, killed at three
    moments: ``last_checkpoint`` always names a complete checkpoint."""
    work = str(tmp_path)
    proc = subprocess.Popen(
        [PYTHON, 'tests/engine/toy_runner.py', work],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=REPO))
    try:
        deadline = time.time() + 120
        while not osp.isfile(osp.join(work, 'last_checkpoint')):
            assert proc.poll() is None, proc.stderr.read().decode()[-3000:]
            assert time.time() < deadline
            time.sleep(0.05)
        time.sleep(delay)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    path = find_last_checkpoint(work)
    ckpt = load_checkpoint_safely(path)
    assert ckpt['optimizer']['state'], 'no optimizer state'
    assert ckpt['state_dict']['bulk'].numel() == 4_000_000
    assert ckpt['meta']['iter'] >= 1


def test_last_checkpoint_is_relative_and_a_moved_work_dir_resumes(tmp_path):
    work = str(tmp_path / 'a')
    make_runner(work, max_epochs=1, name='move1').train()
    assert open(osp.join(work, 'last_checkpoint')).read() == 'epoch_1.pth'
    moved = str(tmp_path / 'b')
    shutil.move(work, moved)
    runner = make_runner(moved, max_epochs=2, resume=True, name='move2')
    runner.train()
    assert runner.epoch == 2
    assert sorted(f for f in os.listdir(moved) if f.endswith('.pth')) == [
        'best_toy_score_epoch_2.pth', 'epoch_2.pth'
    ]
    # an absolute path (MMEngine's CheckpointHook) is read as well
    with open(osp.join(moved, 'last_checkpoint'), 'w') as f:
        f.write(osp.join(moved, 'epoch_2.pth'))
    assert find_last_checkpoint(moved) == osp.join(moved, 'epoch_2.pth')
    os.remove(osp.join(moved, 'epoch_2.pth'))
    with pytest.raises(FileNotFoundError, match='pass the checkpoint to '
                       'resume from with --resume PATH'):
        find_last_checkpoint(moved)


def test_resuming_from_another_run_leaves_that_run_untouched(tmp_path):
    first, second = str(tmp_path / 'first'), str(tmp_path / 'second')
    make_runner(first, max_epochs=1, name='other1').train()
    files = sorted(os.listdir(first))
    runner = make_runner(second, max_epochs=3, resume=True,
                         load_from=osp.join(first, 'epoch_1.pth'),
                         name='other2')
    runner.train()
    assert sorted(os.listdir(first)) == files
    assert 'best_toy_score_epoch_1.pth' in files
    assert sorted(f for f in os.listdir(second) if f.endswith('.pth')) == [
        'best_toy_score_epoch_3.pth', 'epoch_3.pth'
    ]


def test_best_checkpoint_resumes_exactly(tmp_path):
    full, part = str(tmp_path / 'full'), str(tmp_path / 'part')
    make_runner(full, max_epochs=3, name='best_full').train()
    make_runner(part, max_epochs=2, name='best_part').train()
    best = osp.join(part, 'best_toy_score_epoch_2.pth')
    for name in os.listdir(part):
        if name.startswith('epoch_'):
            os.remove(osp.join(part, name))
    make_runner(part, max_epochs=3, resume=True, load_from=best,
                name='best_resume').train()
    a = torch.load(osp.join(full, 'epoch_3.pth'), weights_only=True)
    b = torch.load(osp.join(part, 'epoch_3.pth'), weights_only=True)
    torch.testing.assert_close(b['state_dict'], a['state_dict'],
                               rtol=0, atol=0)
    assert b['optimizer']['state'][0]['step'] == a['optimizer']['state'][0][
        'step']


def test_resume_without_optimizer_state_stops_unless_weights_only(tmp_path):
    work = str(tmp_path)
    make_runner(work, max_epochs=1, name='nostate1').train()
    ckpt = torch.load(osp.join(work, 'epoch_1.pth'), weights_only=True)
    del ckpt['optimizer'], ckpt['param_schedulers']
    bare = str(tmp_path / 'bare.pth')
    torch.save(ckpt, bare)
    runner = make_runner(str(tmp_path / 'x'), max_epochs=2, resume=True,
                         load_from=bare, name='nostate2')
    with pytest.raises(ValueError,
                       match=r'cannot resume from .*bare.pth: it has no '
                       r'optimizer and no param_schedulers state .* pass '
                       r'--resume-weights-only .*bare.pth'):
        runner.train()
    hook = dict(type='SPMLCheckpointHook', interval=1,
                resume_weights_only=True)
    runner = make_runner(str(tmp_path / 'y'), max_epochs=2, resume=True,
                         load_from=bare, checkpoint=hook, name='nostate3')
    runner.train()
    assert runner.epoch == 2


def test_a_best_metric_that_validation_lacks_is_named():
    from spml_mm.engine.hooks import SPMLCheckpointHook
    hook = SPMLCheckpointHook(save_best='spml/mAP', rule='greater')
    with pytest.raises(KeyError, match=r"save_best=\.\.\.\) names 'spml/mAP'"
                       r", which the validation metrics \['spml/mAP_"
                       r"observed'\] lack\."):
        hook._save_best_checkpoint(None, {'spml/mAP_observed': 50.})


def test_checkpoints_record_what_they_fit(tmp_path):
    work = str(tmp_path)
    runner = make_runner(work, max_epochs=1, name='sig')
    runner.train()
    for name in ('epoch_1.pth', 'best_toy_score_epoch_1.pth'):
        meta = load_checkpoint_safely(osp.join(work, name))['meta']
        assert meta['spml_model'] == model_signature(runner.model)


def test_resume_of_a_checkpoint_that_does_not_fit_is_refused(tmp_path):
    first = str(tmp_path / 'first')
    make_runner(first, max_epochs=1, name='fit1').train()
    ckpt = osp.join(first, 'epoch_1.pth')
    runner = make_runner(str(tmp_path / 'other'), max_epochs=2, bulk=3,
                         resume=True, load_from=ckpt, name='fit2')
    with pytest.raises(CheckpointMismatchError) as err:
        runner.train()
    assert f'checkpoint {ckpt} does not fit' in str(err.value)
    assert 'bulk is (0,) in the checkpoint, (3,) in the model' in str(
        err.value)
    # fine-tuning from other weights (load_from without resume) is not
    # checked: MMEngine loads what matches
    make_runner(str(tmp_path / 'tune'), max_epochs=1, bulk=3,
                load_from=ckpt, name='fit3').train()


def test_runner_test_refuses_a_checkpoint_that_does_not_fit(tmp_path):
    work = str(tmp_path)
    make_runner(work, max_epochs=1, name='fit_test1').train()
    ckpt = osp.join(work, 'epoch_1.pth')

    def tester(bulk, name, strict=True):
        runner = make_runner(work, bulk=bulk, load_from=ckpt, name=name)
        runner._test_dataloader = runner._val_dataloader
        runner._test_evaluator = runner._val_evaluator
        runner._test_loop = dict()
        runner.cfg['load_strict'] = strict
        return runner

    with pytest.raises(CheckpointMismatchError, match='bulk is'):
        tester(2, 'fit_test2').test()
    # the documented override loads the matching weights, with a warning
    runner = tester(2, 'fit_test3', strict=False)
    warnings = []
    runner.logger.warning = warnings.append
    metrics = runner.test()
    assert metrics['toy/score'] == tester(0, 'fit_test4').test()[
        'toy/score']
    assert [w for w in warnings if w.startswith(
        f'load_strict=False: {ckpt} differs: ')] == [
        f'load_strict=False: {ckpt} differs: shapes: bulk is (0,) in the '
        'checkpoint, (2,) in the model']


class StopInValidation(ToyScore):
    """Interrupts the validation of epoch ``at``."""

    def __init__(self, at):
        super().__init__()
        self.at, self.calls = at, 0

    def compute_metrics(self, results):
        self.calls += 1
        if self.calls == self.at:
            raise KeyboardInterrupt
        return super().compute_metrics(results)


@pytest.mark.parametrize('max_epochs', [2, 3])
def test_an_interrupted_validation_is_run_when_resumed(tmp_path, max_epochs):
    """A kill during epoch 2's validation (the last one, or not): the resumed
    run validates epoch 2 and saves its best checkpoint."""
    work = str(tmp_path)
    runner = make_runner(work, max_epochs=2, name=f'val{max_epochs}')
    runner._val_evaluator = [StopInValidation(at=2)]
    with pytest.raises(KeyboardInterrupt):
        runner.train()
    assert sorted(f for f in os.listdir(work) if f.endswith('.pth')) == [
        'best_toy_score_epoch_1.pth', 'epoch_2.pth']
    resumed = make_runner(work, max_epochs=max_epochs, resume=True,
                          name=f'val{max_epochs}r')
    counter = StopInValidation(at=0)
    resumed._val_evaluator = [counter]
    resumed.train()
    assert counter.calls == max_epochs - 1
    assert resumed.message_hub.get_info('best_ckpt') == osp.join(
        work, f'best_toy_score_epoch_{max_epochs}.pth')
    assert osp.isfile(osp.join(work, f'best_toy_score_epoch_{max_epochs}.pth'))
    assert not osp.isfile(osp.join(work, 'best_toy_score_epoch_1.pth'))
    # recorded: the epoch's checkpoint names the new best
    ckpt = load_checkpoint_safely(osp.join(work, f'epoch_{max_epochs}.pth'))
    assert ckpt['message_hub']['runtime_info']['best_ckpt'] == osp.join(
        work, f'best_toy_score_epoch_{max_epochs}.pth')


def test_an_interrupted_best_checkpoint_save_is_redone(tmp_path):
    work = str(tmp_path)
    runner = make_runner(work, max_epochs=2, name='bestfail')
    # the 8th write is epoch 2's best checkpoint (list above): epoch 2 is
    # trained and saved, its validation ran, its best save did not finish
    with mock.patch('builtins.open', FailingOpen(8)):
        with pytest.raises(OSError, match='No space left'):
            runner.train()
    assert not osp.isfile(osp.join(work, 'best_toy_score_epoch_2.pth'))
    assert find_last_checkpoint(work).endswith('epoch_2.pth')
    make_runner(work, max_epochs=2, resume=True, name='bestfail2').train()
    assert osp.isfile(osp.join(work, 'best_toy_score_epoch_2.pth'))
    assert load_checkpoint_safely(find_last_checkpoint(work))['meta'][
        'spml_validated']


def test_a_validation_with_a_new_best_is_not_repeated(tmp_path):
    """The epoch's checkpoint saved again with the new best holds what the
    validation changed."""
    work = str(tmp_path)
    make_runner(work, max_epochs=1, name='once1').train()
    assert load_checkpoint_safely(osp.join(work, 'epoch_1.pth'))['meta'][
        'spml_validated']
    resumed = make_runner(work, max_epochs=2, resume=True, name='once2')
    counter = StopInValidation(at=0)
    resumed._val_evaluator = [counter]
    resumed.train()
    assert counter.calls == 1  # epoch 2 only


def test_only_the_plugins_partial_files_are_removed(tmp_path):
    """A user's file ending in .spml.partial was deleted at start; the
    plugin's own partial files carry a tag that marks them."""
    work = str(tmp_path)
    ours = partial_path(osp.join(work, 'epoch_1.pth'))
    users = ('download.partial', 'epoch_1.pth.spml.partial',
             'notes.0123abcd.spml.partial')
    for name in users + (osp.basename(ours), ):
        open(osp.join(work, name), 'w').close()
    assert is_partial_file(ours) and not any(map(is_partial_file, users))
    make_runner(work, max_epochs=1, name='partials').train()
    for name in users:
        assert osp.isfile(osp.join(work, name)), name
    assert not osp.isfile(ours)


def test_resume_across_shapes_with_load_strict_false_restarts_their_state(
        tmp_path):
    """--resume with load_strict=False into a model whose parameter has
    another shape (another number of classes) crashed inside Adam's step:
    the optimizer state of that parameter starts afresh, the others' is
    kept."""
    work = str(tmp_path)
    make_runner(work, max_epochs=1, bulk=2, name='shape1').train()
    saved = load_checkpoint_safely(osp.join(work, 'epoch_1.pth'))
    runner = make_runner(work, max_epochs=2, bulk=3, resume=True,
                         name='shape2')
    runner.cfg['load_strict'] = False
    warnings = []
    runner.logger.warning = warnings.append
    runner.train()
    assert runner.train_loop.epoch == 2
    assert (f'load_strict=False: the optimizer state of bulk has other '
            f'shapes in {osp.join(work, "epoch_1.pth")}; it starts afresh.'
            in warnings)
    # the linear layer's Adam state was resumed: its step count goes on
    steps = [int(s['step']) for s in
             runner.optim_wrapper.optimizer.state_dict()['state'].values()]
    assert int(saved['optimizer']['state'][0]['step']) == 4
    assert sorted(steps) == [4, 8, 8]


class ScoreOfEpoch(ToyScore):
    """The score ``scores[e - 1]`` at the validation of epoch ``e``."""

    def __init__(self, scores):
        super().__init__()
        self.scores, self.runner, self.epochs = scores, None, []

    def compute_metrics(self, results):
        self.epochs.append(self.runner.train_loop.epoch)
        return dict(score=self.scores[self.runner.train_loop.epoch - 1])


def early_stopping_runner(work, max_epochs, name, resume=False):
    runner = make_runner(work, max_epochs=max_epochs, resume=resume,
                         name=name)
    runner.register_hook(dict(type='SPMLEarlyStoppingHook', patience=2))
    metric = ScoreOfEpoch([1., 2., 1.5, 1.8, 2.5, 3.])
    runner._val_evaluator = [metric]
    metric.runner = runner
    return runner, metric


def test_early_stopping_count_after_a_validation_without_a_new_best_resumes(
        tmp_path):
    """Epoch 3 brings no new best: its checkpoint, written before its
    validation, was never written again with the count, and the resumed run
    stopped two epochs later than the uninterrupted one. It validates epoch
    3 again and stops after epoch 4 as well."""
    full = str(tmp_path / 'full')
    runner, _ = early_stopping_runner(full, 6, 'stop_full')
    runner.train()
    assert runner.train_loop.epoch == 4
    part = str(tmp_path / 'part')
    early_stopping_runner(part, 3, 'stop_part')[0].train()
    assert not load_checkpoint_safely(osp.join(part, 'epoch_3.pth'))[
        'meta'].get('spml_validated')
    resumed, metric = early_stopping_runner(part, 6, 'stop_resumed', True)
    resumed.train()
    assert metric.epochs == [3, 4]
    assert resumed.train_loop.epoch == 4
    assert sorted(f for f in os.listdir(part) if f.endswith('.pth')) == [
        'best_toy_score_epoch_2.pth', 'epoch_4.pth']


def test_a_best_checkpoint_whose_removal_was_interrupted_is_removed(
        tmp_path):
    """An error (or kill) after the epoch's checkpoint was written again
    with the new best, before the previous best was removed, left two best
    checkpoints for good. The run records the best one, and a resume
    removes the other."""
    work = str(tmp_path)
    runner = make_runner(work, max_epochs=2, name='two_best')
    # the 10th write is last_checkpoint after epoch_2.pth was written again
    with mock.patch('builtins.open', FailingOpen(10)):
        with pytest.raises(OSError, match='No space left'):
            runner.train()
    best = sorted(f for f in os.listdir(work) if f.startswith('best_'))
    assert best == ['best_toy_score_epoch_1.pth', 'best_toy_score_epoch_2.pth']
    assert find_best_checkpoint(work) == osp.join(work, best[1])
    resumed = make_runner(work, max_epochs=2, resume=True, name='two_best2')
    messages = []
    resumed.logger.info = messages.append
    resumed.train()
    assert sorted(f for f in os.listdir(work) if f.startswith('best_')) == [
        best[1]]
    assert (f'Removed {osp.join(work, best[0])}: '
            f'{osp.join(work, "epoch_2.pth")} records it as replaced by a '
            'new best checkpoint, and the interrupted run did not remove it.'
            in messages)
    # a best checkpoint of the user's, or of another run, is no record
    shutil.copy(osp.join(work, best[1]), osp.join(work, 'best_zzz.pth'))
    assert find_best_checkpoint(work) == osp.join(work, best[1])


def test_find_best_checkpoint_of_a_moved_run_and_of_none(tmp_path):
    work = str(tmp_path / 'a')
    with pytest.raises(FileNotFoundError, match='has no last_checkpoint'):
        find_best_checkpoint(work)
    make_runner(work, max_epochs=1, name='moved_best').train()
    moved = str(tmp_path / 'b')
    shutil.move(work, moved)
    assert find_best_checkpoint(moved) == osp.join(
        moved, 'best_toy_score_epoch_1.pth')
    os.remove(osp.join(moved, 'best_toy_score_epoch_1.pth'))
    with pytest.raises(FileNotFoundError, match='records the best checkpoint '
                       '.*best_toy_score_epoch_1.pth, which does not exist'):
        find_best_checkpoint(moved)
    unselected = str(tmp_path / 'c')
    make_runner(unselected, max_epochs=1, name='no_best',
                checkpoint=dict(type='SPMLCheckpointHook', interval=1)).train()
    with pytest.raises(FileNotFoundError, match='records 0 best checkpoints'):
        find_best_checkpoint(unselected)


GROUPED = dict(
    constructor='GroupedOptimWrapperConstructor',
    optimizer=dict(type='Adam', lr=0.05),
    paramwise_cfg=dict(custom_keys={'bulk': dict(lr_mult=10.)}))


def test_resume_under_another_optimizer_constructor_names_the_fix(tmp_path):
    """Grouped optimizer state (2 groups) resumed under MMEngine's default
    constructor (a group per parameter: 3) failed in PyTorch with 'loaded
    state dict has a different number of parameter groups'. (A runner built
    without a config records none: tools/train.py's checkpoints name their
    constructor, tests/tools/test_resume_recovery.py.)"""
    work = str(tmp_path)
    make_runner(work, max_epochs=1, bulk=2, optim_wrapper=GROUPED,
                name='grouped1').train()
    ckpt = osp.join(work, 'epoch_1.pth')
    runner = make_runner(work, max_epochs=2, bulk=2, resume=True,
                         optim_wrapper=dict(
                             GROUPED,
                             constructor='DefaultOptimWrapperConstructor'),
                         name='grouped2')
    with pytest.raises(ValueError) as err:
        runner.train()
    assert str(err.value) == (
        f'cannot resume the optimizer state of {ckpt}: it has 2 parameter '
        'groups, built by an unrecorded constructor, and the optimizer of '
        'this config has 3, built by DefaultOptimWrapperConstructor '
        "(optim_wrapper.constructor). Resume with the checkpoint's "
        'constructor (--cfg-options optim_wrapper.constructor=NAME), or pass '
        f'--resume-weights-only {ckpt} to continue from its weights with a '
        'fresh optimizer.')


@pytest.mark.parametrize('text, constructor', [
    ("optim_wrapper = dict(\n    constructor='GroupedOptimWrapperConstructor'"
     ",\n    optimizer=dict(lr=0.001, type='Adam'))\n",
     'GroupedOptimWrapperConstructor'),
    ("optim_wrapper = dict(optimizer=dict(lr=0.001, type='Adam'))\n",
     'DefaultOptimWrapperConstructor'),
    ('model = dict(type="x")\n', None),
    ('', None),
    ('not python (', None),
])
def test_the_recorded_constructor_is_read_without_running_the_config(
        text, constructor):
    assert recorded_constructor(dict(meta=dict(cfg=text))) == constructor
