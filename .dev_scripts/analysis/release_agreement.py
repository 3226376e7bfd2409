"""Check VLPL's and AEVLP's losses, AEVLP's DAMP pseudo-labels and IGNORE's
loss, CAM mask and running thresholds against the releases' own functions on
random inputs.

The releases (``mvrl/VLPL``, ``Fsoft-AIC/AEVLP``,
``gyeong-ryeol-song/SPML-IGNORE``) are not part of spml-mm: give a git
checkout or bare clone of each; the tool copies the files it imports
(``losses.py``; AEVLP's ``utils.py``; IGNORE's ``functions.py``) from the
commit to a temporary folder and imports them from there (IGNORE's threshold
updates are two lines of its ``train_resnet.py``, executed as written). A
release not given keeps its rows of the json already under ``--out``. It
writes ``release_agreement.{json,md}`` under ``--out`` (``docs/results`` for
the project's page).

Example:
    python .dev_scripts/analysis/release_agreement.py \
        --vlpl /path/to/VLPL --aevlp /path/to/AEVLP \
        --ignore /path/to/SPML-IGNORE --out docs/results
"""
import argparse
import contextlib
import importlib.util
import json
import os
import os.path as osp
import subprocess
import sys
import tempfile
from typing import Dict

if __name__ == '__main__' and not __package__:
    # run as a file, the analysis package is not on the path: run it as the
    # module it is, with the repository root and .dev_scripts on the path
    root = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
    path = [root, osp.join(root, '.dev_scripts')] + [
        p for p in [os.environ.get('PYTHONPATH')] if p]
    os.execve(sys.executable, [
        sys.executable, '-m', 'analysis.release_agreement',
        *sys.argv[1:]
    ], dict(os.environ, PYTHONPATH=os.pathsep.join(path)))

import torch  # noqa: E402

import spml_mm  # noqa: E402, F401
from spml_mm.models.label_banks import DAMPLabelBank  # noqa: E402
from spml_mm.models.classifiers import cam_mask, positive_cam  # noqa: E402
from spml_mm.models.losses import (GPRLoss, IGNORELoss, VLPLLoss,  # noqa: E402
                                   ignore_loss, ignore_rejection)
from benchmark.pages.release_agreement import write  # noqa: E402

#: (dataset, config) of the releases' settings the losses are compared at
VLPL_SETTINGS = {'voc': dict(alpha=0.2, beta_pos=0.7),
                 'cub': dict(alpha=0.01, beta_pos=0.7)}
AEVLP_SETTINGS = {
    'voc': dict(beta=(0., 2., -2., -2.), q3=1., lam=(0.7, 0.4), reg=0.05,
                k=1.5, classes=20),
    'cub': dict(beta=(0., 10., -2., -8.), q3=1.5, lam=(0.8, 0.2), reg=0.01,
                k=31.4, classes=312),
}
#: (logit scale, the releases' epsilon in -log(x + eps): None keeps theirs,
#: 1e-5 in VLPL and 1e-7 in AEVLP): moderate logits, the same without the
#: epsilon, and saturated logits (where the epsilon shows)
CASES = ((2., None), (2., 0.), (12., None))


@contextlib.contextmanager
def release_modules(repo: str, files, commit: str = 'HEAD'):
    """Import ``files`` (module names) of a release at ``commit`` from a
    temporary copy; yields {name: module}."""
    with tempfile.TemporaryDirectory() as tmp:
        for name in files:
            text = subprocess.run(
                ['git', '-C', repo, 'show', f'{commit}:{name}.py'],
                check=True, capture_output=True, text=True).stdout
            with open(osp.join(tmp, f'{name}.py'), 'w') as f:
                f.write(text)
        sys.path.insert(0, tmp)
        saved = {name: sys.modules.pop(name, None) for name in files}
        try:
            modules = {}
            for name in files:
                spec = importlib.util.spec_from_file_location(
                    name, osp.join(tmp, f'{name}.py'))
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module
                spec.loader.exec_module(module)
                modules[name] = module
            yield modules
        finally:
            sys.path.remove(tmp)
            for name, module in saved.items():
                sys.modules.pop(name, None)
                if module is not None:
                    sys.modules[name] = module


