"""Tensor layouts (``torch.layout``): ``strided`` for dense tensors, ``sparse_coo`` for the
coordinate-format sparse tensors of ``glassgrad/sparse/``. Leaf module (no imports) so that
``tensor.py`` can name its layout."""

from __future__ import annotations

__all__ = ["jagged", "layout", "sparse_coo", "strided"]


class _Named:
    """A named singleton printed as ``glassgrad.<name>`` (layouts, memory formats)."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"glassgrad.{self._name}"

    def __reduce__(self):
        return self._name  # NOTE: pickles as the module-level singleton, as torch's layouts do


class layout(_Named):  # noqa: N801 - torch.layout's name
    """How a tensor's elements are stored (``torch.layout``); compare by identity:
    ``x.layout is glassgrad.strided``."""

    __slots__ = ()


strided = layout("strided")
sparse_coo = layout("sparse_coo")
jagged = layout("jagged")  # nested tensors' layout (torch.jagged); no glassgrad tensor has it yet
sparse_csr = layout("sparse_csr")  # compressed sparse rows (glassgrad/sparse/_csr.py)
sparse_csc = layout("sparse_csc")  # compressed columns: named for torch's API; not implemented
__all__ += ["sparse_csc", "sparse_csr"]
