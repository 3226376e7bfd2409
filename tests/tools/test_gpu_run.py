"""The GPU command rehearsed on the CPU (``bash tools/gpu_run.sh --device
cpu --tiny``): every part's code path (the GPU tier collected through
pytest, speed_gpu, the profile, the evidence queue's rate search and seed
through accuracy.py from the image cache), the results collected into a
results folder, and a second command that skips what is committed there and
runs only the missing evidence run."""
import json
import os
import os.path as osp
import shutil
import subprocess
import tarfile
import threading

import pytest

from tests.conftest import PYTHON, REPO, dev_env
from benchmark import gpu_collect
from benchmark.gpu_run import (command, evidence_queue, harness, inputs,
                               machine, profiling)
from benchmark.gpu_run import evidence as evidence_part
from benchmark.gpu_run import speed as speed_part
from benchmark.gpu_run import tier as tier_part
from benchmark.common import load_json, write_json


def gpu_command(back, results, *extra, stage='stage'):
    """The command's manifest and its output, unpacked. The budget leaves
    the rehearsal room on a loaded machine (two test workers on two cores):
    at 900 s it stopped itself before its evidence run there."""
    proc = subprocess.run(
        ['bash', 'tools/gpu_run.sh', '--device', 'cpu', '--tiny', '--out',
         str(back), '--stage', str(back.parent / stage), '--results-dir',
         str(results), '--gpu-tests', 'tests/gpu', '--budget', '1800',
         '--work', str(back.parent / 'work'), *extra],
        cwd=REPO, capture_output=True, text=True, timeout=2400,
        env=dict(os.environ, PYTHON=PYTHON, PYTHONPATH=REPO))
    assert proc.returncode == 0, proc.stderr[-4000:]
    # the device tool returns at most 8 files of $OUT
    assert sorted(os.listdir(back)) == ['gpu_run.tar.gz', 'manifest.json']
    out = back.parent / f'{back.name}_unpacked'
    with tarfile.open(back / 'gpu_run.tar.gz') as tar:
        tar.extractall(out, filter='data')
    manifest = json.loads((back / 'manifest.json').read_text())
    assert json.loads((out / 'manifest.json').read_text()) == manifest
    return manifest, out


def read(path):
    return json.loads(path.read_text())


@pytest.mark.slow
def test_gpu_run_rehearsal(tmp_path):
    results = tmp_path / 'results'
    results.mkdir()
    back = tmp_path / 'out1'
    manifest, out = gpu_command(back, results)
    parts = manifest['parts']
    assert manifest['kind'] == dict(device='cpu', tiny=True)
    assert manifest['environment']['torch']
    # the GPU tier: collected, every test skipped without CUDA, per test
    assert parts['tier']['status'] == 'ok'
    tier = read(out / 'gpu_tier.json')
    assert (out / 'gpu_tier' / 'junit.xml').is_file()
    assert tier['failed'] == tier['errors'] == 0 and tier['skipped'] > 30
    assert any('test_step_never_waits_on_the_gpu[AN-bf16]' in name
               for name in tier['tests'])
    # speed_gpu's tables
    assert parts['speed']['complete'] is True
    speed = read(out / 'speed' / 'gpu.json')
    assert speed['tables_complete'] == dict(heads=True, recipe=True)
    assert set(speed['heads']['fp32']) == {'stock', 'AN'}
    assert set(speed['recipe']['stock fp32']) == {'stock', 'batched_copy',
                                                  'gpu_fast'}
    # the profile, decoding files and from the image cache, and LASD's
    profile = read(out / 'gpu_profile.json')
    assert [r['label'] for r in profile['runs']] == [
        'decoding files', 'image cache', 'LASD, image cache',
        *profiling.COMPILED]
    assert all(r['iterations'] == 3 and r['operators'] for r in
               profile['runs'])
    assert parts['compile']['status'] == 'ok, ok, ok'
    # the evidence: the rate search's run, tested, is the seed at its rate
    evidence = out / 'evidence'
    search = read(evidence / 'accuracy_proxy-voc_finetune-f0.01_lr_search'
                  '.json')
    seeds = read(evidence / 'accuracy_proxy-voc_finetune-f0.01.json')
    assert list(search) == ['an'] and list(search['an']) == ['0.001']
    assert list(seeds['an']) == ['0'] and seeds['an']['0']['lr'] == 0.001
    assert seeds['an']['0']['from_lr_search'] is True
    assert seeds['an']['0']['mAP'] == search['an']['0.001']['test_mAP']
    assert parts['evidence']['status'] == 'done'
    # no run seconds yet to weigh the compiled profiles against: eager
    assert parts['evidence']['mode'] == 'eager'
    assert not any(r['compiled'] for r in parts['evidence']['finished'])
    assert all(r['side_by_side'] >= 1 for r in parts['evidence']['finished'])
    # GPU use (None without nvidia-smi) and load, to size --jobs
    sample = parts['evidence']['samples'][0]
    assert set(sample) == {'s', 'running', 'gpu_busy', 'load'}
    assert sorted(r['run'][0] for r in parts['evidence']['finished']) == [
        'lr', 'seed']
    assert list((evidence / 'runs' / 'an' / '0.001').glob('*/vis_data/'
                                                          'scalars.json'))
    assert 'LoadCachedImage' in (evidence / 'runs.log').read_text()

    # collected: a rehearsal never into docs/results
    with pytest.raises(SystemExit):
        gpu_collect.main([str(back)])
    written = gpu_collect.main([str(back), '--results-dir', str(results)])
    assert {'gpu_tier.md', 'gpu.md', 'gpu_profile.md', 'gpu_runs.json',
            'accuracy_proxy-voc_finetune-f0.01.md'} <= set(written)
    assert '0 failed' in (results / 'gpu_tier.md').read_text()

    # a seed run that the first command did not finish, and a method it did
    # not run: the second command skips every committed part and run, and
    # runs only those, the new method's with the train step compiled while
    # AN, whose runs are eager, stays eager (its own stage: another
    # machine's, without the first command's stage to carry forward)
    del seeds['an']['0']
    (results / 'accuracy_proxy-voc_finetune-f0.01.json').write_text(
        json.dumps(seeds))
    manifest, out = gpu_command(tmp_path / 'out2', results, '--methods',
                                'an', 'full', '--evidence-mode',
                                'image cache, compiled', stage='stage2')
    parts = manifest['parts']
    assert parts['tier']['status'] == 'skipped: committed, all passed'
    assert parts['speed']['status'] == 'skipped: committed, complete'
    assert parts['profile']['status'] == 'skipped: committed'
    assert parts['compile']['status'] == 'skipped: committed'
    evidence = parts['evidence']
    assert evidence['status'] == 'done'
    assert (evidence['mode'], evidence['eager_methods']) == (
        'image cache, compiled', ['an'])
    assert sorted((r['run'][1], r['run'][0], r['compiled'])
                  for r in evidence['finished']) == [
        ('an', 'seed', False), ('full', 'lr', True), ('full', 'seed', True)]
    seeds = read(out / 'evidence' / 'accuracy_proxy-voc_finetune-f0.01.json')
    assert not any(o.startswith('compile')
                   for o in seeds['an']['0']['options'])
    assert 'compile.backend=eager' in seeds['full']['0']['options']
    assert seeds['full']['0']['from_lr_search'] is True
    assert '1 of 2 runs trained with the train step compiled' in (
        out / 'evidence' / 'accuracy_proxy-voc_finetune-f0.01.md').read_text()
    again = read(out / 'evidence' /
                 'accuracy_proxy-voc_finetune-f0.01_lr_search.json')
    assert again['an'] == search['an'] and list(again['full']) == ['0.001']
    gpu_collect.main([str(out), '--results-dir', str(results)])  # unpacked
    assert len(read(results / 'gpu_runs.json')['runs']) == 2