def case_name(name: str, scale: float, eps) -> str:
    return f'{name}, z ~ N(0, {scale:g}^2)' + (
        '' if eps is None else f", release's eps = {eps:g}")


def random_batch(batch: int, classes: int, scale: float, seed: int):
    """Logits (float64), single positives and pseudo-labels in {-1, 0, 1}
    (some on the observed positive)."""
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(batch, classes, generator=g, dtype=torch.float64)
    observed = torch.zeros(batch, classes, dtype=torch.float64)
    observed[torch.arange(batch),
             torch.randint(classes, (batch, ), generator=g)] = 1
    pseudo = torch.randint(-1, 2, (batch, classes), generator=g)
    return logits * scale, observed, pseudo


def differences(ours, theirs) -> Dict[str, float]:
    """Largest absolute and relative differences of the values and of the
    gradients."""
    (v1, g1), (v2, g2) = ours, theirs
    return dict(
        value_abs=float((v1 - v2).abs()),
        value_rel=float((v1 - v2).abs() / v2.abs()),
        grad_abs=float((g1 - g2).abs().max()),
        grad_rel=float(((g1 - g2).abs().max() / g2.abs().max())))


def value_and_grad(fn, logits):
    z = logits.clone().requires_grad_()
    value = fn(z)
    value.backward()
    return value.detach(), z.grad


def epsilon_cases(release):
    """Each (logit scale, epsilon) of :data:`CASES`, with the release's
    epsilon set to it (None: its own) until the next."""
    epsilon = release.LOG_EPSILON
    for scale, eps in CASES:
        if eps is not None:
            release.LOG_EPSILON = eps
        yield scale, eps
        release.LOG_EPSILON = epsilon


def compare_vlpl(repo: str, seeds=range(3)) -> dict:
    """VLPL's loss_EM_PL (through compute_batch_loss, the release's mean
    over B x C) against :class:`VLPLLoss`, negative pseudo-labels included
    (the release has no term for them; ours weighs them beta_neg = 0)."""
    rows = {}
    with release_modules(repo, ['losses']) as mods:
        release = mods['losses']
        for name, setting in VLPL_SETTINGS.items():
            for scale, eps in epsilon_cases(release):
                worst = {}
                for seed in seeds:
                    logits, observed, pseudo = random_batch(
                        8, 20, scale, seed)

                    def theirs(z):
                        batch = dict(
                            preds=torch.sigmoid(z), label_vec_obs=observed,
                            label_vec_true=observed, logits_pl=pseudo.to(
                                z.dtype), similarity=None)
                        P = dict(loss='EM_PL', epoch=1, warmup_epoch=0,
                                 alpha=setting['alpha'],
                                 beta_pos=setting['beta_pos'])
                        return release.compute_batch_loss(
                            batch, P, dict(device='cpu'))['loss_tensor']

                    loss = VLPLLoss(
                        alpha=setting['alpha'],
                        pseudo_positive_weight=setting['beta_pos'])
                    worst = worse(worst, loss, theirs, logits, observed,
                                  pseudo)
                rows[case_name(name, scale, eps)] = worst
    return rows


def worse(worst: dict, loss, theirs, logits, observed, pseudo) -> dict:
    """``worst`` with each difference of ``loss`` (ours, on the bank's
    int8 pseudo-labels) and the release's ``theirs`` on one batch kept where
    it is larger."""
    d = differences(
        value_and_grad(
            lambda z: loss(z, observed, pseudo.to(torch.int8)), logits),
        value_and_grad(theirs, logits))
    return {k: max(v, worst.get(k, 0.)) for k, v in d.items()}


