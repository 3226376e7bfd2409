"""IGNORE's demo config through tools/train.py and tools/test.py: two epochs
(the second past its warm-up, rejecting), killed at the start of the second
and resumed, ending with the uninterrupted run's weights and thresholds: the
strong view's RandAugment draws in the training process (``num_workers=0``)
continue from the checkpoint's random state (SPMLRandomStateHook)."""
import os.path as osp
import re
import signal

import pytest
import torch

from tests.conftest import PYTHON, REPO, run_tool
from tests.tools.test_resume_recovery import fault_config, train

DEMO = 'configs/ignore/ignore_vgg11bn_demo.py'
#: 2 iterations per epoch
MORE = ('train_dataloader.dataset.indices=64', )


def state(work):
    return torch.load(osp.join(work, 'epoch_2.pth'), map_location='cpu',
                      weights_only=False)['state_dict']


@pytest.mark.slow
def test_demo_trains_tests_and_resumes_to_the_uninterrupted_run(
        tiny_demo, tmp_path):
    config = osp.join(REPO, DEMO)
    full = str(tmp_path / 'full')
    rc, out = train(config, full, tiny_demo, 2, more=MORE)
    assert rc == 0, out[-3000:]
    # the warm-up epoch, then rejection (SPMLEpochHook's log)
    assert re.findall(r'ignore_rejecting: ([\d.]+)', out)[-1] == '1.0000'
    part = str(tmp_path / 'part')
    killer = fault_config(str(tmp_path), base=DEMO,
                          extra="[dict(type='KillInTrainHook', epoch=2)]")
    rc, _ = train(killer, part, tiny_demo, 2, more=MORE)
    assert rc == -signal.SIGKILL
    rc, out = train(config, part, tiny_demo, 2, '--resume', more=MORE)
    assert rc == 0, out[-3000:]
    ours, theirs = state(part), state(full)
    assert ours.keys() == theirs.keys()
    assert float(theirs['head.loss_module.gap_threshold']) > 0
    for key in theirs:
        torch.testing.assert_close(ours[key], theirs[key], rtol=0, atol=0,
                                   msg=key)
    out = run_tool([
        PYTHON, 'tools/test.py', DEMO,
        osp.join(full, 'epoch_2.pth'), '--work-dir',
        str(tmp_path / 'test'), '--cfg-options',
        f'test_dataloader.dataset.data_root={tiny_demo}'
    ])
    assert re.search(r'Epoch\(test\).*spml/mAP: [\d.]+', out)
