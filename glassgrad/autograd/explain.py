"""The glassgrad part of autograd's two classic errors, and writes through ``.data``.

NOTE [Diagnostics] in diagnostics.py describes the mechanism: saved tensors mark their version
counter as watched (``[v, None]``), in-place writes to a watched counter log their op and line in a
``WriteLog``, ``.data`` hands out a counter linked to the original, and ``Node._freed`` holds the
``BackwardCall`` that freed the node. Everything here runs only while an error (or the ``.data``
warning) is being written.
"""

from __future__ import annotations

import re
import sys

from . import diagnostics as _diag
from .diagnostics import BackwardCall, Stats, _user_frame, _warn_at
from .. import dtypes as _dtypes
from .graph import AccumulateGrad, _Anomaly

DATA_WRITE = 1 << 32  # added to a watched version counter by a write through ``.data``
VERSION_MASK = DATA_WRITE - 1
DETACHED = 1 << 48  # added to a watched counter by detach_() of a tensor with history
_PACKAGE_DIR = _diag._PACKAGE_DIR


# --- version counters: in-place writes and .data --------------------------------------------------
class WriteLog:
    """``vc[1]`` of a watched version counter: the last in-place writes (version after, op, line),
    and for a ``.data`` tensor the counter of the tensor it was taken from."""

    __slots__ = ("data_of", "writes")

    def __init__(self, data_of=None) -> None:
        self.data_of = data_of
        self.writes = []

    def add(self, version: int, op: str, where: str) -> None:
        self.writes.append((version, op, where))
        if len(self.writes) > 8:
            del self.writes[0]


def data_version(vc) -> list:
    """The version counter ``.data`` hands out: its own, linked to the original's."""
    if len(vc) > 1 and vc[1] is not None and vc[1].data_of is not None:
        vc = vc[1].data_of
    return [0, WriteLog(vc)]


before_write: list = [None]  # NOTE [Copy on write of saved tensors] in _mutation_on_saved.py


def note_write(t, op: str) -> None:
    """An in-place write to a watched counter (saved for backward, or taken by ``.data``), called
    just before the write: it logs the version the write makes."""
    if before_write[0] is not None:
        before_write[0](t)
    vc = t._vc
    log = vc[1]
    if log is None:
        log = vc[1] = WriteLog()
    where = _user_frame()
    log.add(vc[0] + 1, op + "_", where)
    orig = log.data_of
    if orig is not None and len(orig) > 1:
        orig[0] += DATA_WRITE
        if orig[1] is None:
            orig[1] = WriteLog()
        orig[1].add(orig[0], op + "_ through .data", where)


def accept_data_writes(t, saved, node) -> bool:
    """Slow path of the saved-tensor version check: True (after a warning) when only writes through
    ``.data`` changed the buffer, which PyTorch lets pass silently; False for a real in-place."""
    now = t._vc[0]
    diff = now - saved._version
    if diff >= DETACHED and saved._is_output and not diff & VERSION_MASK:
        saved._version = now  # PyTorch: a saved output may be detached in place
        return True
    if diff <= 0 or diff & VERSION_MASK or diff >= DETACHED:
        return False
    saved._version = now
    Stats.data_writes += 1
    writes = _writes_since(t._vc, now - diff)
    where = writes[-1][2] if writes else None
    at = f" ({writes[-1][1]} at {where})" if writes else ""
    _warn_at(where or node.source, ("data", where, node.name()), (
        f"glassgrad: the {_describe(t)} tensor saved by {node.name()}"
        + (f" (created at {node.source})" if node.source else "")
        + f" was overwritten through .data{at} after it was saved. Autograd cannot see writes "
        "through .data (PyTorch says nothing), so this backward uses the new values and its "
        "gradients do not belong to the forward that ran. Write to the tensor itself under "
        "torch.no_grad() (backward then raises if the graph still needs the old values), or "
        "clone() it before the forward."
    ))
    return True


def _writes_since(vc, version: int) -> list:
    log = vc[1] if len(vc) > 1 else None
    if log is None:
        return []
    return [w for w in log.writes if w[0] > version]


def _describe(t) -> str:
    from .. import dtypes

    return f"{list(t._array.shape)} {dtypes._FROM_NP[t._array.dtype]}".replace("glassgrad.", "")


