"""The ``tier`` part: the GPU tier, ``pytest -m gpu``, with the outcome of
every test in ``gpu_tier.json``."""
import os
import os.path as osp
import sys
import time
import xml.etree.ElementTree as ET
from typing import List, Optional

from benchmark.gpu_run import harness
from benchmark.common import write_json


def part_tier(run: harness.Run) -> None:
    """The GPU tier; where the committed tier passed whole, only the tests
    it lacks (added since), merged into it."""
    args = run.args
    found = run.committed('gpu_tier.json')
    folder = osp.join(args.out, 'gpu_tier')
    os.makedirs(folder, exist_ok=True)
    tests, kept = list(args.gpu_tests), {}
    if found and found['failed'] == found['errors'] == 0:
        kept = found['tests']
        tests = [t for t in gpu_tests(args, folder)
                 if junit_name(t) not in kept]
        if not tests:
            return run.part('tier', status='skipped: committed, all passed')
    junit = osp.join(folder, 'junit.xml')
    started = time.time()
    status = harness.call(
        [sys.executable, '-m', 'pytest', *tests, '-m', 'gpu', '-q', '-rs',
         '-p', 'no:cacheprovider',
         # a module this machine cannot import loses its own tests only
         '--continue-on-collection-errors', f'--junitxml={junit}'],
        osp.join(folder, 'pytest.log'), run.cap('tier'))
    result = tier_result(junit, kept) if osp.isfile(junit) else dict(
        tests=kept, passed=0, failed=0, errors=0, skipped=0)
    result.update(kind=run.kind(), environment=run.manifest['environment'],
                  command='pytest ' + ' '.join(args.gpu_tests) + ' -m gpu',
                  status=status, seconds=round(time.time() - started, 1))
    write_json(osp.join(args.out, 'gpu_tier.json'), result)
    run.part('tier', status=status, **{k: result[k] for k in (
        'passed', 'failed', 'errors', 'skipped')})


def gpu_tests(args, folder: str) -> List[str]:
    """The node ids of the GPU tier's tests (collected, not run)."""
    log = osp.join(folder, 'collect.log')
    harness.call([sys.executable, '-m', 'pytest', *args.gpu_tests, '-m', 'gpu',
                  '--collect-only', '-q', '-p', 'no:cacheprovider'], log,
                 120)
    with open(log) as f:
        return [line.strip() for line in f if '::' in line]


def junit_name(node_id: str) -> str:
    """A test's name in the junit xml (``tier_result``) from its node id:
    ``tests/gpu/test_gpu.py::test_x[a]`` -> ``tests.gpu.test_gpu::test_x[a]``.
    """
    path, name = node_id.split('::', 1)
    return f"{osp.splitext(path)[0].replace('/', '.')}::{name}"


def tier_result(junit: str, kept: Optional[dict] = None) -> dict:
    """Outcome per test of a junit xml, after the tests of ``kept`` (an
    earlier tier's)."""
    tests = dict(kept or {})
    for case in ET.parse(junit).getroot().iter('testcase'):
        if case.get('name') is None:  # pytest's entry for an interruption
            continue
        name = f"{case.get('classname')}::{case.get('name')}"
        outcome = 'passed'
        for tag in ('failure', 'error', 'skipped'):
            node = case.find(tag)
            if node is not None:
                outcome = dict(failure='failed', error='errors')[tag] \
                    if tag != 'skipped' else 'skipped'
                tests[name] = dict(outcome=outcome,
                                   message=(node.get('message') or '')[:500],
                                   seconds=float(case.get('time', 0)))
                break
        else:
            tests[name] = dict(outcome=outcome,
                               seconds=float(case.get('time', 0)))
    counts = {k: sum(t['outcome'] == k for t in tests.values())
              for k in ('passed', 'failed', 'errors', 'skipped')}
    return dict(tests=tests, **counts)
