"""CPU stand-ins for nanoGPT's DDP branch (programs/nanogpt_ddp.py): train.py pins every rank to
``cuda:LOCAL_RANK`` without testing for a GPU, which PyTorch's CPU build refuses as glassgrad does.
Only these two calls change; everything else is glassgrad as it is."""

import glassgrad.cuda
import glassgrad.nn.parallel as _parallel

glassgrad.cuda.set_device = lambda device: None  # the rank's "GPU" is its CPU process

_ddp_init = _parallel.DistributedDataParallel.__init__


def _cpu_init(self, module, device_ids=None, output_device=None, *args, **kwargs):
    _ddp_init(self, module, None, None, *args, **kwargs)  # device_ids: CPU modules take none


_parallel.DistributedDataParallel.__init__ = _cpu_init
