#!/usr/bin/env bash
# Usage: [GPUS=8] [GPUS_PER_NODE=8] [CPUS_PER_TASK=5] [SRUN_ARGS="..."] \
#        bash tools/slurm_test.sh PARTITION JOB_NAME CONFIG CHECKPOINT [test.py options]
# Tests a checkpoint on GPUS Slurm tasks (GPUS_PER_NODE per node) with
# `tools/test.py --launcher slurm`; the test set is split across the tasks.
exec bash "$(dirname "$0")"/slurm_launch.sh test.py "$1" "$2" \
    "$3" "$4" --launcher=slurm "${@:5}"
