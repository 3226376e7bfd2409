#!/usr/bin/env bash
# Usage: [GPUS=8] [GPUS_PER_NODE=8] [CPUS_PER_TASK=5] [SRUN_ARGS="..."] \
#        bash tools/slurm_launch.sh SCRIPT PARTITION JOB_NAME [SCRIPT's arguments]
# The srun command of slurm_train.sh and slurm_test.sh: GPUS tasks (one per
# GPU, GPUS_PER_NODE per node), each one rank of tools/SCRIPT. SRUN_ARGS is
# passed to srun word by word (e.g. SRUN_ARGS="--time=12:00:00 --exclusive").
set -x

SCRIPT=$1
PARTITION=$2
JOB_NAME=$3
GPUS=${GPUS:-8}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
CPUS_PER_TASK=${CPUS_PER_TASK:-5}
SRUN_ARGS=${SRUN_ARGS:-""}
PYTHON=${PYTHON:-python}

# SRUN_ARGS is split into words on purpose
# shellcheck disable=SC2086
PYTHONPATH="$(dirname "$0")/..":$PYTHONPATH \
srun -p "$PARTITION" \
    --job-name="$JOB_NAME" \
    --gres=gpu:"$GPUS_PER_NODE" \
    --ntasks="$GPUS" \
    --ntasks-per-node="$GPUS_PER_NODE" \
    --cpus-per-task="$CPUS_PER_TASK" \
    --kill-on-bad-exit=1 \
    $SRUN_ARGS \
    "$PYTHON" -u "$(dirname "$0")/$SCRIPT" \
    "${@:4}"