def compare_gpr(repo: str, seeds=range(3)) -> dict:
    """AEVLP's GPR_loss against :class:`GPRLoss` at the epochs of an 8-epoch
    run, K and V computed as the release's train.py does."""
    rows = {}
    with release_modules(repo, ['utils', 'losses']) as mods:
        release = mods['losses']
        for name, s in AEVLP_SETTINGS.items():
            w0, wT, b0, bT = s['beta']
            for scale, eps in epsilon_cases(release):
                worst = {}
                for seed in seeds:
                    logits, observed, pseudo = random_batch(
                        8, s['classes'], scale, seed)
                    epoch, T = 3 + seed, 8  # 1-based, as train.py
                    w = w0 + (wT - w0) * (epoch - 1) / T
                    b = b0 + (bT - b0) * (epoch - 1) / T
                    mu = 0.5 + (0.8 - 0.5) * epoch / T
                    sigma = 2. + (0.5 - 2.) * epoch / T

                    def theirs(z):
                        p = torch.sigmoid(z).detach()
                        K = 1 / (1 + torch.exp(-(w * p + b)))
                        V = torch.exp(-0.5 * ((p - mu) / sigma)**2)
                        P = dict(use_pl=True, lam_1=s['lam'][0],
                                 lam_2=s['lam'][1], rho=0.9, reg=s['reg'],
                                 expected_num_pos=s['k'],
                                 num_classes=s['classes'])
                        return release.GPR_loss(z, pseudo.to(z.dtype),
                                                observed, K, V,
                                                (0.01, s['q3']), epoch, P)

                    loss = GPRLoss(
                        w=(w0, wT), b=(b0, bT), q3=s['q3'],
                        pseudo_weight_range=s['lam'][::-1],
                        reg_weight=s['reg'], expected_positives=s['k'])
                    loss.set_epoch(epoch - 1, T)
                    worst = worse(worst, loss, theirs, logits, observed,
                                  pseudo)
                rows[case_name(name, scale, eps)] = worst
    return rows


def compare_damp(repo: str, seeds=range(5)) -> dict:
    """AEVLP's get_pseudo_labels (utils.py) against
    :class:`DAMPLabelBank` on random CLIP similarities of whole images and
    crops: the share of entries whose positive pseudo-label differs."""
    rows = {}
    settings = {
        'voc': dict(classes=20, grid=4, temp=0.01, eta=0., tau=0.5, k=3,
                    ratio=0.2),
        'coco': dict(classes=80, grid=4, temp=0.01, eta=0.3, tau=0.5, k=3,
                     ratio=0.3),
        'cub': dict(classes=312, grid=5, temp=0.1, eta=0.005, tau=0.005,
                    k=32, ratio=0.2),
    }
    with release_modules(repo, ['utils']) as mods:
        release = mods['utils']
        for name, s in settings.items():
            differ, total, positives = 0, 0, 0
            for seed in seeds:
                g = torch.Generator().manual_seed(seed)
                B, C, K = 16, s['classes'], s['grid']**2
                sims = 0.2 + 0.05 * torch.randn(B * (K + 1), C, generator=g)
                observed = torch.zeros(B, C)
                observed[torch.arange(B),
                         torch.randint(C, (B, ), generator=g)] = 1
                P = dict(grid_size=s['grid'], temp=s['temp'], eta=s['eta'],
                         num_classes=C, device='cpu', top_k=s['k'],
                         threshold=s['tau'], negative_ratio=s['ratio'])
                _, theirs = release.get_pseudo_labels(
                    sims, None, torch.zeros(B, C), observed, P)
                soft = torch.softmax(sims / s['temp'], dim=-1)
                # crop j of every image follows the B whole images
                crops = soft[B:].view(K, B, C).transpose(0, 1)
                bank = DAMPLabelBank(C, 'release.npz', eta=s['eta'],
                                     threshold=s['tau'], top_k=s['k'],
                                     negative_fraction=s['ratio'],
                                     num_samples=B)
                bank.teacher_score.copy_(soft[:B])
                bank.crop_max.copy_(crops.amax(1))
                bank.crop_min.copy_(crops.amin(1))
                bank.crop_mean.copy_(crops.mean(1))
                ours = bank.entries(torch.arange(B), observed)['pseudo_label']
                differ += int((ours != theirs).sum())
                total += B * C
                positives += int((theirs == 1).sum())
            rows[name] = dict(entries=total, release_positives=positives,
                              differing=differ)
    return rows


