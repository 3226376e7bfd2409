"""SPMLEarlyStoppingHook: the releases' stopping rules, across a resume."""
import re
from types import SimpleNamespace

import pytest
from mmengine.logging import MessageHub, MMLogger

from spml_mm.engine.hooks import SPMLEarlyStoppingHook
from spml_mm.engine.hooks.safe_checkpoint_hook import from_plain, to_plain
from tests.conftest import PYTHON, run_tool


def make_runner(name):
    return SimpleNamespace(
        message_hub=MessageHub(name),
        logger=MMLogger.get_instance('test_early_stopping'),
        train_loop=SimpleNamespace(stop_training=False),
        epoch=0)


def stop_epoch(hook, scores, runner, key='spml/mAP'):
    """The 1-based epoch after which the hook stops, or None."""
    for epoch, score in enumerate(scores, 1):
        runner.epoch = epoch
        hook.after_val_epoch(runner, {key: score})
        if runner.train_loop.stop_training:
            return epoch
    return None


@pytest.mark.parametrize('max_drop, scores, expected', [
    # EM + APL release: the first epoch that is no new best
    (None, [60., 70., 75., 74.9, 80.], 4),
    (None, [60., 70., 70.], 3),
    (None, [60., 70., 80.], None),
    # GR release: more than 2 points below the best
    (2., [60., 70., 68.5, 69., 71., 68.9], 6),
    (2., [60., 70., 68.], None),
    # Large Loss Matters release: more than 3
    (3., [60., 70., 67.5, 66.9], 4),
    # train every epoch
    (float('inf'), [60., 70., 0., 0.], None),
])
def test_stops_where_the_release_stops(max_drop, scores, expected):
    runner = make_runner(f'stop_{max_drop}_{scores}')
    hook = SPMLEarlyStoppingHook(max_drop=max_drop)
    assert stop_epoch(hook, scores, runner) == expected


@pytest.mark.parametrize('max_drop, patience, scores, expected', [
    # AEVLP release: 2 validations without a new best, or a 2-point fall
    (2., 2, [60., 70., 69., 71., 70.5, 70.9], 6),
    (2., 2, [60., 70., 69., 69.5], 4),
    (2., 2, [60., 70., 67.9], 3),
    (2., 2, [60., 70., 69., 71., 70.], None),
    # patience alone: a fall of any size waits for the count
    (None, 3, [60., 70., 10., 10., 10.], 5),
    (None, 1, [60., 70., 70.], 3),
])
def test_patience_counts_validations_without_a_new_best(
        max_drop, patience, scores, expected):
    runner = make_runner(f'patience_{max_drop}_{patience}_{scores}')
    hook = SPMLEarlyStoppingHook(max_drop=max_drop, patience=patience)
    assert stop_epoch(hook, scores, runner) == expected


def test_patience_count_survives_a_checkpoint_round_trip():
    hook = SPMLEarlyStoppingHook(max_drop=2., patience=2)
    first = make_runner('patience_resume_first')
    assert stop_epoch(hook, [60., 70., 69.], first) is None
    resumed = make_runner('patience_resume_second')
    resumed.message_hub.load_state_dict(
        from_plain(to_plain(first.message_hub.state_dict())))
    resumed.epoch = 4
    hook.after_val_epoch(resumed, {'spml/mAP': 69.5})
    assert resumed.train_loop.stop_training


def test_best_score_survives_a_checkpoint_round_trip():
    """A resumed run stops where the uninterrupted one does: the best score
    travels in the message hub, stored as plain types."""
    scores = [60., 70., 68.5, 67.9]
    hook = SPMLEarlyStoppingHook(max_drop=2.)
    first = make_runner('resume_first')
    assert stop_epoch(hook, scores[:2], first) is None
    state = from_plain(to_plain(first.message_hub.state_dict()))
    resumed = make_runner('resume_second')
    resumed.message_hub.load_state_dict(state)
    for epoch, score in enumerate(scores[2:], 3):
        resumed.epoch = epoch
        hook.after_val_epoch(resumed, {'spml/mAP': score})
        assert resumed.train_loop.stop_training == (epoch == 4)


