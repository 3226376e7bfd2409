"""Everything a GPU machine measures for this project, in one budgeted,
resumable command (``bash tools/gpu_run.sh``, which installs the wheels of
``.whl/`` first where the OpenMMLab stack is missing; ``bash
tools/pack_wheels.sh`` fills it).

Parts, in order of priority, each capped by the budget left and skipped when
its result is already in ``--results-dir`` (default ``docs/results``, the
committed results) for the same kind of run (device, ``--tiny``):

1. ``tier``: the GPU tier, ``pytest -m gpu`` (junit xml kept; pass/fail per
   test in ``gpu_tier.json``);
2. ``speed``: ``.dev_scripts/benchmark/speed_gpu.py`` (``gpu.json``),
   continuing a committed incomplete table on the same device;
3. ``profile``: one fine-tuned proxy run split into data wait and step, with
   the operators (``.dev_scripts/benchmark/profile_train.py``), decoding files
   and from the image cache, and LASD's from the image cache, whose iteration
   against AN's is its runs' cost in the evidence's budget
   (``gpu_profile.json``; runs already committed are kept);
4. ``compile``: the profile's image-cache run again with the train step
   compiled (MMEngine's ``compile``): its kernels captured into CUDA graphs
   (``backend='cudagraphs'``), inductor's (``compile=True``), and inductor's
   in CUDA graphs (``mode='reduce-overhead'``), in ``gpu_profile.json``:
   whether the host-bound step gets cheaper, and at what start-up cost;
   one run at a time, each started only with ``RUN_NEED`` seconds left in
   the part (the rest wait for the next command);
5. ``evidence``: the full-size fine-tuned VOC-like queue
   (``.dev_scripts/benchmark/accuracy.py --suite proxy-voc --regime
   finetune``): each method's rate search (a grid rate that the other methods'
   searches found more than ``FAR`` points below their best left out; a step
   past the grid's edge where the best is there), then 3 seeds at its rate
   (seed 0: the search's run); after the papers' methods the model teacher
   (``.dev_scripts/benchmark/teacher_quality.py --model-teacher``) and VLPL and
   AEVLP on its scores, where they have a fine-tuned config; up to
   ``--jobs`` runs side by side, each started only
   when it fits in the budget left (a run the budget stopped resumes),
   from the image cache and, where the profile projects a run at most
   ``SWITCH`` of an eager one, in the fastest compiled mode
   (``--evidence-mode``; a compiled run that fails is run again eagerly);
   the results jsons, seeded with the committed ones, gain every finished
   run at once.

Everything is written into ``--stage`` and packed, after every part, into
``--out`` as ``gpu_run.tar.gz`` beside ``manifest.json`` (device, versions,
what each part did): the device tool returns at most 8 files of ``$OUT``.
The stage is emptied first, so it must be new, empty or an earlier
command's (marked by ``harness.STAGE_MARK``), and apart from ``--out``; an
``--out`` holding a ``manifest.json`` or pack of something else is refused
too. An earlier command's stage is collected first into ``<work>/results``
(a copy of ``--results-dir``, ``harness.carry_forward``), which the command
then reads as committed: the commands of one loan continue each other.
``PYTHONPATH=.dev_scripts python -m benchmark.gpu_collect OUT`` copies the
results into ``docs/results`` and writes the pages again. ``--device cpu
--tiny`` rehearses every part in seconds (tiny data and runs; the GPU tier's
tests are collected and skip).

Modules: ``command`` (the arguments, the parts in order), ``harness`` (the
budget, stage, manifest and processes), ``machine`` (what the lending
machine allows: the files it returns, its time limit), ``inputs`` (data,
weights, image cache), ``collecting`` (an output into a results folder,
for ``benchmark.gpu_collect`` and the next command), and a module per part:
``tier``, ``speed``, ``profiling`` (``profile`` and ``compile``) and
``evidence`` (its order of runs in ``evidence_queue``).

Example:
    bash tools/gpu_run.sh --budget 540 --out $OUT
    bash tools/gpu_run.sh --device cpu --tiny --out /tmp/rehearsal
"""
