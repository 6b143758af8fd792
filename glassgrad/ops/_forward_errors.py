"""NumPy's errors inside a primitive's forward, explained in PyTorch's terms.

NOTE [Forward errors]: a forward is plain NumPy, so bad input that no public function checked
(shapes that do not broadcast, an index out of range) surfaces as NumPy's ValueError or IndexError
from deep inside, naming no op. ``Primitive.apply`` hands any such error here, on the failure path
only (the happy path pays nothing): broadcasting failures become PyTorch's RuntimeError "The size of
tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"; other NumPy errors
keep their kind (IndexError stays IndexError, the rest become RuntimeError, as in PyTorch) and say
which op refused which shapes and dtypes. Errors glassgrad raises on purpose pass unchanged.
"""

from __future__ import annotations

import linecache
import os
import re

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _deliberate(exc) -> bool:
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return True
    where = tb.tb_frame.f_code.co_filename
    return (os.path.abspath(where).startswith(_PACKAGE)
            and linecache.getline(where, tb.tb_lineno).lstrip().startswith("raise"))


def _describe(value) -> str:
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"{list(value.shape)} {value.dtype}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def broadcast_message(shapes) -> str | None:
    """PyTorch's message for the first pair of shapes that do not broadcast, or None."""
    for i, a in enumerate(shapes):
        for b in shapes[i + 1:]:
            for k in range(1, min(len(a), len(b)) + 1):
                if a[-k] != b[-k] and a[-k] != 1 and b[-k] != 1:
                    return (f"The size of tensor a ({a[-k]}) must match the size of tensor b "
                            f"({b[-k]}) at non-singleton dimension {max(len(a), len(b)) - k}")
    return None


def broadcast_shapes(op: str, *shapes) -> tuple:
    """``np.broadcast_shapes`` with PyTorch's RuntimeError, naming ``op``, when they do not."""
    import numpy as np

    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        msg = broadcast_message([tuple(s) for s in shapes]) or "shapes do not broadcast"
        raise RuntimeError(
            f"{msg}\nglassgrad: {op} got shapes {', '.join(str(list(s)) for s in shapes)}, "
            "which do not broadcast together."
        ) from None


def explain(cls, arrays, attrs, exc) -> BaseException:
    """The exception ``Primitive.apply`` raises when ``cls.forward`` raised ``exc``."""
    if hasattr(exc, "for_op"):  # a sparse operand (NOTE [Sparse operands] in sparse/_coo.py)
        return exc.for_op(cls)
    if not isinstance(exc, (ValueError, IndexError, TypeError)) or _deliberate(exc):
        return exc
    arrays = [a for a in arrays if hasattr(a, "shape")]
    array_attrs = [v for v in attrs.values() if hasattr(v, "shape") and hasattr(v, "dtype")]
    inputs = ", ".join(_describe(a) for a in arrays)
    extra = ", ".join(f"{k}={_describe(v)}" for k, v in attrs.items())
    what = f"glassgrad: {cls.__name__} (the op behind {cls.node_cls.__name__}) got inputs " \
           f"{inputs or 'none'}" + (f" and {extra}" if extra else "")
    if "broadcast" in str(exc):
        msg = broadcast_message([tuple(a.shape) for a in arrays + array_attrs])
        if msg is not None:
            return RuntimeError(f"{msg}\n{what}; these shapes do not broadcast together.")
    # NOTE: NumPy's IndexErrors ("index 5 is out of bounds", "too many indices") stay IndexErrors,
    # as in PyTorch; Python's "tuple index out of range" (a shape too short) is a RuntimeError
    generic = re.search(r"(tuple|list) (assignment )?index out of range", str(exc))
    kind = IndexError if isinstance(exc, IndexError) and not generic else RuntimeError
    return kind(f"{cls.__name__}: {exc}\n{what}, which NumPy refused.")
