"""DDP communication hooks (``DistributedDataParallel.register_comm_hook``): ``hook(state,
bucket)`` replaces the bucket's all-reduce and returns a Future whose value is the reduced
buffer (a Tensor, or a list holding one, as ``Work.get_future()`` gives). With a hook DDP does
not divide by the world size: the hook averages, as PyTorch's ``allreduce_hook`` does."""

from __future__ import annotations

import inspect


class GradBucket:
    """One bucket as a comm hook sees it (``torch.distributed.GradBucket``): ``buffer()`` the
    flat gradients, ``gradients()`` their per-parameter views, ``parameters()``, ``index()``,
    ``is_last()``, ``set_buffer(tensor)``."""

    def __init__(self, bucket, params, is_last: bool) -> None:
        self._bucket = bucket
        self._params = [params[i] for i in bucket.indices]
        self._is_last = is_last

    def index(self) -> int:
        return self._bucket.index

    def buffer(self):
        return self._bucket.flat

    def gradients(self) -> list:
        return list(self._bucket.views)

    def parameters(self) -> list:
        return list(self._params)

    def is_last(self) -> bool:
        return self._is_last

    def set_buffer(self, buffer) -> None:
        from ...autograd.grad_mode import no_grad

        with no_grad():
            self._bucket.flat.copy_(buffer)


def check_comm_hook(hook) -> None:
    """PyTorch's checks of a hook's signature (``DistributedDataParallel._check_comm_hook``)."""
    if not callable(hook):
        raise TypeError("Communication hook must be callable.")
    sig = inspect.signature(hook)
    bucket = sig.parameters.get("bucket")
    if bucket is not None and bucket.annotation is not inspect._empty \
            and getattr(bucket.annotation, "__name__", None) != "GradBucket":
        raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")
    returns = sig.return_annotation
    if returns is not inspect._empty and "Future" not in str(returns):
        raise ValueError("Communication hook: return annotation should be "
                         "torch.futures.Future[torch.Tensor].")


def result_tensor(future):
    """The reduced buffer a hook's future gave (a Tensor, or a list or tuple holding one)."""
    value = future.wait()
    if isinstance(value, (list, tuple)):
        if len(value) != 1:
            raise RuntimeError("DDP communication hook: the future must hold one tensor (the "
                               f"bucket's reduced buffer), it holds {len(value)} values")
        value = value[0]
    return value
