"""``torch.special.common_args`` and ``multi_dim_common``: the argument descriptions PyTorch's
docstrings are assembled from (``str.format(**common_args)``), with the same keys, in glassgrad's
own words, so documentation code written against torch's keys formats unchanged."""

from __future__ import annotations

common_args = {
    "input": "input (Tensor): the tensor the function is applied to.",
    "generator": "generator (:class:`torch.Generator`, optional): the random number generator "
                 "to draw from.",
    "out": "out (Tensor, optional): a tensor the result is written into.",
    "memory_format": "memory_format (:class:`torch.memory_format`, optional): the memory "
                     "layout of the result. Default: ``torch.preserve_format``.",
}

multi_dim_common = {
    **common_args,
    "dtype": "dtype (:class:`torch.dtype`, optional): when given, the input is converted to "
             "this dtype before the reduction, so that it cannot overflow. Default: None.",
    "keepdim": "keepdim (bool): keep each reduced dimension with size 1.",
    "opt_keepdim": "\n    keepdim (bool, optional): keep each reduced dimension with size 1. "
                   "Default: ``False``.\n",
    "dim": "dim (int or tuple of ints): the dimension or dimensions reduced.",
    "keepdim_details": "\nWith :attr:`keepdim` ``True`` the result has the input's shape with "
                       "size 1 in the reduced dimension(s) :attr:`dim`; otherwise those "
                       "dimensions are removed (see :func:`torch.squeeze`).\n",
    "opt_dim": "\n    dim (int or tuple of ints, optional): the dimension or dimensions "
               "reduced.\n",
    "opt_dim_all_reduce": "\n    dim (int or tuple of ints, optional): the dimension or "
                          "dimensions reduced; ``None`` reduces them all.\n",
}