def test_tier_result_counts_each_outcome(tmp_path):
    junit = tmp_path / 'junit.xml'
    junit.write_text(
        '<testsuites><testsuite>'
        '<testcase classname="tests.gpu.test_gpu" name="a" time="1.5"/>'
        '<testcase classname="tests.gpu.test_gpu" name="b" time="2">'
        '<failure message="boom">trace</failure></testcase>'
        '<testcase classname="tests.gpu.test_gpu" name="c" time="0">'
        '<skipped message="no GPU"/></testcase>'
        '<testcase classname="tests.gpu.test_gpu" name="d" time="0">'
        '<error message="fixture"/></testcase>'
        '</testsuite></testsuites>')
    result = tier_part.tier_result(str(junit))
    assert (result['passed'], result['failed'], result['skipped'],
            result['errors']) == (1, 1, 1, 1)
    assert result['tests']['tests.gpu.test_gpu::b'] == dict(
        outcome='failed', message='boom', seconds=2.)


def test_a_passed_tier_runs_only_the_tests_added_since(tmp_path,
                                                      monkeypatch):
    """The committed tier passed whole: the next command runs the GPU tests
    it lacks and merges them into it; with none, the part is skipped."""
    results = tmp_path / 'results'
    results.mkdir()
    run = harness.Run(command.parse_args([
        '--device', 'cpu', '--out', str(tmp_path / 'back'), '--stage',
        str(tmp_path / 'stage'), '--results-dir', str(results)]))
    (results / 'gpu_tier.json').write_text(json.dumps(dict(
        kind=run.kind(), failed=0, errors=0, tests={
            'tests.gpu.test_gpu::test_a[x]': dict(outcome='passed',
                                                  seconds=1.)})))
    collected = ['tests/gpu/test_gpu.py::test_a[x]',
                 'tests/gpu/test_gpu.py::test_b']
    monkeypatch.setattr(tier_part, 'gpu_tests', lambda args, folder: collected)
    ran = []

    def call(cmd, log, cap):
        ran.append([a for a in cmd if a.startswith('tests/')])
        junit = next(a for a in cmd if a.startswith('--junitxml='))
        with open(junit.split('=', 1)[1], 'w') as f:
            f.write('<testsuites><testsuite><testcase classname='
                    '"tests.gpu.test_gpu" name="test_b" time="2"/>'
                    '</testsuite></testsuites>')
        return 'ok'

    monkeypatch.setattr(harness, 'call', call)
    tier_part.part_tier(run)
    assert ran == [['tests/gpu/test_gpu.py::test_b']]
    tier = read(tmp_path / 'stage' / 'gpu_tier.json')
    assert set(tier['tests']) == {'tests.gpu.test_gpu::test_a[x]',
                                  'tests.gpu.test_gpu::test_b'}
    assert (tier['passed'], tier['failed']) == (2, 0)
    collected.pop()
    tier_part.part_tier(run)
    assert len(ran) == 1
    assert run.manifest['parts']['tier']['status'] == \
        'skipped: committed, all passed'


def test_committed_results_of_another_kind_are_not_skipped(tmp_path):
    args = command.parse_args(['--device', 'cpu', '--tiny', '--out',
                               str(tmp_path / 'out'), '--stage',
                               str(tmp_path / 'stage'), '--results-dir',
                               str(tmp_path)])
    run = harness.Run(args)
    (tmp_path / 'gpu_tier.json').write_text(json.dumps(
        dict(kind=dict(device='cuda', tiny=False), failed=0, errors=0)))
    assert run.committed('gpu_tier.json') is None
    (tmp_path / 'gpu_tier.json').write_text(json.dumps(
        dict(kind=dict(device='cpu', tiny=True), failed=0, errors=0)))
    assert run.committed('gpu_tier.json')['failed'] == 0
    assert read(tmp_path / 'out' / 'manifest.json')['kind'] == dict(
        device='cpu', tiny=True)


