#!/usr/bin/env bash
# Usage: bash tools/dist_test.sh CONFIG CHECKPOINT NGPUS [test.py options]
# Without CUDA the processes use the gloo backend on CPU.
exec bash "$(dirname "$0")"/dist_launch.sh test.py "$3" \
    "$1" "$2" --launcher pytorch "${@:4}"
