"""Recording a forward as ONNX nodes while ``glassgrad.onnx.export`` runs the model.

NOTE [Tracing ops]: during export ``_Hooks.trace`` (autograd/graph.py) is a ``Tracer``. Setting
it turns ``_Hooks.watch_ops`` and ``any_on`` on, so the fast path steps aside and the op path's
existing diagnostics test hands the tracer every op ``Primitive.apply`` runs, recorded or not
(also its spelled-out forms, in-place writes and multi-output ops): the op's class, result,
input Tensors and attributes. Nothing is added to an op while no export runs.

Values are followed by identity. The graph inputs and every result computed from them get ONNX
names (``names``; ``array_names`` too, for index arrays an op keeps as an attribute and for
``detach()`` aliases, which share the array). Any other tensor an op reads (a parameter, a
buffer, a number made into a tensor) is a constant, written once as an initializer: an op whose
inputs are all constants is not emitted and its result is a constant in turn (PyTorch's
constant folding). A "constant" whose autograd history reaches a graph input, or that looks at
the memory of a traced value, was made outside the op path (a custom autograd.Function written
in NumPy, a view of a detached tensor): that is an error, not a silently frozen value. Values
read out as Python numbers (``.item()``, ``.tolist()``) are frozen, as in PyTorch's tracer.
Composites whose parts do not all pass through ``Primitive.apply`` (comparisons, pooling, the
norms, embedding, recurrent modules) are patched for the length of the export and emitted
whole, and ``no_grad`` inside forward keeps recording (onnx/_patches.py).
"""

from __future__ import annotations

import numpy as np

from ..autograd.diagnostics import root_buffer
from .errors import OnnxExporterError, UnsupportedOperatorError


class OpCall:
    """One op as its emitter sees it: ONNX names of the inputs (constants already written),
    the input Tensors, the attributes, the result (a Tensor or a tuple of them)."""

    __slots__ = ("tracer", "g", "op", "inputs", "tensors", "attrs", "result")

    def __init__(self, tracer, op, inputs, tensors, attrs, result) -> None:
        self.tracer = tracer
        self.g = tracer.g
        self.op = op
        self.inputs = inputs
        self.tensors = tensors
        self.attrs = attrs
        self.result = result

    def shape(self, i: int = 0) -> tuple:
        return tuple(self.tensors[i]._array.shape)

    @property
    def out_shape(self) -> tuple:
        r = self.result if not isinstance(self.result, tuple) else self.result[0]
        return tuple(r._array.shape)

    @property
    def dtype(self):
        return self.tensors[0]._array.dtype

    def array(self, arr) -> str:
        """The ONNX name of an index or mask array held as an attribute: the traced value it
        was read from, or a constant."""
        return self.tracer.array_value(arr)

    def unsupported(self, why: str, supported_version: int | None = None):
        """The UnsupportedOperatorError for this op, ``why`` saying which case."""
        return unsupported(self.op, self.tensors, self.g.opset, why, supported_version)


def torch_name(op) -> str:
    """glassgrad's primitive -> the name PyTorch's exporter would report (``aten::mul``)."""
    node = op.node_cls.__name__ if hasattr(op, "node_cls") else str(op)
    base = node[:-len("Backward0")] if node.endswith("Backward0") else node
    # NOTE: an underscore before a capital that follows a lower-case letter: Pool2D -> pool2d
    out = [("_" if c.isupper() and i and base[i - 1].islower() else "") + c.lower()
           for i, c in enumerate(base)]
    return "aten::" + "".join(out)


def unsupported(op, tensors, opset: int, why: str = "",
                supported_version: int | None = None) -> UnsupportedOperatorError:
    name = getattr(op, "__name__", str(op))
    shapes = ", ".join(str(list(t._array.shape)) for t in tensors if hasattr(t, "_array"))
    detail = (f"the op {name} on inputs of shapes [{shapes}] has no ONNX translation"
              + (f" ({why})" if why else "") + "; glassgrad.onnx.SUPPORTED_OPS lists the ops "
              "that export. Write that step with supported ops, or compute it outside the "
              "exported forward.")
    return UnsupportedOperatorError(torch_name(op), opset, supported_version, detail)