def inplace_explanation(t, saved_version: int, node, is_output: bool) -> str:
    """glassgrad's part of the in-place error: the saved tensor as the user made it (variable,
    creator, line), the in-place writes since it was saved (op, line), and the fix."""
    if is_output:
        creator, what = node, "its output"
    else:
        creator = t.grad_fn
        while creator is not None and creator._seq > node._seq and creator.next_functions:
            creator = creator.next_functions[0][0]  # back through the in-place ops' history
        what = "an input"
    names = _user_names(t)
    made = "a leaf tensor" if creator is None or type(creator) is AccumulateGrad else (
        f"the output of {creator.name()}" + (f" at {creator.source}" if creator.source else ""))
    if not is_output and creator is None:
        made = "a leaf tensor (a parameter?)" if t._requires_grad else "a tensor with no history"
    text = (f"glassgrad: {node.name()}" + (f" (created at {node.source})" if node.source else "")
            + f" saved {what}: {_describe(t)}{names}, {made}. ")
    writes = _writes_since(t._vc, saved_version)
    if writes:
        text += "It was then changed in place by " + "; ".join(
            f"{op} at {where} (now version {v & VERSION_MASK})" for v, op, where in writes[:3])
        text += ". "
    # the error path only: looking through the caller's frames for an optimizer is cheap here
    step = _optimizer_of(t)
    if not writes:
        count = (t._vc[0] - saved_version) & VERSION_MASK
        text += (f"It was then changed in place {count} time(s)"
                 + (f", by {step}" if step else " (by an optimizer step, x[...] = ..., or code "
                    "outside glassgrad's in-place ops)") + ". ")
    text += ("Use .clone() before the in-place op, or make it out of place (x = x * 2 instead of "
             "x *= 2).")
    # the optimizer advice only on evidence: an optimizer named as the writer, or a leaf that
    # requires grad updated in place (what an optimizer or a hand-written step does)
    root = t
    while getattr(root, "_base", None) is not None:
        root = root._base
    if step or (root.grad_fn is None and root.requires_grad):
        text += (" An optimizer.step() between a forward and its backward is the usual cause in "
                 "GAN loops: run every backward that uses the forward first, then step.")
    return text


def _user_frames(limit: int = 4):
    f = sys._getframe(2)
    while f is not None and limit:
        if not f.f_code.co_filename.startswith(_PACKAGE_DIR):
            yield f
            limit -= 1
        f = f.f_back


def _user_names(t) -> str:
    """The user's names for ``t`` (a local variable, or a module's parameter), from the frames
    that called backward. Read only when an error is being explained."""
    from ..tensor import Tensor

    vc = t._vc
    found = []
    for f in _user_frames():
        for name, value in f.f_locals.items():
            if isinstance(value, Tensor) and value._vc is vc and value._array is t._array:
                found.append(f"`{name}`")
            elif hasattr(value, "named_parameters") and hasattr(value, "_parameters"):
                for pname, p in value.named_parameters():
                    if p._vc is vc:
                        found.append(f"`{name}.{pname}`")
        if found:
            break
    return " (" + ", ".join(dict.fromkeys(found)) + ")" if found else ""


def _optimizer_of(t) -> str | None:
    vc = t._vc
    for f in _user_frames():
        for name, value in f.f_locals.items():
            groups = getattr(value, "param_groups", None)
            if isinstance(groups, list) and hasattr(value, "step"):
                for g in groups:
                    if any(getattr(p, "_vc", None) is vc for p in g.get("params", ())):
                        return f"`{name}.step()` ({type(value).__name__} updates its parameters in place)"
    return None


_BACKWARD_SUFFIX = re.compile(r"Backward\d*$")


def inplace_message(t, saved_version: int, node, is_output: bool, output_nr: int) -> str:
    """PyTorch's "one of the variables needed for gradient computation has been modified by an
    inplace operation" with glassgrad's explanation."""
    if not is_output and t._vc[0] - saved_version >= DETACHED and \
            not (t._vc[0] - saved_version) & VERSION_MASK:
        return ("Trying to use a saved tensor that has been detached in-place, i.e. with "
                ".detach_().This is not supported, please use out-of-place `.detach()` instead\n"
                f"glassgrad: {node.name()} saved the {list(t.shape)} tensor before it was "
                "detached in place; detach a copy (x.detach()) for the later use instead.")
    # PyTorch names the producer of the saved tensor without its "Backward0" suffix: the node
    # itself for a saved output, the tensor's current grad_fn for a saved input.
    producer, nr = (node, output_nr) if is_output else (t.grad_fn, t._output_nr)
    where = ""
    if producer is not None:
        where = f", which is output {nr} of {_BACKWARD_SUFFIX.sub('', producer.name())},"
    if _Anomaly.enabled:
        hint = ("Hint: the backtrace further above shows the operation that failed to compute its "
                "gradient. The variable in question was changed in there or anywhere later. Good "
                "luck!")
    else:
        hint = ("Hint: enable anomaly detection to find the operation that failed to compute its "
                "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
    mask = VERSION_MASK  # NOTE [Diagnostics]: writes through .data add above it
    return (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{_dtypes.type_name(t.dtype)} {list(t.shape)}]{where} is at version "
        f"{t._vc[0] & mask}; expected version {saved_version & mask} instead. {hint}\n"
        + inplace_explanation(t, saved_version, node, is_output)
    )


