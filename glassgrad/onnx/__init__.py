"""``glassgrad.onnx``: write a model's forward as an ONNX file (``torch.onnx``).

Needs the optional extra ``pip install glassgrad[onnx]`` (the onnx package; onnxruntime to run
the file). See ``export`` and NOTE [Tracing ops] in tracer.py.
"""

from __future__ import annotations

from . import errors
from .errors import OnnxExporterError, UnsupportedOperatorError
from .export import ONNXProgram, TrainingMode, export, is_in_onnx_export


def __getattr__(name: str):
    if name == "SUPPORTED_OPS":  # the primitives with an ONNX translation, sorted
        from .symbolic import table

        return sorted(table())
    raise AttributeError(f"module 'glassgrad.onnx' has no attribute {name!r}")


__all__ = ["ONNXProgram", "OnnxExporterError", "TrainingMode", "UnsupportedOperatorError",
           "errors", "export", "is_in_onnx_export"]