def test_speed_starts_after_the_data_writing(tmp_path, monkeypatch):
    """Timings of a quiet host: the speed part waits for the data being
    written in the background (every core), which made the H100's first fp32
    rows 4x slower."""
    events = []

    class Writing:
        def wait(self, timeout):
            events.append('data written')

    monkeypatch.setattr(harness, 'call', lambda cmd, log, cap:
                        events.append(cmd[2]) or 'ok')
    run = harness.Run(command.parse_args([
        '--device', 'cpu', '--tiny', '--out', str(tmp_path / 'back'),
        '--stage', str(tmp_path / 'stage'), '--results-dir',
        str(tmp_path / 'results'), '--parts', 'speed']))
    speed_part.part_speed(run, {'data/a': Writing(), 'data/b': None})
    assert events == ['data written', 'benchmark.speed_gpu']


def test_a_complete_recipe_table_is_measured_again_when_not_continued(
        tmp_path, monkeypatch):
    """The speed part measures only the heads when the committed recipe
    table is complete and speed_gpu.py's --resume keeps it (the same code,
    machine and versions); else every table, not a heads-only json that
    would drop the recipe's rows."""
    from types import SimpleNamespace

    from benchmark.gpu_steps import environment
    from benchmark.common import code_fingerprint
    results = tmp_path / 'results'
    results.mkdir()
    commands = []
    monkeypatch.setattr(harness, 'call', lambda cmd, log, cap:
                        commands.append(cmd) or 'ok')
    monkeypatch.setattr(inputs, 'ready', lambda root: True)
    run = harness.Run(command.parse_args([
        '--device', 'cpu', '--out', str(tmp_path / 'back'), '--stage',
        str(tmp_path / 'stage'), '--results-dir', str(results)]))
    committed = dict(kind=run.kind(), complete=False,
                     tables_complete=dict(heads=False, recipe=True),
                     code=code_fingerprint(),
                     environment=environment(SimpleNamespace(device='cpu')))
    for code, heads_only in ((committed['code'], True), ('0ther', False)):
        (results / 'gpu.json').write_text(json.dumps(dict(committed,
                                                          code=code)))
        speed_part.part_speed(run, {})
        cmd = commands.pop()
        assert ('--tables' in cmd) is heads_only
        assert '--resume' in cmd


def test_profile_adds_lasd_to_a_committed_profile_and_prices_its_runs(
        tmp_path, monkeypatch):
    """A committed profile of AN's runs gains LASD's alone, whose iteration
    against AN's from the image cache is the evidence's cost of a LASD run
    (else the CPU's 5)."""
    results = tmp_path / 'results'
    results.mkdir()
    run = harness.Run(command.parse_args([
        '--device', 'cpu', '--tiny', '--out', str(tmp_path / 'back'),
        '--stage', str(tmp_path / 'stage'), '--results-dir', str(results)]))
    assert evidence_part.costs(run) == dict(lasd=5., teacher=2.)

    def profiled(label, seconds):
        return dict(label=label, iteration_s=dict(median=seconds))

    (results / 'gpu_profile.json').write_text(json.dumps(dict(
        kind=run.kind(), runs=[profiled('decoding files', .03),
                               profiled('image cache', .02)])))
    called = []

    def call(cmd, log, cap, env=None):
        out, label = cmd[cmd.index('--out') + 1], cmd[cmd.index('--label') + 1]
        called.append((cmd[3], label))
        os.makedirs(out)
        with open(os.path.join(out, 'profile.json'), 'w') as f:
            json.dump(profiled(label, .05), f)
        return 'ok'

    monkeypatch.setattr(harness, 'call', call)
    for ready in ('wait_data', 'weights', 'make_cache'):
        monkeypatch.setattr(inputs, ready, lambda *a: True)
    profiling.part_profile(run, {})
    assert called == [(profiling.LASD_CONFIG, 'LASD, image cache')]
    profile = read(tmp_path / 'stage' / 'gpu_profile.json')
    assert [r['label'] for r in profile['runs']] == [
        'decoding files', 'image cache', 'LASD, image cache']
    assert evidence_part.costs(run) == pytest.approx(
        dict(lasd=2.5, teacher=2.))


def test_compiled_runs_go_one_at_a_time_with_the_time_left(
        tmp_path, monkeypatch):
    """Each compiled profile run gets all of the part's time left, and one
    starts only with ``RUN_NEED`` seconds left: an even share of 167 s
    made all three time out on an H200. The rest wait for the next
    command."""
    from types import SimpleNamespace
    clock = [1000.]
    monkeypatch.setenv('GPU_RUN_START', '1000')
    results = tmp_path / 'results'
    results.mkdir()
    run = harness.Run(command.parse_args([
        '--device', 'cpu', '--budget', '600', '--out', str(tmp_path / 'back'),
        '--stage', str(tmp_path / 'stage'), '--results-dir', str(results)]))
    fake = SimpleNamespace(time=lambda: clock[0])
    monkeypatch.setattr(harness, 'time', fake)
    monkeypatch.setattr(profiling, 'time', fake)
    eager = [label for label in profiling.profile_runs(run.args)
             if label not in profiling.COMPILED]
    (results / 'gpu_profile.json').write_text(json.dumps(dict(
        kind=run.kind(), runs=[dict(label=label) for label in eager])))
    caps = []

    def call(cmd, log, cap, env=None):
        caps.append((cmd[cmd.index('--label') + 1], cap))
        clock[0] += 200  # the first run takes 200 s of the part's 300
        return 'ok'

    monkeypatch.setattr(harness, 'call', call)
    monkeypatch.setattr(inputs, 'evidence_ready', lambda *a: True)
    profiling.part_compile(run, {})
    first, *rest = profiling.COMPILED
    assert caps == [(first, 300)]
    assert read(tmp_path / 'stage' / 'manifest.json')['parts']['compile'][
        'status'] == ', '.join(['ok'] + [f'{label}: left for the next command'
                                         for label in rest])


