"""Inject faults into demo runs and print one line per fault with the outcome.

    PYTHONPATH=.dev_scripts python -m benchmark.faults [--only GROUP ...] \
        [--out docs/results/faults.md]

Kills (SIGKILL) and I/O errors (ENOSPC) halfway through writing each kind of
checkpoint file and before the previous best checkpoint's removal (group
``writes``), resuming into or from other work dirs, early stopping killed
and resumed, another optimizer constructor or an older checkpoint
(``runs``), non-finite losses, gradients and hyperparameters and a hung rank
(``divergence``), bad data (``data``), misuse: checkpoints that do not
fit, shared or reused work dirs, a kill during the last validation, damaged
files, impossible settings (``misuse``), and what the pre-flight answers
before the first training step: the GPU fast recipe, validation on observed
labels with the default and with a wrong selection key, classes or a split
without a positive (``preflight``); duplicated and shared images,
classes without a training positive, pretrained weights offline, resuming
across class counts, damaged run files, paths with spaces, the benchmark
tools' output folder, the GPU command's folders, a CPU run's or a truncated
pack collected, a results json changed under its page, no OpenMMLab stack
for the GPU command (``inputs``); VLPL's and AEVLP's teacher score files:
a regenerated dataset, another file at ``--resume``, a subset, no crops,
no fingerprints, a text file, ``tools/check_dataset.py`` of a missing or
foreign file, the documented CLIP command offline (``teacher``); the
label-set tools misused: ``--out`` over an input or a user's file, a write
killed halfway, thresholds of another model, checkpoints that do not fit,
impossible calibrations, an 8000 x 8000 image, ``--cfg-options``
expressions and the smaller mistakes (``label_sets``). Each
scenario runs ``tools/train.py`` (``tools/test.py``,
``tools/check_dataset.py``, ``tools/score_teacher.py``,
``tools/calibrate.py``, ``predict.py``, ``export_onnx.py``) on a
160-image demo dataset in a temporary folder and classifies the outcome as
one of :data:`RESULTS`: the right result, a clear error (it names the
culprit and the fix), a silent wrong answer (exit status 0, wrong or missing
result), a crash (an error that does not say what is wrong) or data lost (a
file the run did not write removed or changed). ``--out`` writes the table
for docs/RESULTS.md; with ``--only`` the rows of the other groups are kept
from the existing page.
"""
