"""The states of a label bank's entry, as the banks store them and the
losses read them (``pseudo_label`` of a batch).

Their own module, below both: a loss reads the states without importing
the banks (``tests/test_imports.py`` checks it).
"""

#: No pseudo-label: the entry is unobserved and not guessed.
UNLABELLED = 0
#: A pseudo-label taken as negative.
PSEUDO_NEGATIVE = -1
#: A pseudo-label taken as positive.
PSEUDO_POSITIVE = 1
