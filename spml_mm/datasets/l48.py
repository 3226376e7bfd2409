"""L48 (the Merlin L48 spectrogram dataset, NeurIPS 2025, arXiv 2511.00252,
``cvl-umass/l48-benchmarking``) in the custom json layout.

L48's single positives are real: each recording (asset) was uploaded for
one target species, and its clips inherit that label; geographic priors and
the recordist's checklist add negatives; the clips' boxes give the labels the
test evaluates, partly unknown. :func:`convert_l48` writes ``train.json`` and
``test.json`` in MMPretrain's ``MultiLabelDataset`` format with
``gt_label_neg`` (the observation as released, no protocol draw), which
:class:`~spml_mm.datasets.SPMLMultiLabelDataset` reads
(docs/user_guides/datasets.md, "L48").

Fields read (from the release's README, "Dataset Organization"; the files
themselves were not at hand when this reader was written, so the container
shapes are assumptions: each json a list of records, a dict of records
keyed by id, or a dict holding one such list):

- ``assets.json``: ``id``, ``split`` (``train``/``test``),
  ``target_species_code``, ``possible_species_codes``,
  ``observed_species_codes``;
- ``clips.json``: ``id``, ``asset_id``, ``clip_order``, ``file_path``,
  ``present_species_codes``, ``absent_species_codes`` (every other species
  unknown);
- ``taxa.csv`` (optional): the class order, from its column
  ``species_code`` (else the sorted species codes found in the two files).
"""
import csv
import json
import os
import os.path as osp
from typing import Dict, List, Optional, Sequence

from .layout import require_path

L48_LAYOUT = """\
ROOT/                   (the L48 release)
  assets.json           recordings: id, split, target_species_code,
                        possible_species_codes, observed_species_codes
  clips.json            clips: id, asset_id, clip_order, file_path,
                        present_species_codes, absent_species_codes
  taxa.csv              (optional) species_code column: the class order
  images/<asset_id>/<clip_num>.jpg"""

#: How the training clips are observed (``--variant``): the asset's target
#: species as the one positive, with no negative (``target``, the single
#: positive), with the negatives of the geographic prior (``geo``: species
#: not in ``possible_species_codes``) or of the checklist (``checklist``:
#: not in ``observed_species_codes``); or each clip's own released
#: positives and negatives (``clip``).
L48_VARIANTS = ('target', 'geo', 'checklist', 'clip')


def _records(path: str, key: str) -> List[dict]:
    """The records of ``assets.json`` / ``clips.json``: a list, a dict of
    records keyed by id, or a dict holding the list under ``key``."""
    require_path(path, 'L48', L48_LAYOUT)
    with open(path) as f:
        data = json.load(f)
    if isinstance(data, dict):
        data = data.get(key, list(data.values()))
    if not isinstance(data, list) or not all(
            isinstance(r, dict) for r in data):
        raise ValueError(f'{path}: expected a list of records (dicts); see '
                         f'the layout:\n{L48_LAYOUT}')
    return data


def _field(record: dict, name: str, where: str):
    if name not in record:
        raise ValueError(f'{where} lacks `{name}` (has {sorted(record)})')
    return record[name]


def _classes(root: str, assets: List[dict], clips: List[dict]) -> List[str]:
    taxa = osp.join(root, 'taxa.csv')
    if osp.isfile(taxa):
        with open(taxa, newline='', encoding='utf-8') as f:
            reader = csv.DictReader(f)
            if 'species_code' in (reader.fieldnames or ()):
                return [row['species_code'] for row in reader]
    codes = set()
    for record in assets + clips:
        for name, value in record.items():
            if name.endswith('species_codes'):
                codes.update(value)
            elif name == 'target_species_code':
                codes.add(value)
    return sorted(codes)


def _image_path(root: str, file_path: str) -> str:
    """``file_path`` relative to ROOT (it may be given relative to ROOT or
    to ``ROOT/images``)."""
    if not osp.isfile(osp.join(root, file_path)) and osp.isfile(
            osp.join(root, 'images', file_path)):
        return osp.join('images', file_path)
    return file_path