# --- the second backward --------------------------------------------------------------------------
def second_time_message(node) -> str:
    """PyTorch's "Trying to backward through the graph a second time" with glassgrad's part."""
    return (
        "Trying to backward through the graph a second time (or directly access saved tensors "
        "after they have already been freed). Saved intermediate values of the graph are freed "
        "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
        "backward through the graph a second time or if you need to access saved tensors after "
        "calling backward.\n" + second_time_explanation(node)
    )


def second_time_explanation(node) -> str:
    """glassgrad's part of "Trying to backward through the graph a second time": the node, the
    backward that freed it, and (same line: a loop) the tensor carried across iterations."""
    freed_by = node._freed if isinstance(node._freed, BackwardCall) else None
    head = (f"glassgrad: {node.name()}" + (f" (created at {node.source})" if node.source else "")
            + " already released its saved tensors in an earlier backward"
            + (f" (the backward at {freed_by.where})" if freed_by else "") + ". ")
    now = _user_frame()
    consumer = _consumer(node)
    same_line = freed_by is not None and freed_by.where == now
    if (same_line and not _restarts_from_root(freed_by)) or (
            freed_by is not None and consumer is not None and _repeats(node, *consumer)):
        carried = _carried_tensor(node, consumer)
        why = ("That backward is on the same line as this one" if same_line else
               "This graph repeats the earlier one's step (an unrolled loop)")
        return head + (
            f"{why}: this iteration's graph reaches into "
            "the previous iteration's graph through a tensor carried across iterations (an RNN "
            f"hidden state, a running total){carried}. Detach it at the start of each iteration "
            "(h = h.detach()) rather than passing retain_graph=True: retaining would make every "
            "backward run through all earlier iterations and keep their memory alive, so the "
            "graph would grow without bound."
        )
    return head + (
        "If two losses share this graph (a GAN's discriminator and generator losses), pass "
        "retain_graph=True to the first backward only; or detach the shared tensor "
        "(fake.detach()) for the loss that must not reach it; or recompute the forward."
    )


def _restarts_from_root(freed_by) -> bool:
    """``z.backward(); z.backward()`` on one line: the same graph again, not a carried tensor."""
    from . import engine
    from .diagnostics import same_roots

    f = sys._getframe(1)
    while f is not None and f.f_code is not engine.run.__code__:
        f = f.f_back
    edges = f.f_locals.get("root_edges", ()) if f is not None else ()
    return same_roots(freed_by, [n for n, _ in edges])


def _consumer(node):
    """(the node of this backward's graph that takes ``node``'s output, its edge index), from
    the engine's walk; None outside a backward."""
    from . import engine

    code = engine.run.__code__
    f = sys._getframe(1)
    while f is not None and f.f_code is not code:
        f = f.f_back
    if f is None:
        return None
    for consumer in f.f_locals.get("seen", ()):
        for k, (nxt, _) in enumerate(consumer.next_functions):
            if nxt is node and consumer._in_meta:
                return consumer, k
    return None


_REPEAT_SEARCH = 256  # nodes of the earlier graph looked at (a step of an RNN is a few dozen)


def _repeats(node, consumer, k) -> bool:
    """Evidence of an unrolled loop: the op that takes the carried tensor in this graph took a
    tensor of the same shape and dtype at the same input in the earlier graph (behind ``node``,
    ``node`` included): step t + 1 of an RNN cell consumes h_t as step t consumed h_(t-1). A GAN's
    generator output meets the discriminator, an op its own graph does not hold with that input."""
    want = (type(consumer), consumer._in_meta[k])
    stack, seen = [node], {node}
    while stack and len(seen) < _REPEAT_SEARCH:
        n = stack.pop()
        meta = n._in_meta
        if type(n) is want[0] and meta and len(meta) > k and meta[k] == want[1]:
            return True
        for nxt, _ in n.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return False


def _carried_tensor(node, consumer) -> str:
    """Shape of ``node``'s output as this backward's graph consumes it."""
    if consumer is None:
        return ""
    fn, k = consumer
    shape, dtype = fn._in_meta[k]
    src = f" made at {node.source}" if node.source else ""
    return f": here the {list(shape)} {dtype} tensor from {node.name()}{src}"
