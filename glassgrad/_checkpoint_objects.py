"""What checkpoints hold beyond tensors and containers: NumPy arrays and scalars, complex numbers,
sets, ``Size``, devices, and whole objects (``argparse.Namespace``, dataclasses, a whole
``nn.Module``), for ``glassgrad.save`` / ``glassgrad.load``; and the allowlist that
``torch.serialization.safe_globals`` manages.

NOTE [Objects in checkpoints]: an object is stored as structure, never as code:
``{"object": "module:qualname", "id": k, "state": ...}`` where ``state`` is what
``obj.__getstate__()`` gives (its ``__dict__`` for plain classes), encoded like any other value;
a second reference to the same object is ``{"ref": k}``, so shared sub-modules and cycles come
back shared. A class or function held as a value is ``{"global": "module:qualname"}``. On load the
name is resolved without importing anything and without running any attribute hook: the module
must already be in ``sys.modules`` and each part of the qualname is read from ``vars()``. Only
these are admitted, as torch's ``weights_only`` unpickler admits only its allowlist:
glassgrad's own classes and functions, ``argparse.Namespace``, and what the user allowlisted with
``safe_globals`` / ``add_safe_globals``, with ``weights_only=False`` too (the promise that
nothing in a file runs holds for every load). Rebuilding calls only
``cls.__new__(cls)`` and then ``__setstate__(state)`` (or updates ``__dict__``), as pickle does.
Anything else raises torch's ``pickle.UnpicklingError`` "Weights only load failed", naming it.
"""

from __future__ import annotations

import argparse
import math
import pickle
import sys
import types

import numpy as np

from .tensor import Size

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals"]

_safe: dict[int, object] = {}  # id -> the object or (object, "module.name"), as torch keeps them
_BUILTIN = {"argparse:Namespace": argparse.Namespace}
# NOTE: the dtypes a NumPy array may have in a checkpoint; object, string and structured dtypes
# would need code (or unbounded memory) to rebuild
_ARRAY_DTYPES = frozenset(
    np.dtype(f"{order}{code}").str for order in "<>" for code in
    ("f2", "f4", "f8", "c8", "c16", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "b1")
)


class UnpicklingError(pickle.UnpicklingError, ValueError):
    """torch's error type for a refused global (``pickle.UnpicklingError``), and glassgrad's
    ValueError for every file it refuses."""


def add_safe_globals(safe_globals: list) -> None:
    """Allowlist classes and functions that ``load`` may rebuild from a checkpoint
    (``torch.serialization.add_safe_globals``); an entry is the object or ``(object, "name")``
    with the ``module.qualname`` it is saved under. Raises TypeError for a non-list."""
    if not isinstance(safe_globals, list):
        raise TypeError(f"safe_globals must be a list, got {type(safe_globals).__name__}")
    for entry in safe_globals:
        _safe[id(entry)] = entry


def clear_safe_globals() -> None:
    """Forget every allowlisted global (``torch.serialization.clear_safe_globals``)."""
    _safe.clear()


def get_safe_globals() -> list:
    """The allowlisted globals (``torch.serialization.get_safe_globals``)."""
    return list(_safe.values())


class safe_globals:
    """Context manager allowlisting ``safe_globals`` inside its block
    (``torch.serialization.safe_globals``).

    Example::

        >>> with glassgrad.serialization.safe_globals([MyModel]):
        ...     model = glassgrad.load("model.pt")
    """

    def __init__(self, safe_globals: list) -> None:
        self.safe_globals = safe_globals

    def __enter__(self):
        self._added = [entry for entry in self.safe_globals if id(entry) not in _safe]
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc) -> None:
        for entry in self._added:  # NOTE: what was allowlisted before the block stays
            _safe.pop(id(entry), None)


