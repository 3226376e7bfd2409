#!/usr/bin/env bash
# Usage: bash tools/dist_launch.sh SCRIPT NGPUS [SCRIPT's arguments]
# The torchrun command of dist_train.sh and dist_test.sh: tools/SCRIPT in
# NGPUS processes per node (NNODES, NODE_RANK, MASTER_ADDR, PORT and PYTHON
# from the environment). Without CUDA the processes use the gloo backend on
# CPU.
SCRIPT=$1
GPUS=$2
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}
PYTHON=${PYTHON:-python}

PYTHONPATH="$(dirname "$0")/..":$PYTHONPATH \
"$PYTHON" -m torch.distributed.run \
    --nnodes="$NNODES" \
    --node_rank="$NODE_RANK" \
    --master_addr="$MASTER_ADDR" \
    --nproc_per_node="$GPUS" \
    --master_port="$PORT" \
    "$(dirname "$0")/$SCRIPT" \
    "${@:3}"
