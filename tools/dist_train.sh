#!/usr/bin/env bash
# Usage: bash tools/dist_train.sh CONFIG NGPUS [train.py options]
# Without CUDA the processes use the gloo backend on CPU.
exec bash "$(dirname "$0")"/dist_launch.sh train.py "$2" \
    "$1" --launcher pytorch "${@:3}"