def global_name(obj) -> str | None:
    """``"module:qualname"`` for a class or function reachable under that name, else None."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not (isinstance(module, str) and isinstance(qualname, str)) or "<" in qualname:
        return None
    if _lookup(module, qualname) is obj:
        return f"{module}:{qualname}"
    # NOTE: glassgrad's public functions wrap (argument checks) what their own module defines
    publics = ("glassgrad.nn.functional", "glassgrad") if module.startswith("glassgrad") else ()
    for public in publics:
        if _lookup(public, qualname) is obj:
            return f"{public}:{qualname}"
    return None


def _lookup(module: str, qualname: str):
    """The object at ``module:qualname`` without importing or running attribute hooks."""
    holder = sys.modules.get(module)
    for part in qualname.split("."):
        try:
            holder = vars(holder)[part]
        except (KeyError, TypeError):
            return None
    return holder


def own(module: str, qualname: str):
    """glassgrad's own class or function at ``module:qualname`` (a module already imported),
    or None: these are rebuilt without an allowlist."""
    if not (module == "glassgrad" or module.startswith("glassgrad.")):
        return None
    obj = _lookup(module, qualname)
    return obj if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)) else None


def allowlisted(name: str):
    """The allowlisted global saved as ``module:qualname``, or None."""
    for entry in _safe.values():
        obj, saved_as = entry if isinstance(entry, tuple) and len(entry) == 2 else (entry, None)
        if saved_as is not None:
            if saved_as == name.replace(":", "."):
                return obj
        elif global_name(obj) == name:
            return obj
    return None


def resolve(name, where: str):
    """The class or function a checkpoint names, if NOTE [Objects in checkpoints] admits it."""
    if not (isinstance(name, str) and name.count(":") == 1):
        raise ValueError(f"glassgrad.load: {where} has a malformed glassgrad structure: the "
                         f"global {name!r} is not 'module:qualname'.")
    module, qualname = name.split(":")
    refuse_blocked(module, name.replace(":", "."), where)
    obj = _BUILTIN.get(name) or allowlisted(name) or own(module, qualname)
    if obj is None:
        raise refused(name.replace(":", "."), where, module not in sys.modules)
    return obj


# NOTE: torch's _blocklisted_modules: refused even when the user allowlisted a global from them
# (add_safe_globals([os.system]) still cannot make a file run a shell command)
_BLOCKED_MODULES = frozenset(("sys", "os", "posix", "nt"))


def refuse_blocked(module: str, dotted: str, where: str) -> None:
    """torch's error for a global from a module its ``weights_only`` unpickler always refuses."""
    if module in _BLOCKED_MODULES:
        raise UnpicklingError(
            "Weights only load failed. WeightsUnpickler error: Trying to load unsupported GLOBAL "
            f"{dotted} whose module {module} is blocked.\nglassgrad.load: {where} names the "
            f"global {dotted}; a module torch blocks stays blocked whatever the allowlist says. "
            "Nothing in the file was run.")


def refused(dotted: str, where: str, not_imported: bool = False) -> UnpicklingError:
    """torch's error for a global its ``weights_only`` unpickler does not admit, then why."""
    qualname = dotted.rsplit(".", 1)[-1]
    return UnpicklingError(
        "Weights only load failed. WeightsUnpickler error: Unsupported global: GLOBAL "
        f"{dotted} was not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{qualname}])` or the "
        f"`torch.serialization.safe_globals([{qualname}])` context manager to allowlist "
        "this global if you trust this class/function.\n"
        f"glassgrad.load: {where} names the global {dotted}; glassgrad rebuilds only tensors, "
        "plain values, its own classes, argparse.Namespace and allowlisted globals, whatever "
        "weights_only says" + (", and never imports a module a file names" if not_imported
                               else "") + ". Nothing in the file was run."
    )


def _state(obj):
    cls = type(obj)
    if (cls.__reduce_ex__ is not object.__reduce_ex__ or cls.__reduce__ is not object.__reduce__
            or hasattr(cls, "__getnewargs_ex__") or hasattr(cls, "__getnewargs__")
            or not (hasattr(obj, "__dict__") or hasattr(cls, "__slots__"))):
        return None
    try:
        # NOTE: pickle's own test first: an object whose C type keeps state outside __dict__ (an
        # open file, a lock) has a __getstate__ that returns only the __dict__; pickle refuses it
        obj.__reduce_ex__(2)
        return obj.__getstate__()
    except TypeError:
        return None