#: IGNORE's settings: the release README's VOC run and the parser's
#: defaults elsewhere (spbc, ignore and reg weights), at 20 and 80 classes
IGNORE_SETTINGS = {
    'voc': dict(spbc_weight=0.1, ignore_weight=1., reg_weight=0.5,
                classes=20),
    'coco': dict(spbc_weight=0.5, ignore_weight=1., reg_weight=0.5,
                 classes=80),
}
IGNORE_FLAGS = dict(warm_up=3, cam_threshold=0.8, gap_lambda=0.999,
                    avg_lambda=0.999, lat=True, strong_aug=True,
                    ignore=True, spbc=True, reg=True)


def ignore_args(setting: dict, **changes):
    """The release's ``args`` namespace for ``ignore_loss``."""
    return argparse.Namespace(
        **dict(IGNORE_FLAGS, spbc_weight=setting['spbc_weight'],
               ignore_weight=setting['ignore_weight'],
               reg_weight=setting['reg_weight'],
               num_classes=setting['classes']), **changes)


def ignore_batch(classes: int, scale: float, seed: int):
    """Logits of the image, its masked copy and strong view (float64) and
    single positives."""
    logits, observed, _ = random_batch(16, classes, scale, seed)
    g = torch.Generator().manual_seed(1000 + seed)
    strong = logits + torch.randn(logits.shape, generator=g,
                                  dtype=torch.float64)
    masked = logits - 3 * torch.rand(logits.shape, generator=g,
                                     dtype=torch.float64)
    return logits, masked, strong, observed


def compare_ignore_loss(repo: str, seeds=range(3)) -> dict:
    """IGNORE's ``ignore_loss`` against :func:`ignore_loss` with
    :func:`ignore_rejection` at the same thresholds, in the warm-up (epoch 1)
    and rejecting (epoch 5), gradients with respect to the image's and the
    strong view's logits together."""
    rows = {}
    with release_modules(repo, ['losses']) as mods:
        release = mods['losses']
        for name, setting in IGNORE_SETTINGS.items():
            for epoch in (1, 5):
                for scale, eps in epsilon_cases(release):
                    worst = {}
                    for seed in seeds:
                        z, zm, zs, s = ignore_batch(setting['classes'],
                                                    scale, seed)
                        gap_thr = (z - zm).abs()[s == 1].mean() * 0.8
                        avg_thr = z.mean(0, keepdim=True)
                        args = ignore_args(setting)

                        def theirs(z, zs):
                            return release.ignore_loss(
                                z, zm, zs, s, args, gap_thr, avg_thr, epoch)

                        def ours(z, zs):
                            reject = ignore_rejection(
                                z, zm, s, gap_thr, avg_thr[0]) \
                                if epoch > 3 else torch.zeros_like(z)
                            return ignore_loss(
                                z, zs, s, reject, setting['spbc_weight'],
                                setting['ignore_weight'],
                                setting['reg_weight'])

                        d = differences(two_grads(ours, z, zs),
                                        two_grads(theirs, z, zs))
                        worst = {k: max(v, worst.get(k, 0.))
                                 for k, v in d.items()}
                    phase = 'warm-up' if epoch <= 3 else 'rejecting'
                    rows[case_name(f'{name}, {phase}', scale, eps)] = worst
    return rows


def two_grads(fn, z, zs):
    """The value of ``fn(z, zs)`` and its gradient with respect to both,
    concatenated."""
    z, zs = z.clone().requires_grad_(), zs.clone().requires_grad_()
    value = fn(z, zs)
    value.backward()
    return value.detach(), torch.cat([z.grad, zs.grad])


