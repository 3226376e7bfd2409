#!/usr/bin/env bash
# Everything a GPU machine measures for this project, in one budgeted,
# resumable command (.dev_scripts/benchmark/gpu_run/ says what and in which
# order; docs/user_guides/gpu_run.md how to use it):
#   bash tools/gpu_run.sh --budget 540 --out "$OUT"
#   bash tools/gpu_run.sh --device cpu --tiny --out /tmp/rehearsal   # rehearsal
# Where the OpenMMLab stack is missing (a GPU machine without registry
# access), the wheels of .whl/ (tools/pack_wheels.sh) are installed into
# /tmp/site first. The budget counts from here.
export GPU_RUN_START=${GPU_RUN_START:-$(date +%s)}
cd "$(dirname "$0")/.." || exit 1
PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c "import mmengine, mmpretrain" 2>/dev/null; then
  # a machine still warm from an earlier command has them in /tmp/site
  PYTHONPATH=/tmp/site "$PYTHON" -c "import mmengine, mmpretrain" 2>/dev/null ||
  ls .whl/*.whl >/dev/null 2>&1 || {
    echo "mmengine/mmpretrain missing and no wheels in .whl/: fill it on a machine with a package index (bash tools/pack_wheels.sh) and copy it along with the tree" >&2
    exit 1
  }
  PYTHONPATH=/tmp/site "$PYTHON" -c "import mmengine, mmpretrain" 2>/dev/null ||
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
# the harness is .dev_scripts/benchmark/gpu_run (the development folder)
export PYTHONPATH=$PWD:$PWD/.dev_scripts${PYTHONPATH:+:$PYTHONPATH}
exec "$PYTHON" -m benchmark.gpu_run "$@"
