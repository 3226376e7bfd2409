#!/usr/bin/env bash
# Reproduce one column of the papers' results (docs/RESULTS.md) on the
# real data: train every method's ResNet-50 config for DATASET with
# tools/dist_train.sh, test its best validation checkpoint (as the run records
# it: tools/best_checkpoint.py) with tools/test.py,
# and print the table in the form of .dev_scripts/benchmark/accuracy.py,
# beside the papers' numbers; then the table of every dataset run so far under
# WORK_ROOT's parent, in the papers' layout (reproduce_table.py --layout).
#
# Usage: bash .dev_scripts/benchmark/reproduce.sh DATASET
#        (DATASET: voc | coco | nuswide | cub)
#
# Environment (all optional):
#   GPUS=8                 processes (GPUs) per training run
#   SEEDS="0"              seeds per method, e.g. SEEDS="0 1 2"
#   METHODS="full an an_ls wan epr role em em_apl ll_r ll_ct ll_cp hill splc grloss
#            lasd opml"    config folders to run, in the papers' row order;
#                          "full" is AN's config on the true labels (the upper
#                          bound); an_ls, wan, hill and splc are AN's config
#                          with the loss of that baseline (label smoothing
#                          0.1, lambda 1/(C-1), UnifiedSPMLLoss presets hill
#                          and splc), under AN's procedure; role with GPUS > 1
#                          updates its label estimates per row (docs/methods/role.md,
#                          ROLE); opml's ResNet-50
#                          configs are OPML-SP;
#                          "folder-variant" runs configs/folder/resnet50-variant_*
#   WORK_ROOT=work_dirs/reproduce/DATASET
#   PORT=29500, PYTHON=python   passed on to tools/dist_train.sh
#   DRY_RUN=1              print the commands instead of running them
#
# A run whose test log already holds a test mAP is not repeated, so the
# script continues where an interrupted invocation stopped. The data must be
# in data/DATASET (tools/prepare_spml.py, see docs/user_guides/datasets.md).
set -euo pipefail

DATASET=${1:-}
case "$DATASET" in
    voc | coco | nuswide | cub) ;;
    *)
        echo "Usage: bash $0 {voc|coco|nuswide|cub}" >&2
        exit 2
        ;;
esac
cd "$(dirname "$0")/../.."
# reproduce_table runs as benchmark.reproduce_table, from .dev_scripts
export PYTHONPATH=$PWD/.dev_scripts${PYTHONPATH:+:$PYTHONPATH}

GPUS=${GPUS:-8}
SEEDS=${SEEDS:-0}
METHODS=${METHODS:-full an an_ls wan epr role em em_apl ll_r ll_ct ll_cp hill splc grloss lasd opml}
WORK_ROOT=${WORK_ROOT:-work_dirs/reproduce/$DATASET}
PYTHON=${PYTHON:-python}
DRY_RUN=${DRY_RUN:-0}
export PYTHON

config_of() {
    case "$1" in
        full | an_ls | wan | hill | splc) echo "configs/an/resnet50_$DATASET.py" ;;
        *-*) echo "configs/${1%%-*}/resnet50-${1#*-}_$DATASET.py" ;;
        *) echo "configs/$1/resnet50_$DATASET.py" ;;
    esac
}

missing=()
for method in $METHODS; do
    [ -f "$(config_of "$method")" ] || missing+=("$(config_of "$method")")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "No such config: ${missing[*]}" >&2
    exit 1
fi

run() {
    echo "+ $*"
    if [ "$DRY_RUN" != 1 ]; then
        "$@"
    fi
}

for method in $METHODS; do
    config=$(config_of "$method")
    case "$method" in
        full) extra=(train_dataloader.dataset.full_labels=True) ;;
        an_ls) extra=(model.head.loss.label_smoothing=0.1) ;;
        wan) extra=(model.head.loss.unobserved_weight=wan) ;;
        hill | splc) extra=(model.head.loss.type=UnifiedSPMLLoss
                            "model.head.loss.preset=$method") ;;
        # the release's dense Adam of the label estimates needs one process
        role) [ "$GPUS" -gt 1 ] && extra=(model.head.label_bank.adam=per_row) ||
            extra=() ;;
        *) extra=() ;;
    esac
    for seed in $SEEDS; do
        work="$WORK_ROOT/$method/seed$seed"
        if grep -qs 'Epoch(test).*spml/mAP' "$work/test.log"; then
            echo "= $work: tested already"
            continue
        fi
        options=(--cfg-options "randomness.seed=$seed" ${extra[@]+"${extra[@]}"})
        start=$(date +%s)
        run bash tools/dist_train.sh "$config" "$GPUS" --work-dir "$work" \
            "${options[@]}"
        if [ "$DRY_RUN" = 1 ]; then
            best="$work/best_spml_mAP_epoch_N.pth"
        else
            echo $(($(date +%s) - start)) >"$work/train_seconds"
            best=$("$PYTHON" tools/best_checkpoint.py "$work")
        fi
        echo "+ $PYTHON tools/test.py $config $best --work-dir $work" \
            "${options[*]} > $work/test.log 2>&1"
        if [ "$DRY_RUN" != 1 ]; then
            "$PYTHON" tools/test.py "$config" "$best" --work-dir "$work" \
                "${options[@]}" >"$work/test.log" 2>&1
        fi
    done
done

run "$PYTHON" -m benchmark.reproduce_table "$WORK_ROOT" \
    --dataset "$DATASET" --methods $METHODS
run "$PYTHON" -m benchmark.reproduce_table "$(dirname "$WORK_ROOT")" \
    --layout
