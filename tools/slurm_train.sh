#!/usr/bin/env bash
# Usage: [GPUS=8] [GPUS_PER_NODE=8] [CPUS_PER_TASK=5] [SRUN_ARGS="..."] \
#        bash tools/slurm_train.sh PARTITION JOB_NAME CONFIG WORK_DIR [train.py options]
# Starts GPUS tasks (one per GPU, GPUS_PER_NODE per node) with srun; each
# task is one rank of `tools/train.py --launcher slurm`, which reads its rank
# and the master address from Slurm's environment. SRUN_ARGS is passed to
# srun word by word (e.g. SRUN_ARGS="--time=12:00:00 --exclusive").
exec bash "$(dirname "$0")"/slurm_launch.sh train.py "$1" "$2" \
    "$3" --work-dir="$4" --launcher=slurm "${@:5}"