def compare_ignore_mask(repo: str, seeds=range(5)) -> dict:
    """IGNORE's ``generate_resnet_cam_and_mask`` on the 1x1 convolution of a
    feature map (the release's ResNet_1x1 CAM) against
    :func:`positive_cam` and :func:`cam_mask` on the same map and weights:
    the masked images' pixels that differ."""
    rows = {}
    with release_modules(repo, ['functions']) as mods:
        release = mods['functions']
        for name, (classes, dim, side, size) in {
                'voc, 14 x 14 map, 448 px': (20, 64, 14, 448),
                'coco, 14 x 14 map, 448 px': (80, 64, 14, 448),
                'demo, 6 x 6 map, 48 px': (10, 32, 6, 48)}.items():
            differ = total = kept = 0
            for seed in seeds:
                g = torch.Generator().manual_seed(seed)
                B = 16
                fmap = torch.randn(B, dim, side, side, generator=g,
                                   dtype=torch.float64).relu()
                weight = torch.randn(classes, dim, generator=g,
                                     dtype=torch.float64) / dim**0.5
                bias = torch.randn(classes, generator=g,
                                   dtype=torch.float64) * 0.1
                image = torch.randn(B, 3, size, size, generator=g,
                                    dtype=torch.float64)
                _, observed, _ = random_batch(B, classes, 1., seed)
                cam_w = torch.nn.functional.conv2d(
                    fmap, weight[:, :, None, None], bias)
                args = argparse.Namespace(cam_threshold=0.8)
                theirs = release.generate_resnet_cam_and_mask(
                    image, cam_w, observed, args, 'cpu')
                mask = cam_mask(positive_cam(fmap, weight, bias, observed),
                                observed, (size, size), 0.8)
                ours = image * mask
                differ += int((ours != theirs).sum())
                total += ours.numel()
                kept += int(mask.sum()) * 3
            rows[name] = dict(pixels=total, release_kept=kept,
                              differing=differ)
    return rows


def release_threshold_update(repo: str, commit: str = 'HEAD'):
    """The release's two threshold updates (``train_resnet.py``), as
    written, as a function of (args, Gap_threshold, Avg_threshold, gap,
    label_vec_obs, logits_cp, batch)."""
    text = subprocess.run(
        ['git', '-C', repo, 'show', f'{commit}:train_resnet.py'],
        check=True, capture_output=True, text=True).stdout
    # the updates, not the initialisations: the lines that read the
    # thresholds they assign
    lines = [line.strip() for line in text.splitlines()
             if line.strip().startswith(('Gap_threshold = args.',
                                         'Avg_threshold = args.'))]
    if len(lines) != 2:
        raise RuntimeError(f'train_resnet.py: expected the two threshold '
                           f'updates, found {lines}')
    code = compile('\n'.join(lines), 'train_resnet.py', 'exec')

    def update(namespace: dict) -> dict:
        exec(code, {'torch': torch}, namespace)
        return namespace

    return update, lines