def test_a_second_command_continues_from_the_first_ones_stage(
        tmp_path, monkeypatch):
    """The second command of a loan reads what the first measured (its
    stage, not yet collected) as committed, through a copy of the results
    folder; the third reads the first two; the results folder itself is
    not written."""
    results = tmp_path / 'results'
    results.mkdir()
    (results / 'accuracy_committed.json').write_text('{}')

    starts = iter(range(600, 6000, 600))

    def command_with(name):
        # commands minutes apart (gpu_runs.json tells them by their start)
        monkeypatch.setenv('GPU_RUN_START', str(next(starts)))
        args = command.parse_args([
            '--device', 'cpu', '--tiny', '--out', str(tmp_path / 'back'),
            '--stage', str(tmp_path / 'stage'), '--results-dir',
            str(results), '--work', str(tmp_path / 'work')])
        run = harness.Run(args)
        os.makedirs(tmp_path / 'stage' / 'evidence', exist_ok=True)
        (tmp_path / 'stage' / 'evidence' / f'accuracy_{name}.json'
         ).write_text(json.dumps(dict(measured_by=name)))
        return run

    first = command_with('first')
    assert first.args.results_dir == str(results)  # nothing before it
    second = command_with('second')
    merged = tmp_path / 'work' / 'results'
    assert second.args.results_dir == str(merged)
    assert read(merged / 'accuracy_first.json') == dict(measured_by='first')
    assert (merged / 'accuracy_committed.json').is_file()
    third = command_with('third')
    assert third.args.results_dir == str(merged)
    assert {p.name for p in merged.glob('accuracy_*')} == {
        'accuracy_committed.json', 'accuracy_first.json',
        'accuracy_second.json'}
    assert [r['started'] for r in read(merged / 'gpu_runs.json')['runs']
            ] == [first.manifest['started'], second.manifest['started']]
    assert {p.name for p in results.iterdir()} == {'accuracy_committed.json'}
    # a folder there that the command did not write is left alone
    (tmp_path / 'stage' / 'manifest.json').write_text(json.dumps(dict(
        first.manifest, results_dir=str(results))))
    shutil.rmtree(merged)
    merged.mkdir()
    (merged / 'mine.txt').write_text('a user\'s')
    fourth = command_with('fourth')
    assert fourth.args.results_dir == str(results)
    assert [p.name for p in merged.iterdir()] == ['mine.txt']


def test_a_stopped_run_is_priced_by_its_epochs_left(tmp_path):
    """A run the budget stopped resumes from its last checkpoint: the share
    of its epochs done is read from the checkpoint's name and the config
    the run dumped."""
    assert evidence_part.share_done(str(tmp_path)) == 0.  # nothing run yet
    (tmp_path / 'efficientnet-lite0_proxy-voc.py').write_text(
        'train_cfg = dict(by_epoch=True, max_epochs=10)\n')
    assert evidence_part.share_done(str(tmp_path)) == 0.  # no checkpoint yet
    (tmp_path / 'last_checkpoint').write_text(str(tmp_path / 'epoch_3.pth'))
    assert evidence_part.share_done(str(tmp_path)) == pytest.approx(0.3)


def profiled(label, iteration, wall=10.):
    return dict(label=label, iteration_s=dict(median=iteration),
                wall_s=wall)


def test_the_evidence_takes_the_compiled_mode_that_projects_shortest(
        tmp_path):
    """A compiled mode trains the evidence where the profile projects its
    run at most SWITCH of an eager one: the eager run's seconds scaled by
    the iteration times, plus twice the longer whole run (the compilation,
    again for each epoch's last, smaller batch)."""
    results = tmp_path / 'results'
    results.mkdir()

    def mode(*argv, eager_s=200.):
        run = harness.Run(command.parse_args([
            '--out', str(tmp_path / 'back'), '--stage',
            str(tmp_path / 'stage'), '--results-dir', str(results),
            '--device', 'cpu', *argv]))
        return evidence_part.evidence_mode(run, eager_s)

    assert mode() == ('eager', [], 1.)  # nothing profiled
    labels = list(profiling.COMPILED)
    runs = [profiled('image cache', .02),
            profiled(labels[0], .005, wall=30.),  # 50 + 2 x 20 s of 200
            profiled(labels[1], .01, wall=60.),  # 100 + 2 x 50 s
            profiled(labels[2], .004, wall=100.)]  # 40 + 2 x 90 s
    (results / 'gpu_profile.json').write_text(json.dumps(dict(
        kind=dict(device='cpu', tiny=False), runs=runs)))
    name, options, share = mode()
    assert (name, share) == (labels[0], pytest.approx(.45))
    assert options == profiling.COMPILED[labels[0]]
    # a short run pays more for the compilation: 10 + 2 x 20 s of 40
    assert mode(eager_s=40.)[0] == 'eager'
    assert mode('--evidence-mode', 'eager') == ('eager', [], 1.)
    assert mode('--evidence-mode', labels[1])[:2] == (
        labels[1], ['compile=True'])


