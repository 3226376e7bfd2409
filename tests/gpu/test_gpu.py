"""The GPU tier (``make test-gpu``, ``pytest -m gpu``): what only a CUDA
GPU shows.

- Every method's ResNet-50 training step in fp32, fp16 and bf16 under
  ``torch.cuda.set_sync_debug_mode('error')``: the data preprocessor
  (``SPMLDataPreprocessor``), forward, loss and backward raise on any
  operation that makes the host wait on the GPU. The optimizer step runs
  outside (fp16's ``GradScaler`` reads its overflow flag, MMPretrain's
  recipe as ours); the fp32 optimizer step with the divergence guard's
  gradient norm runs under the same mode.
- MMEngine's ``compile`` of a train step, its kernels in CUDA graphs (the
  dynamo ``cudagraphs`` backend, inductor's ``reduce-overhead``): no graph
  skipped, the eager step's losses.
- ``tools/train.py`` per precision, a one-process ``dist_train.sh`` with
  NCCL, and ``--resume``, on the tiny demo dataset.

Without CUDA every test skips with one reason.
"""
import copy
import os
import os.path as osp
import re

import pytest
import torch
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.registry import init_default_scope
from mmpretrain.registry import MODELS

import spml_mm  # noqa: F401
from spml_mm.apis import get_method
from spml_mm.engine.runner.gpu_fast_runner import AMP
from tests.conftest import PYTHON, REPO, run_tool
from tests.models.test_no_host_sync import CONFIGS, batch
from tests.models.test_no_host_sync import build as tiny_model
from tests.tools.test_train_test import CONFIG, free_port, tiny_options
from benchmark.spml_setups import num_views

# the repository before what the machine has on its path (a GPU machine
# without registry access has the OpenMMLab stack in /tmp/site)
TOOL_ENV = dict(
    os.environ,
    PYTHONPATH=os.pathsep.join(
        filter(None, [REPO, os.environ.get('PYTHONPATH')])))

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(),
                       reason='GPU tier: needs a CUDA GPU (make test-gpu)')
]

PRECISIONS = {'fp32': None, 'fp16': 'float16', 'bf16': 'bfloat16'}


@pytest.mark.parametrize('name,precision', [
    pytest.param(name, precision, id=f'{name}-{precision}')
    for name in CONFIGS for precision in PRECISIONS
])
def test_step_never_waits_on_the_gpu(name, precision):
    cfg = Config.fromfile(
        osp.join(REPO, get_method(CONFIGS[name]).config('coco')))
    init_default_scope('mmpretrain')
    model_cfg = copy.deepcopy(cfg.model)
    model_cfg.backbone.init_cfg = None  # no download: speed, not weights
    preprocessor = dict(cfg.data_preprocessor)
    preprocessor.setdefault('type', 'SPMLDataPreprocessor')
    if preprocessor['type'] == 'ClsDataPreprocessor':
        preprocessor['type'] = 'SPMLDataPreprocessor'
    model = MODELS.build(dict(model_cfg, data_preprocessor=preprocessor))
    bank = getattr(model.head, 'label_bank', None)
    if bank is not None:
        bank.allocate(16)
    for module in model.modules():
        if callable(getattr(module, 'set_epoch', None)):
            module.set_epoch(2, cfg.train_cfg.max_epochs)
    model = model.cuda().train()
    optim = copy.deepcopy(cfg.optim_wrapper)
    if PRECISIONS[precision]:
        optim.update(type='AmpOptimWrapper', **AMP[PRECISIONS[precision]])
    wrapper = build_optim_wrapper(model, optim)
    views = num_views(cfg) if preprocessor['type'] == \
        'MultiViewDataPreprocessor' else 1

    def step(sync_debug):
        data = batch(views, cfg.model.head.num_classes)
        torch.cuda.set_sync_debug_mode(sync_debug)
        try:
            with wrapper.optim_context(model):
                data = model.data_preprocessor(data, True)
                losses = model._run_forward(data, mode='loss')
            loss, _ = model.parse_losses(losses)
            wrapper.backward(loss)
        finally:
            torch.cuda.set_sync_debug_mode('default')
        wrapper.step()
        wrapper.zero_grad()
        return loss

    step('default')  # first calls: cuDNN and cuBLAS set up
    loss = step('error')
    assert torch.isfinite(loss).item()


def train(tiny_demo, work, precision, *extra, tool='tools/train.py'):
    options = tiny_options(tiny_demo, 1)
    if PRECISIONS[precision]:
        options.append(f'optim_wrapper.dtype={PRECISIONS[precision]}')
        extra = ('--amp', ) + extra
    return run_tool([PYTHON, tool, CONFIG, '--work-dir', work, *extra] +
                    options, env=TOOL_ENV)


