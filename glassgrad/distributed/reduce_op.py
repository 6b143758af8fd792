"""``torch.distributed.ReduceOp``: how a collective combines the ranks' values."""

from __future__ import annotations

import enum

__all__ = ["ReduceOp", "reduce_op"]


class _RedOpType(enum.Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8
    UNUSED = 9

    def __int__(self) -> int:
        return self.value


_RedOpType.__name__ = _RedOpType.__qualname__ = "RedOpType"


class ReduceOp:
    """How ``all_reduce``/``reduce``/``reduce_scatter`` combine (``torch.distributed.ReduceOp``).

    ``ReduceOp.SUM``, ``AVG`` (the sum divided by the group's size), ``PRODUCT``, ``MIN``, ``MAX``,
    and the bitwise ``BAND``, ``BOR``, ``BXOR`` (integer and bool tensors only). On bool tensors
    SUM and MAX are a logical or, PRODUCT and MIN a logical and, as torch's backends compute them.
    ``PREMUL_SUM`` is NCCL-only in torch and is refused here. The members are of type
    ``ReduceOp.RedOpType`` and print as torch's (``RedOpType.SUM``).

    Example::

        >>> dist.all_reduce(t, op=dist.ReduceOp.MAX)
    """

    RedOpType = _RedOpType
    SUM = _RedOpType.SUM
    AVG = _RedOpType.AVG
    PRODUCT = _RedOpType.PRODUCT
    MIN = _RedOpType.MIN
    MAX = _RedOpType.MAX
    BAND = _RedOpType.BAND
    BOR = _RedOpType.BOR
    BXOR = _RedOpType.BXOR
    PREMUL_SUM = _RedOpType.PREMUL_SUM
    UNUSED = _RedOpType.UNUSED

    def __init__(self, op: _RedOpType = _RedOpType.SUM):
        self.op = as_red_op_type(op)

    def __eq__(self, other) -> bool:
        if isinstance(other, ReduceOp):
            return self.op is other.op
        return self.op is other

    def __hash__(self) -> int:
        return hash(self.op)

    def __repr__(self) -> str:
        return f"<torch.distributed.ReduceOp.{self.op.name}>"


def as_red_op_type(op) -> _RedOpType:
    """``op`` (a ``RedOpType``, a ``ReduceOp``, a legacy ``reduce_op`` member) as a RedOpType."""
    if isinstance(op, _RedOpType):
        return op
    if isinstance(op, ReduceOp):
        return op.op
    raise TypeError(
        f"glassgrad.distributed: op must be a torch.distributed.ReduceOp member such as "
        f"ReduceOp.SUM, got {op!r} of type {type(op).__name__}"
    )


class _ReduceOpLegacy:
    """``torch.distributed.reduce_op``: the deprecated alias of ``ReduceOp``'s members."""

    SUM = _RedOpType.SUM
    PRODUCT = _RedOpType.PRODUCT
    MIN = _RedOpType.MIN
    MAX = _RedOpType.MAX


reduce_op = _ReduceOpLegacy()
