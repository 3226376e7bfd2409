"""Print the best checkpoint of a training run, as the run recorded it.

    python tools/test.py CONFIG $(python tools/best_checkpoint.py WORK_DIR)

Reads the best checkpoint's path from the run's last checkpoint (the
checkpoint hook's record), not from the ``best_*.pth`` names in the folder,
which may hold a best checkpoint that a kill left before its removal.
Exits with status 1 and a message when the run records none, or when its
last checkpoint cannot be read.
"""
import argparse
import sys

from spml_mm.utils import (DamagedCheckpointError, UnsafeCheckpointError,
                           find_best_checkpoint)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('work_dir', help='the work dir of a training run')
    args = parser.parse_args(argv)
    try:
        print(find_best_checkpoint(args.work_dir))
    except (FileNotFoundError, DamagedCheckpointError,
            UnsafeCheckpointError) as err:
        print(f'best_checkpoint.py: {err}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
