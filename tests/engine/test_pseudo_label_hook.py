"""SPMLPseudoLabelHook: its pieces, and whole runs on a tiny demo dataset."""
import glob
import os
import os.path as osp
import re
import socket
from types import SimpleNamespace

import pytest
import torch

from spml_mm.engine.hooks import SPMLPseudoLabelHook
from spml_mm.engine.hooks.pseudo_label_hook import scoring_pipeline
from spml_mm.models import LabelBank
from spml_mm.models.label_banks.updaters import AsymmetricPseudoLabeling
from tests.conftest import PYTHON, REPO, run_tool

CONFIG = 'configs/em_apl/em_apl_vgg11bn_demo.py'


def test_scoring_pipeline_keeps_the_training_labels():
    test = [dict(type='LoadImageFromFile'), dict(type='PackInputs')]
    train = [
        dict(type='LoadImageFromFile'),
        dict(type='SinglePositiveLabel', seed=3),
        dict(type='RandomFlip', prob=0.5),
        dict(type='PackInputs', algorithm_keys=('gt_label_full', ))
    ]
    # the observed negatives of partial labels are kept too
    keys = ('gt_label_full', 'gt_label_neg')
    assert scoring_pipeline(test, train) == [
        dict(type='LoadImageFromFile'),
        dict(type='SinglePositiveLabel', seed=3),
        dict(type='PackInputs', algorithm_keys=keys)
    ]
    custom = [dict(type='PackInputs', meta_keys=('img_path', ))]
    assert scoring_pipeline(custom, []) == [
        dict(type='PackInputs', algorithm_keys=keys,
             meta_keys=('img_path', 'sample_idx'))
    ]
    with pytest.raises(ValueError, match='must end with PackInputs'):
        scoring_pipeline([dict(type='LoadImageFromFile')], train)


def test_bad_warmup():
    for bad in (0, 1.5, None):
        with pytest.raises(ValueError, match=r'warmup_epochs \(T_w\) must be '
                           'an int >= 1'):
            SPMLPseudoLabelHook(warmup_epochs=bad)
    # checked when training starts, where max_epochs is known
    runner = SimpleNamespace(_train_loop=object(), max_epochs=5)
    with pytest.raises(ValueError, match=r'warmup_epochs \(T_w\)=5 must be '
                       'below train_cfg.max_epochs=5'):
        SPMLPseudoLabelHook(warmup_epochs=5).before_run(runner)
    with pytest.raises(ValueError, match='negative_proportion'):
        SPMLPseudoLabelHook(
            warmup_epochs=2,
            updater=dict(type='AsymmetricPseudoLabeling',
                         negative_proportion=0))


def tiny_options(data_root, epochs, indices=32, extra=()):
    return [
        '--no-validate', '--cfg-options', f'train_cfg.max_epochs={epochs}',
        f'train_dataloader.dataset.data_root={data_root}',
        f'train_dataloader.dataset.indices={indices}',
        f'test_dataloader.dataset.data_root={data_root}',
        'default_hooks.pseudo_label.warmup_epochs=1',
        'default_hooks.checkpoint.max_keep_ckpts=5', 'randomness.seed=0',
        'randomness.deterministic=True', *extra
    ]


