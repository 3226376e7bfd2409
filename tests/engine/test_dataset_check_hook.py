"""SPMLDatasetCheckHook, before the first iteration: the training labels
that the head no longer checks on the device (every problem, with sample and
path), and settings that cannot fit the classes."""
import logging
from types import SimpleNamespace

import pytest
from mmengine.dataset import BaseDataset
from mmpretrain.registry import MODELS

import spml_mm  # noqa: F401
from spml_mm.datasets.validation import DatasetError
from spml_mm.engine.hooks import SPMLDatasetCheckHook
from spml_mm.models.losses import ANLoss, EPRLoss, ROLELoss


class Infos(BaseDataset):

    def __init__(self, infos):
        self.infos = infos
        super().__init__(serialize_data=False)

    def load_data_list(self):
        return [dict(info, img_path=f'{k}.jpg')
                for k, info in enumerate(self.infos)]


def runner(infos, head='SPMLLinearClsHead'):
    head = MODELS.build(dict(type=head, num_classes=4, in_channels=3))
    return SimpleNamespace(
        model=SimpleNamespace(head=head), val_loop=None,
        train_dataloader=SimpleNamespace(dataset=Infos(infos)))


def test_every_label_problem_is_named_before_training():
    hook = SPMLDatasetCheckHook(check_images='none')
    with pytest.raises(DatasetError) as err:
        hook.before_train(runner([
            dict(gt_label=[1]),
            dict(gt_label=[]),
            dict(gt_label=[4], gt_label_neg=[0]),
            dict(gt_label=[1], gt_label_neg=[-1, 2]),
            dict(gt_label=[1, 2], gt_label_neg=[0, 1]),
        ]))
    where = 'train dataset (Infos) sample'
    assert err.value.problems == [
        f'{where} 1 (1.jpg): no positive label; every training sample '
        'needs its observed positive',
        f"{where} 2 (2.jpg): labels [4] outside the head's num_classes=4; "
        'make the head and dataset agree',
        f"{where} 3 (3.jpg): negatives [-1, 2] outside the head's "
        'num_classes=4; make the head and dataset agree',
        f'{where} 4 (4.jpg): observes classes [1] both positive and '
        'negative',
    ]


def test_clean_labels_and_stock_heads_pass():
    hook = SPMLDatasetCheckHook(check_images='none')
    hook.before_train(runner([dict(gt_label=[0, 3], gt_label_neg=[1]),
                              dict(gt_label=[2])]))
    # MMPretrain's own head trains on full labels, where an image may have
    # none: not the SPML head's rules
    hook.before_train(runner([dict(gt_label=[])],
                             head='MultiLabelLinearClsHead'))


def runner_with(loss, num_classes=10):
    dataset = SimpleNamespace(metainfo=dict(
        classes=[f'c{k}' for k in range(num_classes)]))
    head = SimpleNamespace(num_classes=num_classes, loss_module=loss)
    return SimpleNamespace(model=SimpleNamespace(head=head),
                           test_dataloader=SimpleNamespace(dataset=dataset),
                           train_dataloader=SimpleNamespace(dataset=dataset),
                           val_loop=None)


@pytest.mark.parametrize('loss', [EPRLoss, ROLELoss])
def test_more_expected_positives_than_classes_is_refused(loss):
    runner = runner_with(loss(expected_positives=12.), num_classes=10)
    with pytest.raises(ValueError,
                       match=r'model.head.loss.expected_positives=12.0 \(k\) '
                       r'exceeds model.head.num_classes=10'):
        SPMLDatasetCheckHook(check_images='none').before_train(runner)
    hook = SPMLDatasetCheckHook(check_images='none')
    hook.before_train(runner_with(loss(expected_positives=10.), 10))
    hook.before_test(runner_with(ANLoss()))


class Listed(BaseDataset):
    """Samples with the given image paths and labels."""

    METAINFO = dict(classes=('a', 'b', 'c', 'd'))

    def __init__(self, infos):
        self.infos = infos
        super().__init__(serialize_data=False)

    def load_data_list(self):
        return [dict(info) for info in self.infos]


def two_splits(train, val):
    head = MODELS.build(dict(type='SPMLLinearClsHead', num_classes=4,
                             in_channels=3))
    return SimpleNamespace(
        model=SimpleNamespace(head=head), val_loop=object(),
        train_dataloader=SimpleNamespace(dataset=Listed(train)),
        val_dataloader=SimpleNamespace(dataset=Listed(val)))


def test_duplicates_shared_images_and_missing_classes(monkeypatch):
    """Training refuses an image listed twice with other labels and a
    training image in the val split, and warns of identical copies and of
    classes without a training positive."""
    hook = SPMLDatasetCheckHook(check_images='none')
    train = [dict(img_path='x.jpg', gt_label=[0], gt_label_full=[0, 1]),
             dict(img_path='x.jpg', gt_label=[1], gt_label_full=[0, 1]),
             dict(img_path='y.jpg', gt_label=[1], gt_label_full=[1])]
    val = [dict(img_path='z.jpg', gt_label=[0, 1])]
    logged = []
    monkeypatch.setattr(
        'spml_mm.engine.hooks.dataset_check_hook.print_log',
        lambda msg, logger, level: logged.append((msg, level)))
    hook.before_train(two_splits(train, val))
    assert [msg for msg, level in logged if level == logging.WARNING] == [
        'train dataset (Listed): image x.jpg is listed 2 times with the same '
        'labels (samples 0, 1); it counts 2 times in the loss and the '
        'scores: keep one row',
        'train dataset (Listed): 2 of 4 classes have no positive label in '
        'the training split: 2 (c), 3 (d); the model never sees a positive '
        'of them and their AP measures nothing learned: add training images '
        'of them or leave them out of the classes'
    ]
    train[1]['gt_label_full'] = [1]
    with pytest.raises(DatasetError) as err:
        hook.before_train(two_splits(train, val))
    assert err.value.problems == [
        'train dataset (Listed): image x.jpg is listed 2 times with '
        'different labels (sample 0: labels [0, 1]; sample 1: labels [1]); '
        'keep one row, with its right labels'
    ]
    with pytest.raises(DatasetError) as err:
        hook.before_train(two_splits(train[1:], val + [
            dict(img_path='./y.jpg', gt_label=[1, 2], gt_label_neg=[0])]))
    assert err.value.problems == [
        'image y.jpg is in both the train split (sample 1) and the val '
        'split (sample 1), labels [1] in train, labels [1, 2], negatives '
        '[0] in val; the val scores would count an image the model trained '
        'on: list it in one split only'
    ]
