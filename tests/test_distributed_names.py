"""torch.distributed names that live elsewhere in glassgrad resolve from glassgrad.distributed."""
import pytest

import glassgrad

torch = pytest.importorskip("torch")


def test_grad_bucket_is_the_class_comm_hooks_receive():
    import torch.distributed as tdist

    from glassgrad.nn.parallel import _ddp_comm_hook
    assert hasattr(tdist, "GradBucket")
    assert glassgrad.distributed.GradBucket is _ddp_comm_hook.GradBucket
    with pytest.raises(AttributeError, match="no attribute 'NoSuchName'"):
        glassgrad.distributed.NoSuchName  # noqa: B018
