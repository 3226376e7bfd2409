"""``PYTHONPATH=.dev_scripts python -m benchmark.gpu_run``: the GPU command
(``bash tools/gpu_run.sh`` installs what it needs and runs it)."""
from benchmark.gpu_run.command import main

if __name__ == '__main__':
    main()
