"""The helper names ``torch.nn.functional`` carries besides its layer functions (issue 16, lane
grid), as the same kinds of objects: ``Tensor``; the ``__torch_function__`` protocol checks
(``has_torch_function`` and its unary/variadic forms, ``handle_torch_function``: glassgrad's
autograd helpers); ``boolean_dispatch`` (pick one of two functions by a bool argument, as
torch's ``_jit_internal``); ``assert_int_or_pair``; the docstring fragments
``reproducibility_notes`` / ``tf32_notes`` (dicts of reStructuredText); and the typing names its
module imports (``Callable``, ``Optional``, ``TYPE_CHECKING``, ``BroadcastingList1/2/3``,
``DType``), which are plain Python objects with torch's meaning here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Optional

from ..autograd._autograd_names import handle_torch_function, has_torch_function
from ..tensor import Tensor

__all__ = ["BroadcastingList1", "BroadcastingList2", "BroadcastingList3", "Callable", "DType",
           "Optional", "TYPE_CHECKING", "Tensor", "assert_int_or_pair", "boolean_dispatch",
           "handle_torch_function", "has_torch_function", "has_torch_function_unary",
           "has_torch_function_variadic", "reproducibility_notes", "tf32_notes"]

DType = int  # torch's annotation alias: TorchScript passes dtypes as ints


class _BroadcastingList:
    """``BroadcastingList2[int]``: TorchScript's "an int or a list of them" annotation; in
    Python, subscripting gives None (torch's ``BroadcastingListCls``)."""

    def __getitem__(self, types):
        return None


BroadcastingList1 = BroadcastingList2 = BroadcastingList3 = _BroadcastingList()


def has_torch_function_unary(arg) -> bool:
    """``has_torch_function((arg,))`` (``torch.overrides.has_torch_function_unary``)."""
    return has_torch_function((arg,))


def has_torch_function_variadic(*args) -> bool:
    """``has_torch_function(args)`` (``torch.overrides.has_torch_function_variadic``)."""
    return has_torch_function(args)


def assert_int_or_pair(arg, arg_name: str, message: str) -> None:
    """AssertionError with ``message.format(arg_name)`` unless ``arg`` is an int or has two
    elements (``torch.nn.functional.assert_int_or_pair``)."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """A function that calls ``if_true`` or ``if_false`` by the bool argument ``arg_name``
    (keyword) or at ``arg_index`` (positional), ``default`` when absent
    (``torch._jit_internal.boolean_dispatch``, as ``F.max_pool2d`` is built in torch). The
    one docstring of the two becomes the result's; RuntimeError when both have one."""

    def fn(*args, **kwargs):
        flag = kwargs[arg_name] if arg_name in kwargs else (
            args[arg_index] if arg_index < len(args) else default)
        return (if_true if flag else if_false)(*args, **kwargs)

    docs = [f.__doc__ for f in (if_true, if_false) if f.__doc__ is not None]
    if len(docs) > 1:
        raise RuntimeError("only one function can have a docstring")
    doc = docs[0] if docs else None
    if_true.__doc__ = if_false.__doc__ = fn.__doc__ = doc
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    return fn


# NOTE: fragments that docstrings format in ({backward_reproducibility_note} ...): torch's keys,
# glassgrad's own words (its NumPy kernels are deterministic; the notes say where that may end)
reproducibility_notes = {
    "forward_reproducibility_note": (
        "glassgrad computes this operation deterministically on the CPU; a GPU backend may "
        "not. See :doc:`/notes/randomness`."),
    "backward_reproducibility_note": (
        "glassgrad computes this gradient deterministically on the CPU; on a GPU backend the "
        "order of accumulation, and so the last bits, may vary. See :doc:`/notes/randomness`."),
    "cudnn_reproducibility_note": (
        "With a GPU backend that picks among algorithms (as CuDNN does), results may vary "
        "between runs; ``torch.backends.cudnn.deterministic = True`` asks for a deterministic "
        "one. See :doc:`/notes/randomness`."),
}
tf32_notes = {"tf32_note": "On hardware with TensorFloat32 this operator may use it "
                           "(:ref:`TensorFloat32<tf32_on_ampere>`); glassgrad's CPU path does not."}