def encode_other(encoder, obj, path: list):
    """Encode what ``_Encoder.encode`` does not know itself; TypeError for what cannot be."""
    where = ".".join(map(str, path)) or "the top level"
    if isinstance(obj, (np.ndarray, np.generic)) and obj.dtype.str not in _ARRAY_DTYPES:
        raise TypeError(f"glassgrad.save: cannot save a NumPy {type(obj).__name__} of dtype "
                        f"{obj.dtype} at {where}: checkpoints hold numeric and bool NumPy data.")
    if isinstance(obj, np.ndarray):
        return encoder.array(obj, path)
    if isinstance(obj, np.generic):
        return {"npscalar": obj.dtype.str, "value": encoder.encode(obj.item(), path)}
    if isinstance(obj, complex):
        return {"complex": [encoder.encode(obj.real, path), encoder.encode(obj.imag, path)]}
    if isinstance(obj, Size):
        return {"size": [int(n) for n in obj]}
    if type(obj).__name__ == "device" and type(obj).__module__.startswith("glassgrad."):
        return {"device": str(obj)}
    if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
        name = global_name(obj)
        if name is None:
            raise TypeError(f"glassgrad.save: cannot save {obj!r} at {where}: a class or "
                            "function is saved by its module and name, and this one has none "
                            "that leads back to it (a lambda or a local definition).")
        return {"global": name}
    if isinstance(obj, (set, frozenset)):
        return encoder.container(obj, path)
    state = _state(obj) if global_name(type(obj)) else None
    if state is None:
        raise TypeError(
            f"glassgrad.save: cannot save an object of type {type(obj).__name__} at {where}. "
            "Checkpoints hold tensors, NumPy arrays, numbers, strings, bytes, None, dtypes, "
            "(nested) lists, tuples, sets and dicts, and objects of importable classes rebuilt "
            "from their __dict__ (modules, argparse.Namespace, dataclasses); glassgrad never "
            "pickles, so an object with its own __reduce__ cannot be saved."
        )
    return encoder.instance(obj, global_name(type(obj)), state, path)


def _bad(where: str, what: str) -> ValueError:
    return ValueError(f"glassgrad.load: {where} has a malformed glassgrad structure: {what}.")


def _number(value, where: str):
    """A JSON number, or a non-finite float or complex number from its tag."""
    if isinstance(value, dict) and set(value) == {"float"} and value["float"] in (
            "nan", "inf", "-inf"):
        return float(value["float"])
    if isinstance(value, dict) and set(value) == {"complex"}:
        return decode_complex(value["complex"], where)
    if type(value) not in (bool, int, float):
        raise _bad(where, f"{str(value)[:80]} is not a number")
    return value


def decode_complex(parts, where: str) -> complex:
    if not (isinstance(parts, list) and len(parts) == 2):
        raise _bad(where, f"the complex number {str(parts)[:80]}")
    real, imag = (_number(v, where) for v in parts)
    if isinstance(real, complex) or isinstance(imag, complex):
        raise _bad(where, "a complex number with complex parts")
    return complex(real, imag)


class Loading(dict):
    """The tensors of the file being loaded (name -> Tensor), with the objects rebuilt so far
    (``"id"`` -> object)."""

    def __init__(self, tensors: dict) -> None:
        super().__init__(tensors)
        self.objects: dict[int, object] = {}
        self.arrays: dict[str, np.ndarray] = {}  # entry name -> the NumPy array it held


TAGS = frozenset(("ndarray", "npscalar", "complex", "size", "device", "set", "frozenset",
                  "global", "object", "ref"))


