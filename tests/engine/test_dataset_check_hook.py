"""SPMLDatasetCheckHook refuses settings that cannot fit the classes before
the first iteration."""
from types import SimpleNamespace

import pytest

from spml_mm.engine.hooks import SPMLDatasetCheckHook
from spml_mm.models.losses import ANLoss, EPRLoss, ROLELoss


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
