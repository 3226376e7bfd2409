"""The data-loading page (``benchmark.data_loading``): seconds a
batch decoding the image files against the image cache."""
from typing import List


def title_lines(record: dict, rounds: int, batches: int) -> List[str]:
    """The page's title and what its table measured."""
    return [
        '# Data loading: image files against the image cache', '',
        f'`{record["command"]}` on {record["machine"]}: seconds a batch of '
        'the config\'s loaders in one process and thread, as a loader '
        f'worker runs (median of {rounds} rounds of {batches} batches), '
        'decoding the files and from the image cache (`LoadCachedImage`).',
        ''
    ]


def table_lines(rows: dict) -> List[str]:
    """The table of ``data_loading.json``'s ``rows``."""
    return [
        '| loader | batch | decoding files (ms) | image cache (ms) | '
        'speed-up |', '| --- | --- | --- | --- | --- |'
    ] + [
        f'| {name} | {row["batch_size"]} | {row["stock_s"] * 1e3:.2f} | '
        f'{row["cached_s"] * 1e3:.2f} | '
        f'{row["stock_s"] / row["cached_s"]:.1f}x |'
        for name, row in rows.items()
    ]
