"""nanoGPT's train.py, unchanged, under ``python -m glassgrad.distributed.run --nproc-per-node 2``
on glassgrad (programs/nanogpt_ddp.py): its loss follows the 1-rank run with the same global
batch. Needs a nanoGPT checkout or bare git directory: NANOGPT_REPO, or the mirror path below."""

import importlib.util
import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.environ.get("NANOGPT_REPO", "/work/.mirror/karpathy+nanoGPT/repo")


@pytest.mark.skipif(importlib.util.find_spec("mpi4py") is None, reason="mpi4py is not installed")
@pytest.mark.skipif(not os.path.exists(REPO), reason=f"no nanoGPT at {REPO} (set NANOGPT_REPO)")
def test_nanogpt_two_ranks_follow_one(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "programs"))
    import nanogpt_ddp

    curves = {}
    for nproc in (1, 2):
        folder = tmp_path / f"run{nproc}"
        folder.mkdir()
        nanogpt_ddp.extract(REPO, str(folder))
        nanogpt_ddp.write_data(str(folder / "data" / "shakespeare_char"))
        curves[nproc], log = nanogpt_ddp.run(str(folder), nproc, 8, timeout=300)
        assert log.count("tokens per iteration will be: 512") == nproc  # same global batch
    one, two = np.array(curves[1]), np.array(curves[2])
    assert len(one) == len(two) == 9
    # the same initial weights (DDP broadcasts rank 0's), other batches: close, not equal
    assert abs(one[0] - two[0]) < 0.05
    assert np.abs(one - two).mean() < 0.05
    assert two[-1] < two[0] - 0.2 and one[-1] < one[0] - 0.2  # both learn