def fake_queue(tmp_path, monkeypatch, fails, *argv):
    """The evidence part of a --tiny command whose runs are stand-ins: a run
    records its result with its options at once, or fails where ``fails``
    says so of its command; the command's launched runs."""
    launched, name = [], 'accuracy_proxy-voc_finetune-f0.01'

    class Proc:
        def __init__(self, cmd):
            self.cmd, self.returncode = cmd, None

        def poll(self):
            self.returncode = int(fails(self.cmd))
            if self.returncode:
                return 1
            cmd = self.cmd
            if '--model-teacher' in cmd:  # its record and score file
                for key in ('--model-teacher', '--teacher-out'):
                    with open(cmd[cmd.index(key) + 1], 'w') as f:
                        json.dump(dict(command=cmd), f)
                return 0
            out, method = (cmd[cmd.index(k) + 1] for k in ('--out-dir',
                                                          '--methods'))
            options = cmd[cmd.index('--cfg-options') + 1:]
            if '--lr-search' in cmd:
                path, key, entry = f'{name}_lr_search.json', '0.001', dict(
                    val_mAP=50., test_mAP=40., seed=0, seconds=5.,
                    select_metric='spml/mAP', options=options)
            else:
                path, key, entry = f'{name}.json', '0', dict(
                    mAP=40., seconds=5., options=options)
            found = load_json(os.path.join(out, path))
            found.setdefault(method, {})[key] = entry
            with open(os.path.join(out, path), 'w') as f:
                json.dump(found, f)
            return 0

    def launch(cmd, log, env=None):
        launched.append(cmd)
        return Proc(cmd)

    monkeypatch.setattr(harness, 'launch', launch)
    run = evidence_run(tmp_path, monkeypatch, '--evidence-mode',
                       'image cache, compiled', *argv)
    evidence_part.part_evidence(run, {})
    return run, [(cmd[cmd.index('--methods') + 1] if '--methods' in cmd
                  else 'teacher', '--lr-search' in cmd,
                  'compile.backend=eager' in cmd) for cmd in launched]


def evidence_run(tmp_path, monkeypatch, *argv):
    """A --tiny command whose evidence part finds its data ready."""
    monkeypatch.setattr(evidence_part, 'render_evidence', lambda *a: None)
    for ready in ('wait_data', 'weights', 'make_cache'):
        monkeypatch.setattr(inputs, ready, lambda *a: True)
    return harness.Run(command.parse_args([
        '--device', 'cpu', '--tiny', '--out', str(tmp_path / 'back'),
        '--stage', str(tmp_path / 'stage'), '--results-dir',
        str(tmp_path / 'results'), '--work', str(tmp_path / 'work'),
        *argv]))


def test_an_error_in_the_queue_ends_the_runs_it_started(tmp_path,
                                                        monkeypatch):
    """The part's error is the manifest's (main records it and goes on);
    the runs it launched do not outlive it."""
    launched, stopped = [], []

    class Running:
        def poll(self):
            return None

    def launch(cmd, log, env=None):
        launched.append(Running())
        return launched[-1]

    def sample():
        raise RuntimeError('nvidia-smi hung')

    monkeypatch.setattr(harness, 'launch', launch)
    monkeypatch.setattr(harness, 'stop', stopped.append)
    monkeypatch.setattr(evidence_part, 'gpu_busy', sample)
    run = evidence_run(tmp_path, monkeypatch, '--methods', 'an', 'grloss')
    with pytest.raises(RuntimeError, match='nvidia-smi hung'):
        evidence_part.part_evidence(run, {})
    assert len(launched) == 2 and stopped == launched


def test_the_pack_is_whole_while_runs_write_into_the_output(tmp_path):
    """Packing the output while the runs write into it (a json renamed
    over from its .tmp, a page rewritten shorter or longer) does not fail,
    leaves the .tmp files out and packs each json whole."""
    stage, back = tmp_path / 'stage', tmp_path / 'back'
    (stage / 'evidence').mkdir(parents=True)
    back.mkdir()
    write_json(str(stage / 'evidence' / 'seeds.json'), dict(runs=[]))
    writing = threading.Event()

    def write():
        i = 0
        while not writing.is_set():
            write_json(str(stage / 'evidence' / 'seeds.json'),
                       dict(runs=list(range(i % 3000))))
            (stage / 'evidence' / 'page.md').write_text('x' * (i % 50000))
            i += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        for _ in range(100):
            machine.pack(str(stage), str(back))
            with tarfile.open(back / machine.PACK) as tar:
                names = tar.getnames()
                seeds = json.load(tar.extractfile('evidence/seeds.json'))
            assert not any(n.endswith('.tmp') for n in names)
            assert seeds['runs'] == list(range(len(seeds['runs'])))
    finally:
        writing.set()
        writer.join()


def test_a_method_whose_compiled_run_fails_trains_eagerly(tmp_path,
                                                          monkeypatch):
    """A compiled run that fails runs again eagerly in the same command, and
    so do its method's later runs: the seed at the searched rate is then the
    rate search's eager run."""
    run, launched = fake_queue(
        tmp_path, monkeypatch,
        lambda cmd: any(o.startswith('compile') for o in cmd))
    # the rate search compiled (failed), again eagerly; the seed eagerly
    assert launched == [('an', True, True), ('an', True, False),
                        ('an', False, False)]
    evidence = run.manifest['parts']['evidence']
    assert [(r['rc'], r['compiled']) for r in evidence['finished']] == [
        (1, True), (0, False), (0, False)]
    assert evidence['status'] == 'done'


def test_a_method_with_eager_runs_stays_eager(tmp_path, monkeypatch):
    """Each method's runs train in one mode: AN's rate search ran eagerly
    (recorded before runs kept their options), so its seed does too, while
    GR's runs train compiled."""
    results = tmp_path / 'results'
    results.mkdir()
    (results / 'accuracy_proxy-voc_finetune-f0.01_lr_search.json'
     ).write_text(json.dumps({'an': {'0.001': dict(
         val_mAP=50., select_metric='spml/mAP', seconds=5.)}}))
    run, launched = fake_queue(tmp_path, monkeypatch, lambda cmd: False,
                               '--methods', 'an', 'grloss')
    assert launched == [('grloss', True, True), ('an', False, False),
                        ('grloss', False, True)]
    assert run.manifest['parts']['evidence']['eager_methods'] == ['an']