def decode_other(node: dict, ctx: Loading, where: str, depth: int, decode):
    """Rebuild a value whose tag is one of ``TAGS``; ``decode`` decodes what it holds."""
    keys = set(node)
    if keys == {"ndarray"} and isinstance(node["ndarray"], str) and node["ndarray"] in ctx:
        return ctx[node["ndarray"]]._array
    exotic = keys == {"ndarray", "dtype", "shape"} and isinstance(node["ndarray"], str)
    if exotic and node["ndarray"] in ctx.arrays:
        return ctx.arrays[node["ndarray"]]
    if exotic and node["ndarray"] in ctx:
        raw, dt, shape = ctx[node["ndarray"]]._array, array_dtype(node["dtype"], where), node[
            "shape"]
        if not (isinstance(shape, list) and len(shape) <= 64
                and all(type(n) is int and n >= 0 for n in shape)
                and raw.dtype == np.uint8 and raw.ndim == 1
                and math.prod(shape) * dt.itemsize == raw.nbytes):
            raise _bad(where, f"a NumPy array of dtype {dt} and shape {str(shape)[:80]} over "
                              f"{raw.nbytes} bytes")
        out = ctx.arrays[node["ndarray"]] = raw.view(dt).reshape(shape)
        return out
    if keys == {"npscalar", "value"}:
        dt = array_dtype(node["npscalar"], where)
        try:
            return dt.type(_number(node["value"], where))
        except (OverflowError, TypeError, ValueError):
            raise _bad(where, f"{str(node['value'])[:80]} is no {dt}") from None
    if keys == {"complex"}:
        return decode_complex(node["complex"], where)
    if keys == {"size"} and isinstance(node["size"], list) and all(
            type(n) is int and n >= 0 for n in node["size"]):
        return Size(node["size"])
    if keys == {"device"} and node["device"] == "cpu":
        from .backend import device

        return device("cpu")
    if keys in ({"set"}, {"frozenset"}) and isinstance(node[min(keys)], list):
        items = decode({"tuple": node[min(keys)]}, ctx, where, depth)  # NOTE: depth checked
        try:
            return (set if keys == {"set"} else frozenset)(items)
        except TypeError:
            raise _bad(where, "a set holds an unhashable value") from None
    if keys == {"global"}:
        return resolve(node["global"], where)
    if keys == {"ref"} and type(node["ref"]) is int and node["ref"] in ctx.objects:
        return ctx.objects[node["ref"]]
    if keys == {"object", "id", "state"} and type(node["id"]) is int and (
            node["id"] not in ctx.objects):
        cls = resolve(node["object"], where)
        if not isinstance(cls, type):
            raise _bad(where, f"{node['object']} is a function, not a class")
        try:
            obj = ctx.objects[node["id"]] = cls.__new__(cls)
        except TypeError as e:
            raise _bad(where, f"{node['object']} cannot be made without arguments "
                              f"({str(e)[:80]})") from None
        state = decode(node["state"], ctx, where, depth)
        try:
            setstate(obj, state)
        except (AttributeError, TypeError, ValueError) as e:
            raise _bad(where, f"an object of class {node['object']} cannot take its state "
                              f"({type(e).__name__}: {str(e)[:80]})") from None
        return obj
    raise _bad(where, f"the tag {str(sorted(keys))[:80]} with {str(node)[:80]}")


def setstate(obj, state) -> None:
    """Give a fresh instance its state, as pickle's BUILD does."""
    hook = getattr(type(obj), "__setstate__", None)
    if hook is not None and hook is not getattr(object, "__setstate__", None):
        obj.__setstate__(state)
        return
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state:
        obj.__dict__.update(state)
    for key, value in (slots or {}).items():
        setattr(obj, key, value)


def array_dtype(text, where: str) -> np.dtype:
    """The NumPy dtype ``text`` names, if a checkpoint may hold it."""
    if not (isinstance(text, str) and text in _ARRAY_DTYPES):
        raise _bad(where, f"the NumPy dtype {str(text)[:80]} is not one glassgrad saves")
    return np.dtype(text)