@pytest.mark.slow
@pytest.mark.parametrize('precision', list(PRECISIONS))
def test_train_tool(tiny_demo, tmp_path, precision):
    out = train(tiny_demo, str(tmp_path), precision)
    assert re.search(r'Epoch\(val\) \[1\]\[\d+/\d+\]\s+spml/mAP: \d+', out)
    assert osp.isfile(osp.join(tmp_path, 'epoch_1.pth'))


@pytest.mark.slow
def test_dist_train_one_process_nccl(tiny_demo, tmp_path):
    out = run_tool(['bash', 'tools/dist_train.sh', CONFIG, '1', '--work-dir',
                    str(tmp_path)] + tiny_options(tiny_demo, 1),
                   env=dict(os.environ, PORT=str(free_port()),
                            PYTHON=PYTHON))
    assert 'Distributed training: True' in out
    assert "backend='nccl'" in out
    assert osp.isfile(osp.join(tmp_path, 'epoch_1.pth'))


@pytest.mark.slow
def test_resume(tiny_demo, tmp_path):
    work = str(tmp_path)
    train(tiny_demo, work, 'bf16', '--no-validate')
    out = run_tool(
        [PYTHON, 'tools/train.py', CONFIG, '--work-dir', work, '--amp',
         '--no-validate', '--resume'] + tiny_options(tiny_demo, 2) +
        ['optim_wrapper.dtype=bfloat16'],
        env=TOOL_ENV)
    assert 'resumed epoch: 1' in out
    checkpoint = torch.load(osp.join(work, 'epoch_2.pth'), weights_only=True)
    assert checkpoint['meta']['epoch'] == 2


@pytest.mark.slow
def test_fast_recipe_through_train_tool(tiny_demo, tmp_path):
    """configs/_base_/runtime_gpu_fast.py as a second base, trained through
    tools/train.py, which builds runner_type from MMEngine's root registry
    (SPMLGPUFastRunner was not found there)."""
    config = tmp_path / 'fast.py'
    config.write_text(
        f"_base_ = ['{osp.join(REPO, CONFIG)}', "
        f"'{osp.join(REPO, 'configs/_base_/runtime_gpu_fast.py')}']\n")
    work = tmp_path / 'work'
    out = run_tool([PYTHON, 'tools/train.py', str(config), '--work-dir',
                    str(work)] + tiny_options(tiny_demo, 1) +
                   ['gpu_fast.num_workers=2'],
                   env=TOOL_ENV)
    assert "runner_type = 'SPMLGPUFastRunner'" in out
    assert "type='AmpOptimWrapper'" in out and "dtype='bfloat16'" in out
    assert re.search(r'Epoch\(train\) \[1\]', out)
    assert re.search(r'Epoch\(val\) \[1\]\[\d+/\d+\]\s+spml/mAP: \d+', out)
    checkpoint = torch.load(work / 'epoch_1.pth', weights_only=True)
    assert checkpoint['meta']['epoch'] == 1


@pytest.mark.slow
def test_fast_recipe_with_cached_images_flipped_on_the_gpu(tiny_demo,
                                                          tmp_path):
    """The input switches through the tools: tools/cache_images.py writes
    the cache of a demo config with a RandomFlip, tools/train.py trains the
    fast recipe on it with the flip on the GPU."""
    config = tmp_path / 'fast.py'
    config.write_text(
        f"_base_ = ['{osp.join(REPO, CONFIG)}', "
        f"'{osp.join(REPO, 'configs/_base_/runtime_gpu_fast.py')}']\n"
        "train_dataloader = dict(dataset=dict(pipeline=[\n"
        "    dict(type='LoadImageFromFile'),\n"
        "    dict(type='RandomFlip', prob=0.5, direction='horizontal'),\n"
        "    dict(type='PackInputs', algorithm_keys=('gt_label_full', ))]))\n")
    roots = [f'{split}_dataloader.dataset.data_root={tiny_demo}'
             for split in ('train', 'val', 'test')]
    cache = tmp_path / 'cache.npy'
    run_tool([PYTHON, 'tools/cache_images.py', str(config), '--out',
              str(cache), '--cfg-options', *roots], env=TOOL_ENV)
    work = tmp_path / 'work'
    out = run_tool([PYTHON, 'tools/train.py', str(config), '--work-dir',
                    str(work)] + tiny_options(tiny_demo, 1) +
                   ['gpu_fast.num_workers=2', f'gpu_fast.image_cache={cache}',
                    'gpu_fast.device_flip=True'], env=TOOL_ENV)
    assert "type='LoadCachedImage'" in out and 'flip_prob=0.5' in out
    assert re.search(r'Epoch\(val\) \[1\]\[\d+/\d+\]\s+spml/mAP: \d+', out)


