"""The ONNX graph being written: nodes, initializers, names (the ``onnx`` package, lazily)."""

from __future__ import annotations

import numpy as np


def onnx_module():
    """The ``onnx`` package, or an ImportError that names glassgrad's extra."""
    try:
        import onnx
    except ImportError as exc:
        raise ImportError(
            "glassgrad.onnx.export needs the onnx package: pip install glassgrad[onnx]"
        ) from exc
    return onnx


def elem_type(dtype) -> int:
    """NumPy dtype -> ONNX ``TensorProto`` element type."""
    return onnx_module().helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


class GraphBuilder:
    """Collects ONNX nodes and initializers; ``op`` names outputs ``/<OpType>_<k>_output_<i>``."""

    def __init__(self, opset: int) -> None:
        self.helper = onnx_module().helper
        self.numpy_helper = onnx_module().numpy_helper
        self.opset = opset
        self.nodes: list = []
        self.initializers: list = []
        self._counts: dict = {}
        self._const_names: set = set()

    def op(self, op_type: str, *inputs: str, outputs: int = 1, **attrs):
        """Append a node; returns its output name, or a tuple of names when ``outputs > 1``.
        Attributes given as None are left out (ONNX's default)."""
        k = self._counts.get(op_type, 0)
        self._counts[op_type] = k + 1
        node = f"/{op_type}_{k}"
        names = [f"{node}_output_{i}" for i in range(outputs)]
        attrs = {a: v for a, v in attrs.items() if v is not None}
        self.nodes.append(self.helper.make_node(op_type, list(inputs), names, name=node, **attrs))
        return names[0] if outputs == 1 else tuple(names)

    def initializer(self, array, name: str | None = None) -> str:
        """Add ``array`` as an initializer (named ``name``, or ``/Constant_<k>``); its name."""
        if name is None or name in self._const_names:
            k = self._counts.get("Constant", 0)
            self._counts["Constant"] = k + 1
            name = f"/Constant_{k}" if name is None else f"{name}.{k}"
        self._const_names.add(name)
        arr = np.asarray(array)
        if arr.dtype.kind == "V":  # bfloat16 (ml_dtypes): stored through float32
            arr = arr.astype(np.float32)
        # NOTE: not ascontiguousarray, which makes a 0-d array 1-d
        arr = arr if arr.flags.c_contiguous else arr.copy(order="C")
        self.initializers.append(self.numpy_helper.from_array(arr, name))
        return name

    def const(self, value, dtype) -> str:
        """A constant of ``dtype`` (a number or a list of them) as an initializer."""
        return self.initializer(np.asarray(value, dtype=dtype))

    def ints(self, values) -> str:
        """A 1-D int64 constant: the shapes, axes, starts and ends that ONNX takes as inputs."""
        return self.initializer(np.asarray(list(values), dtype=np.int64))