@pytest.mark.slow
def test_resumed_run_ends_like_an_uninterrupted_one(tiny_demo, tmp_path):
    full, part = str(tmp_path / 'full'), str(tmp_path / 'part')
    out = run_tool([PYTHON, 'tools/train.py', CONFIG, '--work-dir', full] +
                   tiny_options(tiny_demo, 3))
    # T - T_w = 2 rounds after epochs 1 and 2, none after the last one
    counts = re.findall(r'Pseudo-labels after epoch (\d): new_negatives: '
                        r'(\d+), pseudo_negatives: (\d+), '
                        r'pseudo_negative_acc: ([\d.]+), '
                        r'pseudo_negative_recall: ([\d.]+)', out)
    assert [c[0] for c in counts] == ['1', '2']
    assert int(counts[1][2]) == int(counts[0][1]) + int(counts[1][1]) > 0
    assert 0 < float(counts[1][3]) <= 100
    # recall grows with the labelled entries
    assert 0 < float(counts[0][4]) < float(counts[1][4]) <= 100

    out = run_tool([PYTHON, 'tools/train.py', CONFIG, '--work-dir', part,
                    '--resume', osp.join(full, 'epoch_1.pth')] +
                   tiny_options(tiny_demo, 3))
    assert 'resumed epoch: 1' in out
    assert f'pseudo_negatives: {counts[1][2]},' in out
    a = torch.load(osp.join(full, 'epoch_3.pth'), weights_only=True)
    b = torch.load(osp.join(part, 'epoch_3.pth'), weights_only=True)
    bank = a['state_dict']['head.label_bank.pseudo_label']
    assert bank.shape == (32, 10) and (bank == -1).sum() == int(counts[1][2])
    assert a['state_dict'].keys() == b['state_dict'].keys()
    for key, value in a['state_dict'].items():
        torch.testing.assert_close(b['state_dict'][key], value, rtol=0, atol=0)

    # test.py loads the checkpoint, bank included, without the dataset size
    out = run_tool([PYTHON, 'tools/test.py', CONFIG,
                    osp.join(full, 'epoch_3.pth'), '--work-dir', full,
                    '--cfg-options',
                    f'test_dataloader.dataset.data_root={tiny_demo}'])
    assert re.search(r'Epoch\(test\).*spml/mAP: [\d.]+', out)

    # resuming on a training set of another length is refused
    with pytest.raises(pytest.fail.Exception,
                       match="checkpoint's label bank .* holds 32 samples "
                       'but the training set has 24'):
        run_tool([PYTHON, 'tools/train.py', CONFIG, '--work-dir', part,
                  '--resume', osp.join(full, 'epoch_1.pth')] +
                 tiny_options(tiny_demo, 3, indices=24))


DUMPING_UPDATER = '''
import os
import torch
from mmengine.dist import get_rank
from mmpretrain.registry import MODELS
from spml_mm.models.label_banks.updaters import AsymmetricPseudoLabeling


@MODELS.register_module()
class DumpingAPL(AsymmetricPseudoLabeling):
    """APL that saves what each rank saw and wrote."""

    def update(self, bank, scores, observed, epoch, *args):
        stats = super().update(bank, scores, observed, epoch, *args)
        torch.save(
            dict(scores=scores.cpu(), observed=observed.cpu(),
                 pseudo_label=bank.pseudo_label.cpu(),
                 soft_label=bank.soft_label.cpu()),
            os.path.join(os.environ['DUMP_DIR'],
                         f'rank{get_rank()}_epoch{epoch}.pth'))
        return stats
'''


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_ranks_hold_identical_banks(tiny_demo, tmp_path):
    (tmp_path / 'dumping_updater.py').write_text(DUMPING_UPDATER)
    config = tmp_path / 'dumping.py'
    config.write_text(
        f'_base_ = {osp.join(REPO, CONFIG)!r}\n'
        "custom_imports = dict(imports=['spml_mm', 'dumping_updater'])\n"
        "default_hooks = dict(\n"
        "    pseudo_label=dict(warmup_epochs=1, pipeline='test',\n"
        "                      updater=dict(type='DumpingAPL')),\n"
        "    early_stopping=dict(max_drop=float('inf')))\n")
    dumps = tmp_path / 'dumps'
    dumps.mkdir()
    env = dict(os.environ, PORT=str(free_port()), PYTHON=PYTHON,
               DUMP_DIR=str(dumps),
               PYTHONPATH=f'{tmp_path}:{os.environ.get("PYTHONPATH", "")}')
    # 31 samples: the sampler pads rank 1's share with sample 0
    work = str(tmp_path / 'dist')
    out = run_tool(['bash', 'tools/dist_train.sh', str(config), '2',
                    '--work-dir', work] +
                   tiny_options(tiny_demo, 3, indices=31), env=env)
    assert 'Distributed training: True' in out
    assert sorted(os.listdir(dumps)) == [
        'rank0_epoch1.pth', 'rank0_epoch2.pth', 'rank1_epoch1.pth',
        'rank1_epoch2.pth'
    ]
    single = LabelBank(num_classes=10, num_samples=31)
    apl = AsymmetricPseudoLabeling(0.9)
    for epoch in (1, 2):
        r0, r1 = (torch.load(dumps / f'rank{r}_epoch{epoch}.pth')
                  for r in (0, 1))
        for key in r0:
            assert torch.equal(r0[key], r1[key]), (epoch, key)
        assert r0['observed'].sum(1).eq(1).all()
        apl.update(single, r0['scores'], r0['observed'], epoch, 3, 1)
        assert torch.equal(single.pseudo_label, r0['pseudo_label'])
        assert torch.equal(single.soft_label, r0['soft_label'])
    assert (single.pseudo_label == -1).sum() > 0
    ckpt = torch.load(glob.glob(osp.join(work, 'epoch_3.pth'))[0],
                      weights_only=True)
    assert torch.equal(ckpt['state_dict']['head.label_bank.pseudo_label'],
                       single.pseudo_label)


