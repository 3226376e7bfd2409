"""What the GPU lending machine allows a command, which the harness is
shaped to: the files of ``$OUT`` it returns, its time limit, the cores
beside its GPU. Another machine changes this module only."""
import io
import os
import os.path as osp
import tarfile
import time

#: seconds a command may take from the start of ``tools/gpu_run.sh``: the
#: machine's 600 s limit less a minute
BUDGET = 540
#: evidence runs side by side: each is bound by the host core launching its
#: kernels, so the machine's 16 cores and one GPU take about ten
JOBS = 10
#: the machine returns at most 8 files of ``$OUT``: the output goes there
#: packed into this one, beside ``manifest.json``
PACK = 'gpu_run.tar.gz'


def pack(stage: str, back: str, leave_out=()) -> None:
    """``stage`` as ``back/gpu_run.tar.gz``, replaced whole (a command
    killed while packing still returns the previous pack). The runs write
    into ``stage`` meanwhile: each file is read once and added as read (a
    json renamed into place is whole; a page rewritten in place may be
    caught partway, and is whole in the next pack), a file gone since the
    listing is left out, and so are the ``.tmp`` files renamed over the
    jsons and the files named in ``leave_out``."""
    path = osp.join(back, PACK)
    with tarfile.open(path + '.part', 'w:gz') as tar:
        for folder, subfolders, files in os.walk(stage):
            subfolders.sort()
            for name in sorted(f for f in files if not f.endswith('.tmp')
                               and f not in leave_out):
                file = osp.join(folder, name)
                try:
                    with open(file, 'rb') as f:
                        data = f.read()
                except FileNotFoundError:
                    continue
                info = tarfile.TarInfo(osp.relpath(file, stage))
                info.size, info.mtime = len(data), time.time()
                tar.addfile(info, io.BytesIO(data))
    os.replace(path + '.part', path)
