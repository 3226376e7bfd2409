# MMPretrain's runtime, plus the plugin and the hooks every SPML run needs.
_base_ = 'mmpretrain::_base_/default_runtime.py'

custom_imports = dict(imports=['spml_mm'], allow_failed_imports=False)

default_hooks = dict(
    logger=dict(type='LoggerHook', interval=50),
    # keep the last checkpoint (for --resume) and the best one on val mAP;
    # written atomically, old ones removed only after the new one is complete.
    # 'auto': the first key validation reports, spml/mAP on full validation
    # labels, spml/mAP_observed with val_labels='observed' (a key named here
    # that validation does not report is refused before training)
    checkpoint=dict(
        type='SPMLCheckpointHook',
        interval=1,
        max_keep_ckpts=1,
        save_best='auto',
        rule='greater'),
    # before the first iteration: the keys hooks select on against what
    # validation reports, and two validation batches through the model and
    # the metric (sanity_batches=0 skips them; preflight=None skips it all)
    preflight=dict(type='SPMLPreflightHook', sanity_batches=2),
    # a non-finite loss or gradient norm stops training; a non-finite model is
    # never saved
    divergence_guard=dict(type='SPMLDivergenceGuardHook'),
    # multi-rank runs: BatchNorm statistics averaged across ranks after each
    # epoch, so scoring, validation and --resume do not depend on the rank
    sync_norm_buffers=dict(type='SPMLSyncNormBuffersHook'))

custom_hooks = [
    # checkpoints in plain types, loadable with torch.load(weights_only=True)
    dict(type='SafeCheckpointHook'),
    # the random generators' states resumed with the weights
    dict(type='SPMLRandomStateHook'),
    # head num_classes vs dataset classes, before any iteration runs
    dict(type='SPMLDatasetCheckHook'),
]

randomness = dict(seed=0, deterministic=False)
