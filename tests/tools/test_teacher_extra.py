"""The ``teacher`` extra of pyproject.toml installed as a user installs it:
pip resolves it against this environment and the packages it adds go to a
folder put first on ``PYTHONPATH``. With it the tools import (MMPretrain
1.2's multimodal models do not import with transformers 4.52 or later), CLIP
scores with a tokenizer of a local folder, and a tokenizer that the Hugging
Face Hub would have to serve is refused at once, offline or unreachable,
naming ``--teacher-options model.tokenizer.name_or_path=FOLDER``. Needs the
package index (skipped where pip cannot reach it)."""
import json
import os
import os.path as osp
import re
import subprocess

import pytest

from tests.conftest import PYTHON, REPO

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

VLPL_CONFIG = osp.join(REPO, 'configs/vlpl/vlpl_vgg11bn_demo.py')
#: pip's words when the index cannot be reached
NO_INDEX = ('NewConnectionError', 'Network is unreachable',
            'Temporary failure in name resolution', 'Name or service not')


def pip(*args):
    proc = subprocess.run([PYTHON, '-m', 'pip', *args], capture_output=True,
                          text=True, timeout=900)
    out = proc.stdout + proc.stderr
    if proc.returncode and any(word in out for word in NO_INDEX):
        pytest.skip(f'the package index cannot be reached: {out[-500:]}')
    assert proc.returncode == 0, out[-3000:]


@pytest.fixture(scope='module')
def teacher_env(tmp_path_factory):
    """The environment of a process that has the teacher extra."""
    if tomllib is None:
        pytest.skip('needs tomllib (Python 3.11)')
    with open(osp.join(REPO, 'pyproject.toml'), 'rb') as f:
        extra = tomllib.load(f)['project']['optional-dependencies']['teacher']
    folder = tmp_path_factory.mktemp('teacher_extra')
    report = str(folder / 'report.json')
    pip('install', '--dry-run', '--quiet', '--report', report, *extra)
    with open(report) as f:
        new = [
            f'{item["metadata"]["name"]}=={item["metadata"]["version"]}'
            for item in json.load(f)['install']
        ]
    site = str(folder / 'site')
    if new:
        pip('install', '--quiet', '--no-deps', '--target', site, *new)
    env = {
        k: v
        for k, v in os.environ.items() if not k.lower().endswith('_proxy')
    }
    env.update(PYTHONPATH=os.pathsep.join([site, REPO]),
               HF_HOME=str(folder / 'hf_home'))
    return env


def run(args, env):
    proc = subprocess.run([PYTHON, *args], cwd=REPO, capture_output=True,
                          text=True, timeout=600, env=env)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.slow
def test_the_tools_import_with_the_extra(teacher_env):
    rc, out = run(['tools/check_dataset.py', '--help'], teacher_env)
    assert rc == 0, out[-3000:]
    rc, out = run([
        '-c', 'import inspect, spml_mm, transformers\n'
        'from mmpretrain.registry import MODELS\n'
        "print(transformers.__version__, inspect.isclass(MODELS.get("
        "'CLIPZeroShot')))"
    ], teacher_env)
    # transformers' version, and CLIPZeroShot is MMPretrain's class (not
    # the placeholder registered without the multimodal packages)
    assert rc == 0 and re.search(r'^4\.\d+\.\d+ True$', out, re.M), \
        out[-3000:]


@pytest.mark.slow
def test_clip_scores_with_a_local_tokenizer(teacher_env):
    """The CLIP test that needs transformers, in a process that has it."""
    test = 'tests/tools/test_score_teacher.py::' \
        'test_clip_with_a_transformers_tokenizer'
    rc, out = run(['-m', 'pytest', test, '-q', '-p', 'no:cacheprovider'],
                  teacher_env)
    assert rc == 0 and '1 passed' in out, out[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize('hub,reason', [
    (dict(HF_HUB_OFFLINE='1'), 'and HF_HUB_OFFLINE is set.'),
    (dict(HF_ENDPOINT='http://127.0.0.1:9'),
     'and http://127.0.0.1:9 cannot be reached ('),
])
def test_a_tokenizer_the_hub_cannot_serve_is_refused_at_once(
        teacher_env, tiny_demo, tmp_path, hub, reason):
    """The documented command with MMPretrain's zoo config, whose tokenizer
    only the Hub serves: refused before the model is built, without the
    Hub client's minute of retries."""
    checkpoint = tmp_path / 'clip.pth'
    checkpoint.write_bytes(b'weights')
    rc, out = run([
        'tools/score_teacher.py', VLPL_CONFIG, '--source', 'clip',
        '--checkpoint',
        str(checkpoint), '--out',
        str(tmp_path / 'clip.npz'), '--cfg-options',
        f'train_dataloader.dataset.data_root={tiny_demo}'
    ], dict(teacher_env, **hub))
    assert rc == 1 and 'Traceback' not in out, out[-3000:]
    assert "error: the tokenizer 'openai/clip-vit-base-patch16' " \
        '(model.tokenizer.name_or_path of the teacher config) is not in the ' \
        f'Hugging Face cache ({teacher_env["HF_HOME"]}/hub) {reason}' in out
    assert out.rstrip().endswith(
        'copy FOLDER here and pass --teacher-options '
        'model.tokenizer.name_or_path=FOLDER')
    assert 'Retrying' not in out