@pytest.mark.parametrize('choice', ['train', 'test'])
def test_scoring_loader_reads_the_chosen_pipeline(choice):
    """'train' scores with the training pipeline (the EM + APL release
    scores its training loader); 'test' with the test-time one. Both read
    the training set in order, unshuffled."""
    from mmengine.config import Config
    train = [dict(type='LoadImageFromFile'),
             dict(type='RandomFlip', prob=0.5),
             dict(type='PackInputs', algorithm_keys=('gt_label_full', ))]
    test = [dict(type='LoadImageFromFile'), dict(type='PackInputs')]
    cfg = Config(dict(
        train_dataloader=dict(
            batch_size=4, dataset=dict(type='SPMLDataset', pipeline=train),
            sampler=dict(type='DefaultSampler', shuffle=True)),
        val_dataloader=dict(
            batch_size=8, dataset=dict(type='SPMLDataset', split='val',
                                       pipeline=test),
            sampler=dict(type='DefaultSampler', shuffle=False))))
    built = []
    runner = SimpleNamespace(
        cfg=cfg, seed=0,
        train_dataloader=SimpleNamespace(dataset=[0] * 5),
        build_dataloader=lambda c, seed: built.append(c) or SimpleNamespace(
            dataset=[0] * 5))
    SPMLPseudoLabelHook(warmup_epochs=1, pipeline=choice)._scoring_loader(
        runner)
    (loader, ) = built
    assert loader['sampler'] == dict(type='DefaultSampler', shuffle=False)
    assert loader['dataset']['type'] == 'SPMLDataset'
    assert 'split' not in loader['dataset']
    expected = train if choice == 'train' else scoring_pipeline(test, train)
    assert loader['dataset']['pipeline'] == expected


def test_unknown_pipeline_choice():
    with pytest.raises(ValueError, match="pipeline must be 'train', 'test'"):
        SPMLPseudoLabelHook(warmup_epochs=1, pipeline='val')


def test_update_numbers_reach_the_message_hub():
    """After an update the hook puts its numbers in the message hub as
    train/ scalars, which the log and the visualizer backends read."""
    from mmengine.logging import MessageHub, MMLogger
    from mmpretrain.structures import DataSample
    bank = LabelBank(num_classes=3, num_samples=4)
    hook = SPMLPseudoLabelHook(warmup_epochs=1, reuse_train_scores=True)
    runner = SimpleNamespace(
        model=torch.nn.Sequential(bank), epoch=0, max_epochs=3,
        message_hub=MessageHub.get_instance('test_update_numbers'),
        logger=MMLogger.get_instance('test_update_numbers'))
    hook.before_train_epoch(runner)
    samples = []
    for i in range(4):
        sample = DataSample(metainfo=dict(sample_idx=i)).set_gt_label([i % 3])
        sample.set_field(torch.tensor([i % 3, (i + 1) % 3]), 'gt_label_full')
        samples.append(sample)
    target = torch.zeros(4, 3)
    target[torch.arange(4), torch.arange(4) % 3] = 1
    bank.record(torch.arange(4), torch.randn(4, 3), target, samples)
    hook.after_train_epoch(runner)
    # U_c = 2, 3, 3 over T - T_w = 2 rounds: int(0.9 * U_c / 2) = 0, 1, 1
    hub = runner.message_hub
    assert hub.get_scalar('train/new_negatives').current() == 2
    assert hub.get_scalar('train/pseudo_negatives').current() == 2
    assert hub.get_scalar('train/pseudo_positives').current() == 0
    # every unobserved entry that is not a true positive is a true negative
    negatives = (bank.pseudo_label == -1)
    full = torch.zeros(4, 3, dtype=torch.bool)
    full[torch.arange(4), torch.arange(4) % 3] = True
    full[torch.arange(4), (torch.arange(4) + 1) % 3] = True
    right = int((negatives & ~full).sum())
    assert hub.get_scalar('train/pseudo_negative_acc').current() == \
        pytest.approx(100 * right / 2)
    assert hub.get_scalar('train/pseudo_negative_recall').current() == \
        pytest.approx(100 * right / int((~full).sum()))
