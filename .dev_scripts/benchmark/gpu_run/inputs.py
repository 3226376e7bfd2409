"""What the parts train and time on: the proxy data, EfficientNet-Lite0's
weights, the evidence's image cache and its runs' loader options."""
import os.path as osp
import subprocess
import sys
from typing import Dict, List

from benchmark.gpu_run import harness
from benchmark.suites import LOADERS
from benchmark.common import REPO

SUITE = 'proxy-voc'
PROXY_CONFIG = 'configs/an/efficientnet-lite0_proxy-voc.py'


def data_commands(args) -> Dict[str, List[str]]:
    """Data folder -> the command that writes it: the evidence's proxy
    (full size; tiny: 1% at 32 px) and the speed recipe's 448 px proxy."""
    make = [sys.executable, 'tools/make_proxy_data.py', '--like', 'voc']
    if args.tiny:
        return {evidence_root(args): make + [
            '--fraction', str(args.tiny_fraction), '--image-size', '32',
            '--out-dir', evidence_root(args)]}
    return {
        evidence_root(args): make + ['--out-dir', evidence_root(args)],
        'data/proxy-voc-448': make + ['--fraction', '0.05', '--image-size',
                                      '448', '--out-dir',
                                      'data/proxy-voc-448'],
    }


def evidence_root(args) -> str:
    """The evidence's data folder, as accuracy.py names it."""
    return (f'data/{SUITE}-f{args.tiny_fraction:g}' if args.tiny else
            f'data/{SUITE}')


def data_root_options(args) -> List[str]:
    """``--cfg-options`` that point every loader at the evidence's data."""
    return [f'{loader}.dataset.data_root={evidence_root(args)}'
            for loader in LOADERS]


def ready(root: str) -> bool:
    """Whether the proxy at ``root`` is written whole."""
    return osp.isfile(osp.join(REPO, root, 'formatted_val_labels_obs.npy'))


def start_data(run: harness.Run) -> Dict[str, object]:
    """Start writing the data the parts need, in the background (CPU work
    beside the GPU tier); folder -> process (None: already there)."""
    procs = {}
    for root, cmd in data_commands(run.args).items():
        procs[root] = None if ready(root) else harness.launch(
            cmd, osp.join(run.args.out, 'data.log'))
    return procs


def wait_data(run: harness.Run, procs: dict, root: str) -> bool:
    """Wait for the data at ``root`` (:func:`start_data`'s process) within
    the budget; whether it is there."""
    proc = procs.get(root)
    if proc is not None:
        try:
            proc.wait(max(run.left(), 1))
        except subprocess.TimeoutExpired:
            harness.stop(proc)
    return ready(root)


def fast_options(args) -> List[str]:
    """The image cache and the evaluation batch of the evidence's runs
    (the same batches: tests/datasets/test_image_cache.py)."""
    from spml_mm.datasets.image_cache import cache_options
    return cache_options(cache_file(args)) + eval_options(args)


def eval_options(args) -> List[str]:
    """The evidence runs' validation and test batch."""
    return [f'{loader}.batch_size={args.eval_batch}'
            for loader in ('val_dataloader', 'test_dataloader')]


def cache_file(args) -> str:
    """The evidence's image cache."""
    return osp.join(evidence_root(args), 'image_cache', 'images.npy')


def make_cache(run: harness.Run) -> bool:
    """The evidence's image cache (all images of the proxy)."""
    path = cache_file(run.args)
    if osp.isfile(osp.join(REPO, osp.splitext(path)[0] + '.json')):
        return True
    status = harness.call(
        [sys.executable, 'tools/cache_images.py', PROXY_CONFIG, '--out',
         path, '--cfg-options', *data_root_options(run.args)],
        osp.join(run.args.out, 'data.log'), run.left())
    return status == 'ok'


def weights(run: harness.Run) -> bool:
    """EfficientNet-Lite0's ImageNet weights, converted if missing."""
    if osp.isfile(osp.join(REPO, 'checkpoints/efficientnet-lite0_timm.pth')):
        return True
    return harness.call(
        [sys.executable, 'tools/convert_efficientnet_lite.py'],
        osp.join(run.args.out, 'data.log'), run.left()) == 'ok'


def evidence_ready(run: harness.Run, procs: dict) -> bool:
    """Whether the evidence's proxy, weights and image cache are there,
    waited for or made within the budget."""
    return (wait_data(run, procs, evidence_root(run.args)) and weights(run)
            and make_cache(run))