def compare_ignore_steps(repo: str, steps: int = 20) -> dict:
    """Twenty steps of the release's threshold updates and ``ignore_loss``
    against :class:`IGNORELoss` (updates, then the loss), with the epoch
    crossing the warm-up: the largest differences of the thresholds, the
    loss and its gradient over the steps, and the rejected entries."""
    update, _ = release_threshold_update(repo)
    rows = {}
    with release_modules(repo, ['losses']) as mods:
        release = mods['losses']
        for name, setting in IGNORE_SETTINGS.items():
            C = setting['classes']
            args = ignore_args(setting)
            loss = IGNORELoss(
                num_classes=C, spbc_weight=setting['spbc_weight'],
                ignore_weight=setting['ignore_weight'],
                reg_weight=setting['reg_weight'], gap_lambda=0.9,
                avg_lambda=0.9).double()
            args.gap_lambda = args.avg_lambda = 0.9  # visible in 20 steps
            state = dict(args=args, Gap_threshold=0,
                         Avg_threshold=torch.zeros(1, C,
                                                   dtype=torch.float64))
            worst = dict(gap_threshold_abs=0., avg_threshold_abs=0.,
                         value_abs=0., grad_abs=0.)
            rejected = differing = 0
            for step in range(steps):
                epoch = 1 + step // 4  # 1-based: epochs 4 and 5 reject
                z, zm, zs, s = ignore_batch(C, 2., 100 + step)
                state.update(gap=(z - zm).abs(), label_vec_obs=s,
                             logits_cp=z.clone(),
                             batch=dict(label_vec_obs=s))
                update(state)
                loss.set_epoch(epoch - 1, 5)
                ours = two_grads(
                    lambda a, b: loss(a, s, mask_logits=zm, strong_logits=b),
                    z, zs)
                theirs = two_grads(
                    lambda a, b: release.ignore_loss(
                        a, zm, b, s, args, state['Gap_threshold'],
                        state['Avg_threshold'], epoch), z, zs)
                d = differences(ours, theirs)
                worst['value_abs'] = max(worst['value_abs'], d['value_abs'])
                worst['grad_abs'] = max(worst['grad_abs'], d['grad_abs'])
                worst['gap_threshold_abs'] = max(
                    worst['gap_threshold_abs'],
                    float((loss.gap_threshold -
                           state['Gap_threshold']).abs()))
                worst['avg_threshold_abs'] = max(
                    worst['avg_threshold_abs'],
                    float((loss.avg_threshold -
                           state['Avg_threshold'][0]).abs().max()))
                if epoch > 3:
                    ours_reject = ignore_rejection(
                        z, zm, s, loss.gap_threshold, loss.avg_threshold)
                    their_pseudo = ((state['gap'] > state['Gap_threshold'])
                                    & (z > state['Avg_threshold'])).double()
                    their_reject = (their_pseudo - s).clip(0, 1)
                    rejected += int(their_reject.sum())
                    differing += int((ours_reject != their_reject).sum())
            rows[f'{name}, {steps} steps, lambda 0.9'] = dict(
                worst, release_rejected=rejected, rejected_differing=differing)
    return rows


def compare_ignore(repo: str, seeds=range(3)) -> dict:
    return dict(loss=compare_ignore_loss(repo, seeds),
                mask=compare_ignore_mask(repo),
                steps=compare_ignore_steps(repo))


#: the releases: (option, repository name, the json keys of its rows)
RELEASES = (('vlpl', 'mvrl/VLPL', ('vlpl', )),
            ('aevlp', 'Fsoft-AIC/AEVLP', ('gpr', 'damp')),
            ('ignore', 'gyeong-ryeol-song/SPML-IGNORE', ('ignore', )))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--vlpl', help='VLPL git repository')
    parser.add_argument('--aevlp', help='AEVLP git repository')
    parser.add_argument('--ignore', help='SPML-IGNORE git repository')
    parser.add_argument('--out', default='work_dirs/release_agreement')
    args = parser.parse_args()
    previous = osp.join(args.out, 'release_agreement.json')
    results = dict(commits={})
    if osp.isfile(previous):
        with open(previous) as f:
            results = json.load(f)
    for option, name, keys in RELEASES:
        repo = getattr(args, option)
        if repo is None:
            if not all(k in results for k in keys):
                parser.error(f'--{option} is needed: {previous} has no rows '
                             f'of {name}')
            continue
        results['commits'][name] = subprocess.run(
            ['git', '-C', repo, 'rev-parse', 'HEAD'], check=True,
            capture_output=True, text=True).stdout.strip()
        if option == 'vlpl':
            results['vlpl'] = compare_vlpl(repo)
        elif option == 'aevlp':
            results['gpr'] = compare_gpr(repo)
            results['damp'] = compare_damp(repo)
        else:
            results['ignore'] = compare_ignore(repo)
    command = ('python .dev_scripts/analysis/release_agreement.py --vlpl VLPL '
               f'--aevlp AEVLP --ignore SPML-IGNORE --out {args.out}')
    write(results, args.out, command)
    print(json.dumps(results, indent=1))


if __name__ == '__main__':
    main()