class Tracer:
    """``_Hooks.trace`` during an export (NOTE [Tracing ops])."""

    def __init__(self, builder, table: dict, constant_names: dict) -> None:
        self.g = builder
        self.table = table  # primitive name -> emitter(OpCall) -> name or tuple of names
        self.constant_names = constant_names  # id(Tensor) -> qualified parameter/buffer name
        self.names: dict = {}
        self.array_names: dict = {}
        self._consts: dict = {}
        self._roots: set = set()  # the memory of traced values (NOTE [Tracing ops])
        self.inputs: set = set()  # ids of the graph inputs and their leaves (see mark_input)
        self._keep: list = []  # what the dicts above key by id, alive so the ids stay theirs
        self.paused = 0

    def bind(self, tensor, name: str) -> None:
        """``tensor`` (computed from the graph inputs) is the ONNX value ``name``."""
        self.names[id(tensor)] = name
        self.array_names[id(tensor._array)] = name
        root = root_buffer(tensor._array)
        self._roots.add(id(root))
        self._keep.append((tensor, tensor._array, root))

    def mark_input(self, t) -> None:
        """``t`` is a graph input, or the leaf behind one (``_made_from_inputs`` looks for it)."""
        self.inputs.add(id(t))
        self._keep.append(t)

    def live(self, t) -> str | None:
        """The ONNX name of a Tensor computed from the graph inputs, else None."""
        name = self.names.get(id(t))
        if name is None:
            name = self.array_names.get(id(getattr(t, "_array", None)))
        return name

    def value(self, t) -> str:
        """The ONNX name of ``t``: its traced value, or a constant initializer."""
        name = self.live(t)
        return name if name is not None else self.constant(t)

    def constant(self, t, op=None) -> str:
        arr = t._array
        name = self._consts.get(id(arr))
        if name is None:
            self.check_constant(t, op)
            name = self.g.initializer(arr, self.constant_names.get(id(t)))
            self._consts[id(arr)] = name
            self._keep.append(arr)
        return name

    def check_constant(self, t, op) -> None:
        """Raise when ``t``, untraced, was computed from the graph inputs after all."""
        arr = t._array
        what = (f"glassgrad: {getattr(op, '__name__', op or 'the output')} reads a "
                f"{list(arr.shape)} {arr.dtype} tensor ")
        made_by = self._made_from_inputs(t)
        if made_by is not None:
            raise OnnxExporterError(
                what + f"made from the graph inputs by {made_by}, which the exporter does not "
                "record (a custom autograd.Function, or an op under no_grad inside forward). "
                "Write that step with glassgrad's ops, or compute it outside the exported "
                "forward.")
        if id(root_buffer(arr)) in self._roots:
            raise OnnxExporterError(
                what + "that looks at the memory of a traced value but was made outside the "
                "recorded ops (a view of a tensor that does not require grad, e.g. after "
                "detach()), so the export cannot follow it. Keep the computation on the traced "
                "tensors (no detach() or .data inside forward).")

    def _made_from_inputs(self, t) -> str | None:
        """The name of the node that made ``t`` when its autograd history reaches a graph
        input (then no recorded op made it, or it would be traced), else None."""
        fn = getattr(t, "grad_fn", None)
        if fn is None or not self.inputs:
            return None
        stack, seen = [fn], set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if id(getattr(node, "variable", None)) in self.inputs:
                return fn.name()
            stack.extend(f for f, _ in node.next_functions)
        return None

    def array_value(self, arr) -> str:
        name = self.array_names.get(id(arr))
        if name is not None:
            return name
        name = self._consts.get(id(arr))
        if name is None:
            name = self.g.initializer(np.asarray(arr))
            self._consts[id(arr)] = name
            self._keep.append(arr)
        return name

    def _attrs_live(self, attrs) -> bool:
        for v in attrs.values():
            for a in v if isinstance(v, tuple) else (v,):
                if isinstance(a, np.ndarray) and id(a) in self.array_names:
                    return True
        return False

    def __call__(self, op, result, inputs, attrs) -> None:
        if self.paused:
            return
        live = [self.live(t) for t in inputs]
        if (inputs and live[0] is None and not isinstance(result, tuple)
                and id(result) in self.names and inputs[0] is not result):
            live[0] = self.names[id(result)]  # an in-place op read a snapshot of its target
        if not any(n is not None for n in live) and not self._attrs_live(attrs):
            for t in inputs:
                self.check_constant(t, op)
            return  # a constant (NOTE [Tracing ops])
        emit = self.table.get(op.__name__)
        if emit is None:
            raise unsupported(op, inputs, self.g.opset)
        names = [n if n is not None else self.constant(t, op) for n, t in zip(live, inputs)]
        outs = emit(OpCall(self, op, names, inputs, attrs, result))
        self.bind_outputs(result, outs)

    def bind_outputs(self, result, outs) -> None:
        if isinstance(result, (tuple, list)):
            for r, n in zip(result, outs):
                if n is not None and r is not None:
                    self.bind(r, n)
        else:
            self.bind(result, outs)
