"""How well a model separates the unobserved positives of its training set.

The papers' distinguishability figures: the model scores every training
image (test-time pipeline); among the labels it trained on as unobserved,
the true positives (``gt_label_full``, kept for diagnostics) and the true
negatives get one histogram of predicted probabilities each, and the
Wasserstein distance between the two distributions measures how far apart
they are (larger: better separated). An AN model pushes both towards 0.

Each SOURCE is a work dir of ``tools/train.py`` or a checkpoint; several
sources give one panel each (e.g. AN beside GR).

Example:
    export PYTHONPATH=.dev_scripts   # from the repository root
    python -m analysis.distinguishability work_dirs/an work_dirs/gr \\
        --names AN GR --out distinguishability.png
"""
import argparse
import os.path as osp
from typing import Dict, List

import numpy as np
from scipy.stats import wasserstein_distance

from analysis.loading import predictions


def separate(scores: np.ndarray, labels: np.ndarray,
             observed: np.ndarray) -> Dict[str, np.ndarray]:
    """Probabilities of the unobserved true positives and true negatives,
    and the Wasserstein distance between them."""
    unobserved = observed == 0
    positives = scores[unobserved & (labels == 1)]
    negatives = scores[unobserved & (labels == 0)]
    if not len(positives) or not len(negatives):
        raise ValueError(
            f'the training set has {len(positives)} unobserved true '
            f'positives and {len(negatives)} true negatives; both are needed'
            ' (a model trained on full labels has no unobserved positive)')
    return dict(
        positives=positives,
        negatives=negatives,
        distance=wasserstein_distance(positives, negatives))


def plot(parts: List[Dict[str, np.ndarray]], names: List[str], out: str,
         bins: int) -> None:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(
        1, len(parts), figsize=(4.5 * len(parts), 3.5), squeeze=False)
    edges = np.linspace(0, 1, bins + 1)
    for ax, part, name in zip(axes[0], parts, names):
        ax.hist(part['negatives'], edges, density=True, alpha=0.6,
                color='#999',
                label=f'true negatives ({len(part["negatives"]):,})')
        ax.hist(part['positives'], edges, density=True, alpha=0.6,
                color='#3a7',
                label=f'unobserved positives ({len(part["positives"]):,})')
        ax.set_yscale('log')
        ax.set_xlabel('predicted probability (training set)')
        ax.set_title(f'{name}: Wasserstein distance '
                     f'{part["distance"]:.3f}')
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel('density')
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('sources', nargs='+',
                        help='work dirs or checkpoints')
    parser.add_argument('--configs', nargs='+',
                        help='one config per source (default: the work '
                        "dir's, or the one stored in the checkpoint)")
    parser.add_argument('--names', nargs='+')
    parser.add_argument('--bins', type=int, default=50)
    parser.add_argument('--out', default='distinguishability.png')
    args = parser.parse_args(argv)
    names = args.names or [osp.basename(osp.normpath(s))
                           for s in args.sources]
    configs = args.configs or [None] * len(args.sources)
    if not len(names) == len(configs) == len(args.sources):
        parser.error('give one name and one config per source')
    parts = []
    for source, config, name in zip(args.sources, configs, names):
        train = predictions(source, 'train', config)
        part = separate(train['scores'], train['labels'], train['observed'])
        parts.append(part)
        print(f'{name}: Wasserstein distance {part["distance"]:.4f} between '
              f'{len(part["positives"]):,} unobserved true positives (mean '
              f'p {part["positives"].mean():.3f}) and '
              f'{len(part["negatives"]):,} true negatives (mean p '
              f'{part["negatives"].mean():.3f})')
    plot(parts, names, args.out, args.bins)
    print(f'wrote {args.out}')
    return parts


if __name__ == '__main__':
    main()
