"""spml_mm.utils.dist: the CPU gloo group's end of life."""
import torch.distributed as torch_dist

from spml_mm.utils import destroy_distributed


def test_destroy_distributed(tmp_path):
    # no group: nothing to do, no error
    destroy_distributed()
    torch_dist.init_process_group(
        'gloo', init_method=f'file://{tmp_path}/store', rank=0, world_size=1)
    assert torch_dist.is_initialized()
    destroy_distributed()
    assert not torch_dist.is_initialized()