def gpu_run_sh(*argv):
    return subprocess.run(['bash', 'tools/gpu_run.sh', *map(str, argv)],
                          cwd=REPO, capture_output=True, text=True,
                          timeout=600,
                          env=dict(os.environ, PYTHON=PYTHON,
                                   PYTHONPATH=REPO))


@pytest.mark.slow
def test_the_stage_is_a_folder_the_command_wrote(tmp_path):
    """``--stage`` is emptied: one holding a file the command did not write
    is refused, naming it, and so is a stage equal to ``--out``; an earlier
    command's stage (marked) is emptied and used again."""
    stage, out = tmp_path / 'stage', tmp_path / 'out'
    stage.mkdir()
    (stage / 'notes.txt').write_text('mine')
    proc = gpu_run_sh('--device', 'cpu', '--parts', 'tier', '--budget', 5,
                      '--stage', stage, '--out', out)
    assert proc.returncode == 2
    assert (f'--stage {stage} holds files that tools/gpu_run.sh did not '
            'write (notes.txt)') in proc.stderr
    assert (stage / 'notes.txt').read_text() == 'mine'
    proc = gpu_run_sh('--device', 'cpu', '--parts', 'tier', '--budget', 5,
                      '--stage', stage, '--out', stage)
    assert proc.returncode == 2
    assert f'--stage {stage} and --out {stage} must be apart' in proc.stderr
    assert os.listdir(stage) == ['notes.txt']
    stage = tmp_path / 'new_stage'
    for _ in range(2):
        proc = gpu_run_sh('--device', 'cpu', '--parts', 'tier', '--budget',
                          5, '--stage', stage, '--out', out)
        assert proc.returncode == 0, proc.stderr[-3000:]
    assert sorted(os.listdir(stage)) == [harness.STAGE_MARK, 'manifest.json']


def test_folders_the_command_may_not_write(tmp_path):
    stage, out = tmp_path / 'stage', tmp_path / 'out'
    assert harness.folder_problem(str(stage), str(out)) is None  # new
    assert 'must be apart' in harness.folder_problem(str(out / 'stage'),
                                                     str(out))
    assert 'must be apart' in harness.folder_problem(str(stage),
                                                     str(stage / 'out'))
    stage.write_text('')
    assert 'is a file' in harness.folder_problem(str(stage), str(out))
    stage.unlink()
    stage.mkdir()
    (stage / harness.STAGE_MARK).write_text('')
    (stage / 'gpu_tier.json').write_text('{}')
    assert harness.folder_problem(str(stage), str(out)) is None
    out.mkdir()
    (out / 'manifest.json').write_text('{"run": 1}')
    assert harness.folder_problem(str(stage), str(out)) == (
        f'--out {out} holds a manifest.json that is not a tools/gpu_run.sh '
        'output; give another folder')
    (out / 'manifest.json').write_text('{"command": "bash tools/gpu_run.sh '
                                       '--out x"}')
    (out / machine.PACK).write_text('')
    assert harness.folder_problem(str(stage), str(out)) is None


@pytest.fixture(scope='module')
def cpu_output(tmp_path_factory):
    """What ``bash tools/gpu_run.sh --device cpu --parts tier`` returns: the
    GPU tier collected on a CPU, every test skipped."""
    tmp = tmp_path_factory.mktemp('cpu_run')
    proc = gpu_run_sh('--device', 'cpu', '--parts', 'tier', '--budget', 200,
                      '--gpu-tests', 'tests/gpu', '--out', tmp / 'out',
                      '--stage', tmp / 'stage', '--work', tmp / 'work')
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp / 'out'


def collect_in_copy(tmp_path, *argv):
    """``PYTHONPATH=.dev_scripts python -m benchmark.gpu_collect`` of a copy of
    the repository's tools whose docs/results holds the committed GPU tier: the
    call and the copy's results folder."""
    for name in ('tools', '.dev_scripts'):
        shutil.copytree(osp.join(REPO, name), tmp_path / name,
                        ignore=shutil.ignore_patterns('__pycache__'))
    results = tmp_path / 'docs' / 'results'
    results.mkdir(parents=True)
    for name in ('gpu_tier.json', 'gpu_tier.md', 'gpu_runs.json'):
        shutil.copy(osp.join(REPO, 'docs', 'results', name), results)
    proc = subprocess.run([PYTHON, '-m', 'benchmark.gpu_collect',
                           *map(str, argv)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(
                              tmp_path / '.dev_scripts')))
    return proc, results


@pytest.mark.slow
def test_a_cpu_run_does_not_replace_the_gpu_pages(cpu_output, tmp_path):
    """A command run without a GPU is refused for docs/results (whose pages
    are an H100's), saying where its results go; given another results
    folder, they go there."""
    proc, results = collect_in_copy(tmp_path, cpu_output)
    assert proc.returncode == 2
    assert ('a command run on CPU (--device cpu): its results do not go '
            "into docs/results, whose pages are a GPU's; give --results-dir "
            '(e.g. work_dirs/results)') in proc.stderr
    for name in ('gpu_tier.json', 'gpu_tier.md', 'gpu_runs.json'):
        with open(osp.join(REPO, 'docs', 'results', name)) as f:
            assert (results / name).read_text() == f.read()
    written = gpu_collect.main([str(cpu_output), '--results-dir',
                                str(tmp_path / 'elsewhere')])
    assert 'gpu_tier.md' in written
    assert 'on CPU' in (tmp_path / 'elsewhere' / 'gpu_tier.md').read_text()