def convert_l48(data_root: str,
                out_dir: str,
                variant: str = 'target',
                classes: Optional[Sequence[str]] = None) -> Dict:
    """Write the L48 release as ``train.json`` / ``test.json``.

    Training clips (their asset's ``split`` is ``train``) carry the
    ``variant``'s observation (:data:`L48_VARIANTS`); test clips their
    released ``present_species_codes`` as ``gt_label`` and
    ``absent_species_codes`` as ``gt_label_neg``, every other species
    unknown (evaluated by ``spml/mAP_annotated``). Clips are ordered by
    asset id and ``clip_order``. ``out_dir/images`` links to ``data_root``
    (``img_path`` is the clip's path relative to it).

    Returns:
        dict: ``classes`` and, per split, ``assets``, ``clips``, average
        observed ``positives`` and ``negatives`` per clip.
    """
    if variant not in L48_VARIANTS:
        raise ValueError(f'variant must be one of {L48_VARIANTS}, got '
                         f'{variant!r}')
    assets = _records(osp.join(data_root, 'assets.json'), 'assets')
    clips = _records(osp.join(data_root, 'clips.json'), 'clips')
    classes = list(classes or _classes(data_root, assets, clips))
    index = {code: k for k, code in enumerate(classes)}

    def indices(codes, where):
        unknown = [c for c in codes if c not in index]
        if unknown:
            raise ValueError(f'{where}: species {unknown[:5]} are not among '
                             f'the {len(classes)} classes')
        return sorted({index[c] for c in codes})

    by_id = {}
    for k, asset in enumerate(assets):
        where = f'assets.json[{k}]'
        split = _field(asset, 'split', where)
        if split not in ('train', 'test'):
            raise ValueError(f'{where}: split {split!r}; expected train or '
                             'test')
        by_id[_field(asset, 'id', where)] = asset
    everything = set(range(len(classes)))
    entries = dict(train=[], test=[])
    used = dict(train=set(), test=set())
    order = sorted(range(len(clips)), key=lambda k: (
        clips[k].get('asset_id', -1), clips[k].get('clip_order', k)))
    for k in order:
        clip, where = clips[k], f'clips.json[{k}]'
        asset = by_id.get(_field(clip, 'asset_id', where))
        if asset is None:
            raise ValueError(f'{where}: asset_id {clip["asset_id"]} is not '
                             'in assets.json')
        split = asset['split']
        present = indices(_field(clip, 'present_species_codes', where),
                          where)
        absent = indices(_field(clip, 'absent_species_codes', where), where)
        if split == 'train' and variant != 'clip':
            target = indices(
                [_field(asset, 'target_species_code', f'asset {asset["id"]}')],
                where)
            if variant == 'target':
                absent = []
            else:
                name = ('possible_species_codes' if variant == 'geo' else
                        'observed_species_codes')
                allowed = indices(_field(asset, name, f'asset {asset["id"]}'),
                                  where)
                absent = sorted(everything - set(allowed) - set(target))
            present = target
        entries[split].append(
            dict(img_path=_image_path(data_root,
                                      _field(clip, 'file_path', where)),
                 gt_label=present, gt_label_neg=absent))
        used[split].add(asset['id'])
    os.makedirs(out_dir, exist_ok=True)
    summary = dict(classes=len(classes), variant=variant)
    for split, items in entries.items():
        if not items:
            raise ValueError(f'L48: no clip of a {split} asset in '
                             f'{data_root}/clips.json')
        with open(osp.join(out_dir, f'{split}.json'), 'w') as f:
            json.dump(dict(metainfo=dict(classes=classes), data_list=items),
                      f)
        summary[split] = dict(
            assets=len(used[split]), clips=len(items),
            positives=sum(len(i['gt_label']) for i in items) / len(items),
            negatives=sum(len(i['gt_label_neg']) for i in items) / len(items))
    link = osp.join(out_dir, 'images')
    if not osp.lexists(link):
        os.symlink(osp.abspath(data_root), link)
    summary['link'] = f'{link} -> {osp.realpath(link)}'
    return summary


def format_l48_summary(summary: Dict) -> str:
    """The summary of :func:`convert_l48` as text."""
    lines = [f'l48: {summary["classes"]} classes, training clips observed '
             f'as `{summary["variant"]}`; images: {summary["link"]}']
    for split in ('train', 'test'):
        info = summary[split]
        lines.append(
            f'  {split}: {info["assets"]} assets, {info["clips"]} clips, '
            f'{info["positives"]:.2f} observed positives and '
            f'{info["negatives"]:.2f} observed negatives per clip')
    return '\n'.join(lines)