def test_refuses_bad_arguments_and_missing_metric():
    for bad in (-1., float('nan'), '2'):
        with pytest.raises(ValueError, match='max_drop must be None or'):
            SPMLEarlyStoppingHook(max_drop=bad)
    for bad in (0, 1.5, '2'):
        with pytest.raises(ValueError, match='patience must be None or an '
                           'integer >= 1'):
            SPMLEarlyStoppingHook(patience=bad)
    hook = SPMLEarlyStoppingHook(monitor='spml/mAP')
    with pytest.raises(KeyError, match=r"monitors 'spml/mAP', which the "
                       r"validation metrics \['accuracy/top1'\] lack"):
        hook.after_val_epoch(make_runner('missing'), {'accuracy/top1': 1.})


@pytest.mark.slow
def test_demo_run_stops_by_the_rule_and_keeps_the_best(tiny_demo, tmp_path):
    """EM on the demo: training ends after the first epoch that is no new
    best (checked against the logged validation scores), and the best
    checkpoint is the best validation epoch."""
    work = str(tmp_path / 'em')
    out = run_tool([
        PYTHON, 'tools/train.py', 'configs/em/em_vgg11bn_demo.py', '--work-dir',
        work, '--cfg-options', 'train_cfg.max_epochs=6',
        f'train_dataloader.dataset.data_root={tiny_demo}',
        f'val_dataloader.dataset.data_root={tiny_demo}',
        'train_dataloader.batch_size=16', 'randomness.seed=0'
    ])
    scores = [float(s) for s in re.findall(r'Epoch\(val\).*?spml/mAP: ([\d.]+)',
                                           out)]
    runner = make_runner('demo_replay')
    expected = stop_epoch(SPMLEarlyStoppingHook(), scores, runner)
    # this seed stops early (CPU runs are reproducible), so the stop is
    # exercised, not only the full schedule
    assert expected is not None and len(scores) == expected < 6
    assert f'Early stopping after epoch {expected}' in out
    best = max(range(len(scores)), key=scores.__getitem__) + 1
    assert tmp_path.joinpath('em', f'best_spml_mAP_epoch_{best}.pth').is_file()


def test_any_metric_key_can_be_monitored():
    runner = make_runner('observed_key')
    hook = SPMLEarlyStoppingHook(monitor='spml/mAP_observed')
    for epoch, score in enumerate([30., 35., 34.], 1):
        runner.epoch = epoch
        hook.after_val_epoch(runner, {'spml/mAP_annotated': 90.,
                                      'spml/mAP_observed': score})
    assert runner.train_loop.stop_training
    assert runner.message_hub.get_info(
        'early_stopping/best_spml/mAP_observed') == 35.
    # spml/mAP is not reported on observed validation labels: named, it is
    # refused; the default, 'auto', watches the first key reported
    with pytest.raises(KeyError, match=r"monitors 'spml/mAP', which the "
                       r"validation metrics \['spml/mAP_observed'\] lack\. "
                       r'SPMLAveragePrecision reports spml/mAP only on fully '
                       'labelled images'):
        SPMLEarlyStoppingHook(monitor='spml/mAP').after_val_epoch(
            make_runner('no_full'), {'spml/mAP_observed': 1.})
    hook, runner = SPMLEarlyStoppingHook(), make_runner('auto_key')
    assert hook.monitor == 'auto'
    hook.after_val_epoch(runner, {'spml/mAP_observed': 1.,
                                  'spml/AP_observed_a': 2.})
    assert hook.monitor == 'spml/mAP_observed'
    assert runner.message_hub.get_info(
        'early_stopping/best_spml/mAP_observed') == 1.
