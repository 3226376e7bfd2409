import json

import numpy as np
import pytest
import torch
from mmpretrain.datasets import MultiLabelDataset
from torch.utils.data import DataLoader

from spml_mm.datasets import SinglePositiveLabel


def chosen_labels(dataset, num_workers):
    loader = DataLoader(
        dataset,
        batch_size=4,
        num_workers=num_workers,
        collate_fn=lambda batch: batch)
    out = {}
    for batch in loader:
        for item in batch:
            out[item['sample_idx']] = (int(item['gt_label'][0]),
                                       item['gt_label_full'].tolist())
    return out


@pytest.fixture
def multilabel_dataset(tmp_path):
    rng = np.random.RandomState(0)
    data_list = [
        dict(img_path=f'{i}.jpg',
             gt_label=sorted(rng.choice(6, rng.randint(1, 5), False).tolist()))
        for i in range(24)
    ]
    ann = tmp_path / 'ann.json'
    ann.write_text(
        json.dumps(dict(metainfo=dict(classes=list('abcdef')),
                        data_list=data_list)))
    return MultiLabelDataset(
        str(ann), pipeline=[dict(type='SinglePositiveLabel', seed=5)])


def test_deterministic_across_workers_and_epochs(multilabel_dataset):
    single = chosen_labels(multilabel_dataset, 0)
    assert chosen_labels(multilabel_dataset, 2) == single
    assert chosen_labels(multilabel_dataset, 0) == single
    for idx, (label, full) in single.items():
        assert label in full
        assert full == multilabel_dataset.get_data_info(idx)['gt_label']
    # several positives: the choice varies over samples, not always the first
    multi = [(lab, full) for lab, full in single.values() if len(full) > 1]
    assert any(lab != full[0] for lab, full in multi)


def test_depends_on_seed_and_index():
    results = dict(gt_label=np.arange(8), sample_idx=3)
    picks = {
        int(SinglePositiveLabel(seed=s)(dict(results))['gt_label'][0])
        for s in range(20)
    }
    assert len(picks) > 1
    a = SinglePositiveLabel(seed=1)(dict(results))['gt_label']
    b = SinglePositiveLabel(seed=1)(dict(results))['gt_label']
    assert a.tolist() == b.tolist() and a.shape == (1, )
    expected = np.random.default_rng((1, 3)).integers(8)
    assert int(a[0]) == expected


def test_errors_name_the_sample():
    t = SinglePositiveLabel(num_classes=4)
    with pytest.raises(ValueError, match=r'x.jpg \(sample 2\).*outside'):
        t(dict(gt_label=[1, 4], sample_idx=2, img_path='x.jpg'))
    with pytest.raises(ValueError, match='no positive'):
        t(dict(gt_label=[], sample_idx=0))
    assert torch.is_tensor(torch.as_tensor(t(dict(gt_label=[3],
                                                  sample_idx=0))['gt_label']))
