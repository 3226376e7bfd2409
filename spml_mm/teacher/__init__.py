"""Teacher scoring: the teachers that score a dataset's images for its
classes (:mod:`.scorer`) and the resumable pass of
``tools/score_teacher.py`` over a dataset (:mod:`.scoring`).

Not loaded by ``import spml_mm``: training reads the score file they write
(:mod:`spml_mm.datasets.teacher_scores`), never a teacher, so the command
and the code that scores imports this package when it is used.
"""
