"""SPMLDatasetCheckHook, before the first iteration: the training labels
that the head no longer checks on the device (every problem, with sample and
path), and settings that cannot fit the classes."""
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
