#!/usr/bin/env bash
# Usage: [GPUS=8] [GPUS_PER_NODE=8] [CPUS_PER_TASK=5] [SRUN_ARGS="..."] \
#        bash tools/slurm_train.sh PARTITION JOB_NAME CONFIG WORK_DIR [train.py options]
# Starts GPUS tasks (one per GPU, GPUS_PER_NODE per node) with srun; each
# task is one rank of `tools/train.py --launcher slurm`, which reads its rank
# and the master address from Slurm's environment. SRUN_ARGS is passed to
# srun word by word (e.g. SRUN_ARGS="--time=12:00:00 --exclusive").
set -x

PARTITION=$1
JOB_NAME=$2
CONFIG=$3
WORK_DIR=$4
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
    "$PYTHON" -u "$(dirname "$0")"/train.py \
    "$CONFIG" \
    --work-dir="$WORK_DIR" \
    --launcher=slurm "${@:5}"
