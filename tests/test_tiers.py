"""The fast tier (``make test``: ``-m "not slow"``) refuses a test that
starts a Python process or a script unless it is marked slow."""
import multiprocessing
import subprocess
import sys

import pytest


def test_a_fast_test_cannot_start_python_or_a_script():
    with pytest.raises(RuntimeError,
                       match=r"test_tiers.py::test_a_fast_test_cannot_start_"
                       r"python_or_a_script starts \[.*python.*'-c', "
                       r"'pass'\]: mark the test @pytest.mark.slow"):
        subprocess.run([sys.executable, '-c', 'pass'])
    for command in (['bash', 'tools/dist_train.sh'], 'sh -c true',
                    ['torchrun', '--help']):
        with pytest.raises(RuntimeError, match='mark the test'):
            subprocess.run(command, shell=isinstance(command, str))
    with pytest.raises(RuntimeError, match='mark the test'):
        multiprocessing.get_context('spawn').Process(target=print).start()
    # a cheap program runs (MMEngine asks the compiler for its version)
    assert subprocess.run('true', shell=True).returncode == 0


@pytest.mark.slow
def test_a_slow_test_can():
    out = subprocess.run([sys.executable, '-c', 'print(6 * 7)'],
                         capture_output=True, text=True).stdout
    assert out == '42\n'
