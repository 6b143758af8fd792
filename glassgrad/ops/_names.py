"""How PyTorch's error messages name dtypes: ScalarType names (``Float``, ``Long``) and C type
names (``float``, ``long int``). Used to keep PyTorch's key phrases exact."""

from __future__ import annotations

SCALAR_TYPE = {
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}
C_TYPE = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def scalar_type(dtype) -> str:
    """``glassgrad.float32`` (or a NumPy dtype) -> ``"Float"``."""
    return SCALAR_TYPE[getattr(dtype, "name", str(dtype))]


def c_type(dtype) -> str:
    """``glassgrad.int64`` (or a NumPy dtype) -> ``"long int"``."""
    return C_TYPE[getattr(dtype, "name", str(dtype))]


def cast_error(result, out, op: str, c_names: bool = False) -> RuntimeError:
    """PyTorch's error for a result of dtype ``result`` written into a tensor of dtype ``out``
    that it cannot be cast to (float into integer, integer into bool: ``torch.can_cast``)."""
    shown = c_type(out) if c_names else scalar_type(out)
    return RuntimeError(
        f"result type {scalar_type(result)} can't be cast to the desired output type {shown}\n"
        f"glassgrad: {op} writes a {result} result into a {out} tensor; convert the operands, "
        "or use the out-of-place op."
    )