def guarded_model(device, **wrapper_options):
    """A tiny classifier with the AN head and SPMLDataPreprocessor on
    ``device``, its SGD wrapper measured by the divergence guard."""
    from types import SimpleNamespace

    from mmengine.logging import MessageHub
    from mmengine.optim import OptimWrapper

    from spml_mm.engine.hooks import SPMLDivergenceGuardHook
    cfg = Config.fromfile(osp.join(REPO, 'configs', 'an', 'resnet50_coco.py'))
    model, _ = tiny_model(cfg, cfg.model.head, dict(
        type='SPMLDataPreprocessor', mean=[128.] * 3, std=[64.] * 3), device)
    wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.01),
                           **wrapper_options)
    guard = SPMLDivergenceGuardHook()
    guard.before_train(SimpleNamespace(optim_wrapper=wrapper,
                                       message_hub=MessageHub('gpu_guard')))
    return model, wrapper, guard, cfg.model.head.num_classes


@pytest.mark.parametrize('clip_grad', [None, dict(max_norm=1.)],
                         ids=['measured', 'clipped'])
def test_guarded_optimizer_step_never_waits_on_the_gpu(clip_grad):
    """The divergence guard keeps the gradient norm on the GPU through the
    optimizer step (MMEngine's wrapper reads it back there)."""
    model, wrapper, guard, num_classes = guarded_model(
        'cuda', **(dict(clip_grad=clip_grad) if clip_grad else {}))
    for sync_debug in ('default', 'error'):  # first calls: set-up
        with wrapper.optim_context(model):
            data = model.data_preprocessor(batch(1, num_classes), True)
            loss, _ = model.parse_losses(model._run_forward(data, 'loss'))
        wrapper.backward(loss)
        torch.cuda.set_sync_debug_mode(sync_debug)
        try:
            wrapper.step()
        finally:
            torch.cuda.set_sync_debug_mode('default')
        wrapper.zero_grad()
    assert guard.grad_norm.is_cuda and torch.isfinite(guard.grad_norm)


@pytest.fixture
def exact_fp32():
    """fp32 convolutions and matmuls without TF32 and with deterministic
    cuDNN algorithms: on an H200 with TF32 (PyTorch's default for cuDNN)
    the compiled and the eager step picked other convolution kernels and
    their losses were 0.5% apart by the fourth step."""
    cudnn, matmul = torch.backends.cudnn, torch.backends.cuda.matmul
    saved = cudnn.allow_tf32, cudnn.deterministic, cudnn.benchmark, \
        matmul.allow_tf32
    cudnn.allow_tf32 = matmul.allow_tf32 = cudnn.benchmark = False
    cudnn.deterministic = True
    yield
    cudnn.allow_tf32, cudnn.deterministic, cudnn.benchmark, \
        matmul.allow_tf32 = saved


@pytest.mark.parametrize('options,rtol', [
    pytest.param(dict(backend='cudagraphs'), 1e-4, id='cudagraphs'),
    # inductor compiles its kernels in worker processes
    pytest.param(dict(mode='reduce-overhead'), 1e-2,
                 id='inductor-reduce-overhead', marks=pytest.mark.slow)
])
def test_compiled_step_runs_in_cuda_graphs(options, rtol, exact_fp32):
    """MMEngine's ``compile`` of ``train_step`` as ``gpu_run`` profiles it:
    no graph of the step is left out of CUDA graphs (the preprocessor runs
    eagerly, the guard reads the norm after the step), and its losses are
    the eager step's (the same kernels replayed; inductor's own kernels
    round differently: on the CPU up to 5e-4 apart in four steps)."""
    from torch._dynamo.utils import counters
    compiled, wrapper, _, num_classes = guarded_model('cuda')
    eager, eager_wrapper, _, _ = guarded_model('cuda')
    eager.load_state_dict(compiled.state_dict())
    torch._dynamo.reset()
    counters.clear()
    step = torch.compile(compiled.train_step, **options)
    for _ in range(4):  # warm-up, recording, replays
        data = batch(1, num_classes)
        ours = step(copy.deepcopy(data), wrapper)
        theirs = eager.train_step(data, eager_wrapper)
        torch.testing.assert_close(ours['loss'], theirs['loss'], rtol=rtol,
                                   atol=rtol / 10)
    torch._dynamo.reset()
    assert counters['inductor']['cudagraph_skips'] == 0