@pytest.mark.slow
def test_a_truncated_pack_is_named(cpu_output, tmp_path):
    out = tmp_path / 'out'
    shutil.copytree(cpu_output, out)
    pack = out / machine.PACK
    pack.write_bytes(pack.read_bytes()[:pack.stat().st_size // 2])
    proc, results = collect_in_copy(tmp_path, out, '--results-dir',
                                    tmp_path / 'elsewhere')
    assert proc.returncode == 2
    assert f'{pack} does not unpack (' in proc.stderr
    assert 'a truncated or damaged copy' in proc.stderr
    assert 'Traceback' not in proc.stderr
    assert not (tmp_path / 'elsewhere').exists()


def test_the_project_refers_to_no_file_outside_it():
    # the patterns split, so that this file does not match them
    found = subprocess.run(
        ['git', 'grep', '-n', '-e', '\\.\\./' + 'shared', '-e',
         'shared/' + 'gpu'], cwd=REPO, capture_output=True, text=True)
    assert (found.returncode, found.stdout) == (1, '')  # 1: none found


@pytest.mark.slow
def test_without_the_openmmlab_stack_the_wheels_script_is_named(tmp_path):
    """A checkout without .whl/ on a machine without mmengine: the command
    names the project's script that fills .whl/."""
    (tmp_path / 'tools').mkdir()
    shutil.copy(osp.join(REPO, 'tools', 'gpu_run.sh'), tmp_path / 'tools')
    proc = subprocess.run(['bash', 'tools/gpu_run.sh', '--out', 'out'],
                          cwd=tmp_path, capture_output=True, text=True,
                          env=dict(os.environ, PYTHON='false'), timeout=60)
    assert proc.returncode == 1
    assert 'bash tools/pack_wheels.sh' in proc.stderr
    assert osp.isfile(osp.join(REPO, 'tools', 'pack_wheels.sh'))


def searched(**maps):
    """A rate-search json: method -> {rate: its best validation mAP}."""
    return {m: {lr: dict(val_mAP=v) for lr, v in runs.items()}
            for m, runs in maps.items()}


#: the committed full-size searches of AN and the full-label bound
COMMITTED = dict(an={'1e-05': 53.11, '0.0001': 83.73, '0.001': 84.75},
                 full={'1e-05': 58.08, '0.0001': 92.92, '0.001': 93.43})


def test_the_rate_ladder_steps_past_either_edge():
    assert [evidence_queue.ladder_step(r, True) for r in
            ('0.001', '0.003', '0.01', '1e-05')] == [
                '0.003', '0.01', '0.03', '3e-05']
    assert [evidence_queue.ladder_step(r, False) for r in
            ('1e-05', '3e-06', '0.0001', '0.003')] == [
                '3e-06', '1e-06', '3e-05', '0.001']


def test_a_search_whose_best_is_at_an_edge_goes_a_step_past_it():
    """AN's best, 1e-3, is the top of its grid: 3e-3 is searched before its
    seeds; a better 3e-3 is at the edge again (1e-2), up to PAST_EDGE steps
    beyond the grid; a 3e-3 that does not improve makes 1e-3 interior."""
    todo = evidence_queue.search_todo
    found = searched(**COMMITTED)
    assert todo('an', found) == todo('full', found) == ['0.003']
    found['an']['0.003'] = dict(val_mAP=84.)  # no better: 1e-3 interior
    assert todo('an', found) == []
    found['an']['0.003'] = dict(val_mAP=85.5)  # better: the edge again
    assert todo('an', found) == ['0.01']
    found['an']['0.01'] = dict(val_mAP=86.)  # 2 steps past: no third
    assert evidence_queue.PAST_EDGE == 2 and todo('an', found) == []
    # the bottom edge: a step below it
    assert todo('grloss', searched(grloss={'1e-05': 70., '0.0001': 60.,
                                   '0.001': 50.})) == ['3e-06']
    # --tiny: its one rate, no step past it
    assert todo('an', searched(an={'0.001': 50.}), tiny=True) == []
    assert todo('an', {}, tiny=True) == ['0.001']


def test_a_grid_rate_far_below_in_the_committed_searches_is_left_out():
    """1e-5 lost more than FAR (10) points for AN (31.64) and the full-label
    bound (35.35): the Adam methods' searches leave it out; the SGD methods
    (another grid) keep their whole grid."""
    found = searched(**COMMITTED)
    assert evidence_queue.FAR == 10.
    assert evidence_queue.search_todo('grloss', found) == ['0.0001', '0.001']
    assert evidence_queue.search_todo('opml', found) == [
        '0.0001', '0.001', '0.01']
    # one search where it is 9.43 points below keeps it in the grid
    found['full']['1e-05'] = dict(val_mAP=84.)
    assert evidence_queue.search_todo('grloss', found) == [
        '1e-05', '0.0001', '0.001']
    # a step past the edge that the other searches found far below is not
    # taken: AN's 1e-3 is then its search's chosen rate
    found = searched(an=COMMITTED['an'], em={'0.0001': 80., '0.001': 82.,
                                             '0.003': 60.})
    assert evidence_queue.search_todo('an', found) == []


def test_the_queue_order_the_edge_and_the_teacher():
    """The papers' methods' searches, then their seeds seed-major once a
    search is complete; the model teacher once the full-label bound's
    search is, and VLPL's runs only once its score file exists."""
    queue = evidence_queue.evidence_queue
    found = searched(**COMMITTED)
    methods = ['an', 'full', 'grloss', 'vlpl']
    assert queue(methods, found, {}, (0, 1), False, False) == [
        ('lr', 'an', '0.003'), ('lr', 'full', '0.003'),
        ('lr', 'grloss', '0.0001'), ('lr', 'grloss', '0.001')]
    # AN's 3e-3 did not improve, the full bound's did and is interior now
    # that 1e-2 fell; GR's search is complete
    found['an']['0.003'] = dict(val_mAP=84.)
    found['full'].update({'0.003': dict(val_mAP=94.),
                          '0.01': dict(val_mAP=90.)})
    found['grloss'] = {'0.0001': dict(val_mAP=85.), '0.001': dict(val_mAP=86.)}
    seeds = {'an': {'0': {}}}
    assert queue(methods, found, seeds, (0, 1), False, False) == [
        ('lr', 'grloss', '0.003'), ('seed', 'full', 0), ('seed', 'an', 1),
        ('seed', 'full', 1), ('teacher', 'full', 0)]
    assert queue(methods, found, seeds, (0, 1), False, True) == [
        ('lr', 'grloss', '0.003'), ('seed', 'full', 0), ('seed', 'an', 1),
        ('seed', 'full', 1), ('lr', 'vlpl', '0.0001'),
        ('lr', 'vlpl', '0.001')]
    # no teacher method asked for: no teacher
    assert ('teacher', 'full', 0) not in queue(methods[:3], found, seeds,
                                               (0, 1), False, False)


def test_the_teacher_methods_wait_for_a_fine_tuned_config(tmp_path,
                                                          monkeypatch):
    """Without a fine-tuned config VLPL stays out of the queue and the
    manifest names the config; with one (today), the model teacher trains at
    the full-label bound's searched rate once that search is complete, then
    VLPL trains on its score file, which comes back beside its record."""
    scores = tmp_path / 'data' / 'model_full_crops.npz'
    scores.parent.mkdir()
    monkeypatch.setattr(evidence_part, 'teacher_file',
                        lambda args: str(scores))
    assert evidence_part.has_config('vlpl') and \
        evidence_part.has_config('aevlp')
    monkeypatch.setattr(evidence_part, 'has_config',
                        lambda method: method != 'vlpl')
    run, launched = fake_queue(tmp_path, monkeypatch, lambda cmd: False,
                               '--methods', 'an', 'full', 'vlpl')
    assert run.manifest['parts']['evidence']['no_config'] == [
        'configs/vlpl/efficientnet-lite0_proxy-voc.py']
    assert [m for m, _, _ in launched] == ['an', 'full', 'an', 'full']

    monkeypatch.undo()
    monkeypatch.setattr(evidence_part, 'teacher_file',
                        lambda args: str(scores))
    # another machine's command: nothing of the first to carry forward
    machine = tmp_path / 'with_config'
    machine.mkdir()
    run, launched = fake_queue(machine, monkeypatch, lambda cmd: False,
                               '--methods', 'an', 'full', 'vlpl')
    assert [(m, lr) for m, lr, _ in launched] == [
        ('an', True), ('full', True), ('an', False), ('full', False),
        ('teacher', False), ('vlpl', True), ('vlpl', False)]
    evidence = machine / 'stage' / 'evidence'
    name = 'accuracy_proxy-voc_finetune-f0.01'
    teacher = read(evidence / f'{name}_teacher.json')['command']
    assert 'optim_wrapper.optimizer.lr=0.001' in teacher
    assert teacher[teacher.index('--teacher-out') + 1] == str(scores)
    assert (evidence / f'{name}_teacher.npz').read_text() == \
        scores.read_text()
    vlpl = read(evidence / f'{name}.json')['vlpl']['0']['options']
    assert f'model.head.label_bank.score_file={scores}' in vlpl
    assert not any(o.startswith('model.head') for o in read(
        evidence / f'{name}.json')['an']['0']['options'])


@pytest.mark.slow
def test_the_model_teacher_as_the_queue_runs_it(tmp_path, monkeypatch):
    """The queue's model teacher at --tiny: the full-label model trained on
    a second proxy instance (generator seed 1, the main proxy's side) scores
    the proxy's training images whole and in 4 x 4 crops; its record names
    its training and its mAP on those images."""
    import numpy as np
    args = command.parse_args([
        '--device', 'cpu', '--tiny', '--out', str(tmp_path / 'back'),
        '--stage', str(tmp_path / 'stage'), '--work', str(tmp_path / 'work')])
    root = inputs.evidence_root(args)
    if not inputs.ready(root):
        subprocess.run(inputs.data_commands(args)[root], cwd=REPO,
                       check=True, capture_output=True)
    scores, record = tmp_path / 'scores.npz', tmp_path / 'teacher.json'
    monkeypatch.setattr(evidence_part, 'teacher_file',
                        lambda args: str(scores))
    proc = subprocess.run(
        evidence_part.teacher_command(args, str(record), 0.001), cwd=REPO,
        capture_output=True, text=True, timeout=900, env=dev_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = read(record)
    assert (found['config'], found['data_seed'], found['crop_grid']) == (
        'configs/an/efficientnet-lite0-full_proxy-voc.py', 1, 4)
    assert 'optim_wrapper.optimizer.lr=0.001' in found['options']
    assert 0 < found['mAP'] < 100 and 0 < found['own_test_mAP'] < 100
    with open(osp.join(REPO, root, 'statistics.json')) as f:
        train = json.load(f)['protocol']['train']  # the split's images
    with np.load(scores) as table:
        assert table['scores'].shape == (train, 20)
        assert table['crop_scores'].shape == (train, 16, 20)
    def made(root):
        with open(osp.join(REPO, root, 'statistics.json')) as f:
            return json.load(f)['arguments']

    # the main proxy's side: 32 px when this test made it, 128 px when the
    # accuracy tool's resume test made the same folder first
    teacher = made(osp.join('data', 'proxy-voc-seed1-f0.01'))
    assert (teacher['seed'], teacher['image_size']) == (
        1, made(root)['image_size'])
