"""Bad data (group ``data``): the faults ``tools/check_dataset.py`` reports
with file and row, a JSON annotation of the wrong type, a head of another
class count."""
import json
import os
import os.path as osp
import shutil

import numpy as np

from spml_mm.datasets import split_train_val
from benchmark.faults.harness import (CONFIG, error_line, refusal,
                                      stopped_with)


def scenarios(bench):
    root = osp.join(bench.tmp, 'bad_demo')
    shutil.copytree(bench.data, root)
    images = np.load(osp.join(root, 'formatted_train_images.npy'))
    labels = np.load(osp.join(root, 'formatted_train_labels.npy'))
    train_idx = split_train_val(len(labels), 0.2, 1200)[0]
    several = next(i for i in train_idx if labels[i].sum() >= 2)
    rows = [several] + [i for i in train_idx if i != several][:7]
    observed = np.zeros_like(labels)
    observed[np.arange(len(labels)), labels.argmax(1)] = 1
    observed[rows[0]] = labels[rows[0]]  # several positives
    observed[rows[1]] = 0  # none
    observed[rows[2]] = 0
    observed[rows[2], np.flatnonzero(labels[rows[2]] == 0)[0]] = 1
    observed[rows[3], 0] = 5
    labels[rows[4], 0] = 2
    np.save(osp.join(root, 'formatted_train_labels.npy'), labels)
    np.save(osp.join(root, 'formatted_train_labels_obs.npy'), observed)
    os.remove(osp.join(root, images[rows[5]]))
    open(osp.join(root, images[rows[6]]), 'wb').close()
    with open(osp.join(root, images[rows[7]]), 'wb') as f:
        f.write(b'not an image')
    rc, log = bench.run(['tools/check_dataset.py', CONFIG, '--decode'] +
                        bench.options(data=root)[:1] + bench.options(
                            data=root)[2:])
    cases = [
        ('image file missing', 'image file missing'),
        ('0-byte image', 'image file is empty (0 bytes)'),
        ('corrupt image (--decode)', 'image cannot be decoded'),
        ('label value 2', 'they must be 0/1'),
        ('observed label value 5', 'they must be -1/0/1'),
        ('two observed positives', 'observed positives'),
        ('no observed positive', 'no observed positive'),
        ('observed positive on a negative class', 'is observed +1 but'),
    ]
    for name, expect in cases:
        line = error_line(log, expect)
        yield lambda n=name, ln=line: (
            f'{n}: tools/check_dataset.py', 'reported: ' + (
                ln.split('): ', 1)[-1][:70] + ' (with file and row)'
                if ln else 'NOT REPORTED'), refusal(rc, ln))
    path = osp.join(bench.tmp, 'bad.json')
    with open(path, 'w') as f:
        json.dump(dict(metainfo=dict(classes=['a']),
                       data_list=[dict(img_path='a.jpg', gt_label=[0]), 7]),
                  f)
    from spml_mm.datasets import load_multilabel_annotations
    try:
        load_multilabel_annotations(path)
        message, result = 'accepted', 'silent wrong answer'
    except ValueError as err:
        message, result = str(err).splitlines()[-1].strip(), 'clear error'
    except TypeError as err:
        message, result = f'TypeError: {err}', 'crash'
    yield lambda: ('JSON data_list entry that is an int',
                   f'refused: {message.replace(bench.tmp, "")[:80]}',
                   result)
    line, result, _ = stopped_with(
        bench, 'heads', ['--cfg-options', 'model.head.num_classes=7'],
        'ValueError: model.head.num_classes=7')
    yield lambda: ('head num_classes=7, dataset 10 classes',
                   f'refused: {line[:90]}', result)
