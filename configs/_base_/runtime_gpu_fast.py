# The GPU fast recipe, added to any config as a second base (it sets only
# keys that no other base sets):
#
#   _base_ = ['spml_mm::an/resnet50_voc.py',
#             'spml_mm::_base_/runtime_gpu_fast.py']
#
# SPMLGPUFastRunner applies each switch of gpu_fast on its own
# (spml_mm/engine/runner/gpu_fast_runner.py says what each one sets); switch
# one off with e.g. gpu_fast = dict(compile=False) in the config or
# --cfg-options gpu_fast.amp=None. docs/results/gpu.md measures each switch.
# It needs CUDA: without it the runner refuses to start, whatever the switches
# (train on a CPU with --cfg-options runner_type=Runner, which ignores
# gpu_fast; docs/user_guides/preflight_and_validation.md).
runner_type = 'SPMLGPUFastRunner'
gpu_fast = dict(
    channels_last=True,  # model and inputs in channels-last memory format
    cudnn_benchmark=True,  # env_cfg.cudnn_benchmark
    amp='bfloat16',  # AmpOptimWrapper: 'bfloat16' (no loss scaling), 'float16'
    batched_copy=True,  # SPMLDataPreprocessor, default_collate, pin_memory
    num_workers=8,  # training loader's workers (persistent)
    prefetch_factor=4,  # batches each worker prepares ahead
    compile=False,  # MMEngine's compile of the train step
    # the loaders read decoded uint8 images from this cache, written once by
    # tools/cache_images.py CONFIG (the same batches, no decoding)
    image_cache=None,
    # the training pipeline's RandomFlip done on the GPU by
    # SPMLDataPreprocessor (the same distribution, the GPU's random numbers)
    device_flip=False,
)
