"""The exporter's errors, as ``torch.onnx.errors`` names them."""

from __future__ import annotations


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter (``torch.onnx.OnnxExporterError``)."""


class UnsupportedOperatorError(OnnxExporterError):
    """An op of the recorded forward that the exporter cannot translate
    (``torch.onnx.errors.UnsupportedOperatorError``): PyTorch's message, then glassgrad's
    ``detail`` naming glassgrad's op, the input shapes and what to do."""

    def __init__(self, name: str, version: int, supported_version: int | None = None,
                 detail: str = "") -> None:
        if supported_version is not None:
            msg = (f"Exporting the operator '{name}' to ONNX opset version {version} is not "
                   f"supported. Support for this operator was added in version "
                   f"{supported_version}, try exporting with this version")
        else:
            msg = (f"Exporting the operator '{name}' to ONNX opset version {version} is not "
                   "supported")
        super().__init__(msg + (f"\nglassgrad: {detail}" if detail else ""))
