"""``PYTHONPATH=.dev_scripts python -m benchmark.faults``: every group of
scenarios through the harness."""
import sys

from benchmark import faults
from benchmark.faults import (data, divergence, inputs, label_sets,
                              misuse, preflight, runs, teacher, writes)
from benchmark.faults.harness import main

#: the groups of scenarios, in the order they run
GROUPS = dict(writes=writes.scenarios, runs=runs.scenarios,
              divergence=divergence.scenarios, data=data.scenarios,
              misuse=misuse.scenarios, preflight=preflight.scenarios,
              inputs=inputs.scenarios, teacher=teacher.scenarios,
              label_sets=label_sets.scenarios)

if __name__ == '__main__':
    sys.exit(main(GROUPS, faults.__doc__.split('\n')[0]))
