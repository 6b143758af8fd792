"""Views whose recorded in-place write PyTorch refuses: its ``CreationMeta``.

NOTE [View creation]: PyTorch remembers how a view was made and refuses, while recording, an
in-place write to a view that autograd cannot rebase: one made under no_grad (``NO_GRAD``) or
inference_mode (``INFERENCE``), an
output of a function that returns several views, unbind/split/chunk (``MULTI_OUTPUT``), and a
tensor a custom Function returned as-is, such as the outputs of a full backward hook's identity
(``CUSTOM_FUNCTION``). A view of such a view made in grad mode inherits the mark (PyTorch's
``propagate_creation_meta``). glassgrad keeps the marks by id in ``CREATION_META`` (no field on
Tensor: the hot path makes Tensors field by field), so a write costs one dict test while none is
marked; ``check`` raises with PyTorch's wording (``handle_view_on_rebase``).
"""

from __future__ import annotations

import re
import weakref

NO_GRAD, MULTI_OUTPUT, CUSTOM_FUNCTION = "no_grad", "multi_output", "custom_function"
INFERENCE = "inference_mode"
# id(tensor) -> (weakref to it, kind, output_nr or None for the tensor's own)
CREATION_META: dict = {}

_SUFFIX = re.compile(r"Backward\d*$")
_WHY = {
    NO_GRAD: " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
             "clarify your code by moving both the view and the inplace either both inside the "
             "no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
             "want the inplace to be tracked).",
    INFERENCE: " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
               "clarify your code by moving both the view and the inplace either both inside the "
               "inference_mode block (if you don't want the inplace to be tracked) or both "
               "outside (if you want the inplace to be tracked).",
    MULTI_OUTPUT: " This view is the output of a function that returns multiple views. Such "
                  "functions do not allow the output views to be modified inplace. You should "
                  "replace the inplace operation by an out-of-place one.",
    CUSTOM_FUNCTION: " This view was created inside a custom Function (or because an input was "
                     "returned as-is) and the autograd logic to handle view+inplace would "
                     "override the custom backward associated with the custom Function, leading "
                     "to incorrect gradients. This behavior is forbidden. You can fix this by "
                     "cloning the output of the custom Function.",
}
_FIX = {
    NO_GRAD: "make it outside no_grad, or write to it under no_grad",
    INFERENCE: "make it outside inference_mode, or write to it inside inference_mode",
    MULTI_OUTPUT: "index the tensor instead (x[i] is a view you may write to), or clone the piece",
    CUSTOM_FUNCTION: "clone it first, or use ReLU(inplace=False) after a module that has a full "
                     "backward hook",
}


def mark(t, kind: str, output_nr=None) -> None:
    """Remember that ``t`` was made as ``kind`` (entries leave with the tensor)."""
    tid = id(t)
    refs = CREATION_META
    refs[tid] = (weakref.ref(t, lambda _, refs=refs, tid=tid: refs.pop(tid, None)), kind,
                 output_nr)


def inherit(view, x) -> None:
    """``view`` (of ``x``, made in grad mode) keeps ``x``'s mark."""
    entry = CREATION_META.get(id(x))
    if entry is not None and entry[0]() is x:
        mark(view, entry[1])


def check(target, through=None) -> None:
    """RuntimeError with PyTorch's wording when a recorded in-place write to ``target`` is one
    PyTorch refuses (NOTE [View creation]); ``through``: the Index primitive of the basic-index
    view that ``target[index] = value`` writes through (PyTorch names that view's node)."""
    entry = CREATION_META.get(id(target))
    if entry is None or entry[0]() is not target:
        return
    _, kind, nr = entry
    fn = target.grad_fn
    name = "" if fn is None else fn.name() if through is None else through.node_cls.__name__
    nr = 0 if through is not None else target._output_nr if nr is None else nr
    if kind in (NO_GRAD, INFERENCE) or fn is None:
        prefix = "A view was created in" if fn is None else \
            f"Output {nr} of {_SUFFIX.sub('', name)} is a view of a view which was created in"
        msg = f"{prefix} inference mode and is being modified inplace in normal mode." \
            if kind == INFERENCE else \
            f"{prefix} no_grad mode and is being modified inplace with grad mode enabled."
    else:
        msg = f"Output {nr} of {_SUFFIX.sub('', name)} is a view and is being modified inplace."
    raise RuntimeError(f"{msg}{_WHY[kind]}\nglassgrad: the view has shape {list(target.shape)}; "
                       f"{_FIX[kind]}.")
