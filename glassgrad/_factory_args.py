"""Argument checks for the tensor factories and random samplers, with PyTorch's messages (each
followed by a "glassgrad:" sentence), and the samplers behind ``Tensor.uniform_``, ``normal_``,
``bernoulli_``, ... (``_tensor_methods.py`` attaches them). Kept apart from ``_factories.py``
(file size)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .tensor import Tensor

_BF16 = np.dtype(ml_dtypes.bfloat16)


def _is_seq(v) -> bool:
    return isinstance(v, (list, tuple)) or (isinstance(v, np.ndarray) and v.ndim > 0)


def _check_nested(data) -> None:
    """Raise PyTorch's error for ``data`` that is not a rectangular nest of numbers (only called
    once NumPy has refused it, so the walk costs nothing on good input)."""
    shape = []
    v = data
    while _is_seq(v):
        shape.append(len(v))
        if not len(v):
            break
        v = v[0]

    first = v

    def walk(v, dim):
        if dim < len(shape):
            if not _is_seq(v):
                raise TypeError(
                    "not a sequence\nglassgrad: tensor() of nested lists: an element at dim "
                    f"{dim} is a {type(v).__name__}, its neighbours are sequences of length "
                    f"{shape[dim]}; every row must have the same nesting."
                )
            if len(v) != shape[dim]:
                raise ValueError(
                    f"expected sequence of length {shape[dim]} at dim {dim} (got {len(v)})\n"
                    f"glassgrad: tensor() of nested lists needs rectangular data (every row of "
                    f"dim {dim} of length {shape[dim]}); pad the rows, or keep them separate."
                )
            for e in v:
                walk(e, dim + 1)
        elif _is_seq(v):  # PyTorch's wording follows the first number's type
            name = type(v).__name__
            head = (f"'{name}' object cannot be interpreted as an integer"
                    if isinstance(first, (int, np.integer)) else f"must be real number, not {name}")
            raise TypeError(
                f"{head}\nglassgrad: tensor() of nested lists: a {name} at dim {dim}, where its "
                "neighbours are numbers; every row must have the same nesting."
            )
        elif v is None or not isinstance(v, (int, float, complex, bool, np.generic)):
            raise RuntimeError(
                f"Could not infer dtype of {type(v).__name__}\nglassgrad: tensor() takes "
                f"numbers, nested lists of numbers, arrays or tensors; got a {type(v).__name__}."
            )

    walk(data, 0)


def _num(v) -> str:
    """A number as PyTorch's messages print it (C++ streams: ``2``, ``-0.1``, ``nan``)."""
    return f"{v:g}" if isinstance(v, (float, np.floating)) else str(v)


def _int_arg(v, op: str, name: str, pos: int) -> int:
    if isinstance(v, Tensor) and v.ndim == 0 and not v.is_floating_point():
        v = v.item()
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be int, not "
                        f"{type(v).__name__}\nglassgrad: {op}({name}={v!r}) takes a whole "
                        f"number; pass int(...).")
    return int(v)


def _steps(steps, op: str) -> int:
    steps = _int_arg(steps, op, "steps", 3)
    if steps < 0:
        raise RuntimeError(f"number of steps must be non-negative\nglassgrad: {op}(steps="
                           f"{steps}); pass steps >= 0 (the number of points, ends included).")
    return steps


def _check_range(low, high, op: str, np_dtype=None) -> None:
    if np_dtype is not None:
        _check_bounds(low, high, np.dtype(np_dtype))
    if not low < high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}\n"
            f"glassgrad: {op} samples integers in [low, high); pass low < high."
        )


def _check_std(s, op: str = "normal") -> None:
    """PyTorch's ``std >= 0`` check for a number or an array ``s``."""
    if isinstance(s, np.ndarray):
        if s.size and not (s >= 0).all():
            raise RuntimeError(
                f"{op} expects all elements of std >= 0.0\nglassgrad: {op} got a 'std' tensor "
                "with a negative (or nan) element; a standard deviation is >= 0."
            )
    elif not s >= 0:
        raise RuntimeError(f"{op} expects std >= 0.0, but found std {_num(s)}\nglassgrad: "
                           f"{op}(std={_num(s)}); a standard deviation is >= 0.")


def _check_p(p, op: str = "bernoulli_") -> None:
    """PyTorch's ``0 <= p <= 1`` check for a number or an array of probabilities."""
    if isinstance(p, np.ndarray):
        if p.size and not ((p >= 0) & (p <= 1)).all():
            raise RuntimeError(
                "Expected p_in >= 0 && p_in <= 1 to be true, but got false.\nglassgrad: "
                f"{op} got probabilities outside [0, 1] (or nan); clamp them (p.clamp(0, 1))."
            )
    elif not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}\n"
                           f"glassgrad: {op}(p={_num(p)}); a probability is in [0, 1].")


def _check_multinomial(probs, num_samples, replacement, dtype) -> None:
    if probs.ndim not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim\nglassgrad: multinomial of a "
                           f"{list(probs.shape)} tensor; pass (C,) or (N, C) probabilities.")
    if probs.dtype.kind != "f":
        from .ops._names import scalar_type

        raise RuntimeError(
            "multinomial only supports floating-point dtypes for input, got: "
            f"{scalar_type(dtype)}\nglassgrad: call .float() on the weights first.")
    if num_samples <= 0:
        raise RuntimeError(f"cannot sample n_sample <= 0 samples\nglassgrad: multinomial("
                           f"num_samples={num_samples}); pass num_samples >= 1.")
    if not replacement and num_samples > probs.shape[-1]:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement\n"
            f"glassgrad: multinomial of {probs.shape[-1]} categories, num_samples={num_samples}; "
            "pass replacement=True or fewer samples.")
    if not (np.isfinite(probs) & (probs >= 0)).all():
        raise RuntimeError(
            "probability tensor contains either `inf`, `nan` or element < 0\nglassgrad: "
            "multinomial takes non-negative finite weights (e.g. softmax output, not logits).")
    if not (probs.reshape(-1, probs.shape[-1]).sum(-1) > 0).all():
        raise RuntimeError(
            "invalid multinomial distribution (sum of probabilities <= 0)\nglassgrad: a row of "
            "multinomial's weights is all zeros; give every row a positive weight.")


# --- in-place random fills (Tensor.uniform_, normal_, ...): ``(rng, shape, dtype, *args)`` ->
# array, PyTorch's argument checks first ------------------------------------------------------
def _positive(v, op: str, what: str) -> None:
    if not v > 0:
        raise RuntimeError(f"{op} expects {what} > 0.0, but found {what}={_num(v)}\n"
                           f"glassgrad: {op}({what}={_num(v)}) needs {what} > 0.")


def _floating(dt, kernel: str, continuous: str | None = None) -> None:
    """torch's refusal of an integer or bool tensor for a floating-point sampler."""
    if dt.kind == "f" or dt == _BF16:
        return
    from .ops._names import c_type, scalar_type

    if continuous:
        raise RuntimeError(f"{continuous} distribution is a continuous probability distribution. "
                           "dtype must be a floating point but you specified "
                           f"{(c_type if continuous == 'Cauchy' else scalar_type)(dt)}\n"
                           "glassgrad: sample into a float tensor, then convert.")
    raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type(dt)}\'\n'
                              "glassgrad: sample into a float tensor, then convert.")


def _fill_uniform(r, s, dt, a=0.0, b=1.0, **bounds):
    _floating(dt, "check_uniform_bounds")
    a, b = bounds.pop("from", a), bounds.pop("to", b)  # torch's keyword names
    if bounds:
        raise TypeError(f"uniform_() got an unexpected keyword argument '{next(iter(bounds))}'")
    _check_uniform_bounds(a, b, dt)
    if a > b:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={_num(a)} > "
            f"to={_num(b)}\nglassgrad: uniform_(from={_num(a)}, to={_num(b)}); pass from <= to.")
    return r.uniform(s, dt, a, b)


def _fill_normal(r, s, dt, mean=0.0, std=1.0, contiguous=True):
    _floating(dt, "normal_kernel_cpu")
    _check_std(std)
    return r.normal(s, dt, mean, std, contiguous)


def _fill_bernoulli(r, s, dt, p=0.5):
    if isinstance(p, Tensor):  # NOTE: torch expands p to the tensor's shape (its errors too)
        p = p.expand(s)._array
    _check_p(p)
    return r.bernoulli(s, dt, np.broadcast_to(p, s) if isinstance(p, np.ndarray) else p)


def _fill_exponential(r, s, dt, lambd=1.0):
    _floating(dt, "", "Exponential")
    _positive(lambd, "exponential_", "lambda")
    return r.exponential(s, dt, lambd)


def _fill_random(r, s, dt, *args, **bounds):
    """``random_()``, ``random_(to)``, ``random_(from, to)``; ``from``/``to`` by keyword too."""
    unknown = set(bounds) - {"from", "to"}
    if unknown or len(args) > 2 or (not args and "to" not in bounds):
        if not args and not bounds:  # PyTorch: [0, 2 ** mantissa] for floats, [0, max] for ints
            return r.random(s, dt)
        raise TypeError("random_() received an invalid combination of arguments\nglassgrad: "
                        "pass random_(), random_(to) or random_(from, to).")
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        low, high = (args[0], bounds["to"]) if "to" in bounds else (0, args[0])
    else:
        low, high = bounds.get("from", 0), bounds.get("to")
    if high is None:  # random_(from, None): up to the dtype's largest value
        high = 2 ** (np.finfo(dt).nmant + 1) + 1 if dt.kind == "f" else int(np.iinfo(dt).max) + 1
    _check_range(low, high, "random_", dt)
    return r.integers(s, dt, low, high)


def _check_bounds(low, high, np_dtype) -> None:
    """PyTorch's random_/randint bounds check: ``from`` and ``to - 1`` must be values of the
    dtype."""
    from .ops._names import c_type

    if np_dtype.kind == "f" or np_dtype == _BF16:
        hi = float(ml_dtypes.finfo(np_dtype).max)
        lo = -hi
    elif np_dtype.kind == "b":
        lo, hi = 0, 1
    else:
        lo, hi = int(np.iinfo(np_dtype).min), int(np.iinfo(np_dtype).max)
    for name, v in (("from", low), ("to - 1", high - 1)):
        if not lo <= v <= hi:
            raise RuntimeError(f"{name} is out of bounds for {c_type(np_dtype)}\nglassgrad: "
                               f"random integers of a {np_dtype} tensor lie in [{lo}, {hi}].")


def _fill_geometric(r, s, dt, p):
    if dt == np.bool_:
        _floating(dt, "geometric_cpu")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}\n"
                           f"glassgrad: geometric_(p={_num(p)}) needs 0 < p < 1.")
    return r.geometric(s, dt, p)


def _fill_log_normal(r, s, dt, mean=1.0, std=2.0):
    _floating(dt, "log_normal_cpu")
    _positive(std, "log_normal_", "std")
    return r.log_normal(s, dt, mean, std)


def _fill_cauchy(r, s, dt, median=0.0, sigma=1.0):
    _floating(dt, "", "Cauchy")
    _positive(sigma, "cauchy_", "sigma")
    return r.cauchy(s, dt, median, sigma)


_C_INT = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int32_t"}


def _check_randperm(n: int, dt) -> None:
    """torch's randperm refusals: bool, and an ``n`` whose values the dtype cannot all hold
    (a float16 past 2049, a float32 past 2^24+1, an int8 past 128: ``n - 1`` overflows)."""
    if dt == np.bool_:
        raise NotImplementedError('"randperm" not implemented for \'Bool\'\nglassgrad: '
                                  "randperm makes indices; pass an integer or float dtype.")
    limit = {np.dtype(np.float16): ("2049", 2049, "Half"),
             np.dtype(np.float32): ("2^24+1", 2**24 + 1, "Float"),
             np.dtype(np.float64): ("2^53+1", 2**53 + 1, "Double")}.get(dt)
    if limit is not None and n > limit[1]:
        raise RuntimeError(f"n cannot be greater than {limit[0]} for {limit[2]} type.\n"
                           f"glassgrad: randperm({n}) in {dt} would repeat values; use int64.")
    if dt.name in _C_INT and n - 1 > np.iinfo(dt).max:
        raise RuntimeError(f"value cannot be converted to type {_C_INT[dt.name]} without "
                           f"overflow\nglassgrad: randperm({n}) needs values up to {n - 1}, "
                           f"past {dt}'s {np.iinfo(dt).max}; use int64.")


def _check_uniform_bounds(a, b, dt) -> None:
    """torch's check_uniform_bounds: from and to finite in the dtype, to - from too."""
    from .ops._names import c_type, scalar_type

    top = float(ml_dtypes.finfo(dt).max)
    for name, v in (("from", a), ("to", b)):
        if not -top <= v <= top:
            raise RuntimeError(f"{name} is out of bounds for {c_type(dt)}\nglassgrad: "
                               f"uniform_({name}={_num(v)}) in {dt}, whose values lie within "
                               f"+-{top:g}.")
    if a <= b and b - a > top:
        raise RuntimeError(
            f"uniform_ expects to-from <= std::numeric_limits<{scalar_type(dt)}>::max(), but "
            f"found to={_num(b)} and from={_num(a)} which result in to-from to exceed the limit"
            f"\nglassgrad: uniform_ samples from + (to - from) * u; keep to - from finite.")


def _dropout_dtype(dt, p):
    """``dt``, or torch's error for dropout of an integer or bool tensor (its mask scaled by
    ``1 / (1 - p)`` is a float; p == 1 multiplies by zero and keeps the dtype)."""
    if p != 1.0 and not (dt.kind == "f" or dt == _BF16):
        from .ops._names import scalar_type

        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{scalar_type(dt)}\nglassgrad: dropout of a {dt} tensor; dropout "
                           "scales by 1 / (1 - p), so it takes a floating-point input.")
    return dt


def _randint_args(low, high, size) -> None:
    """torch's TypeError for randint bounds that are not ints (0.5, 10.0) or a size that is not
    a sequence (randint(0, 10, 3)); the sizes' own elements are checked with the shape."""
    given = [v for v in (low, high, size) if v is not None]
    if (any(isinstance(v, (float, np.floating)) for v in given)
            or given and not isinstance(given[-1], (tuple, list))):
        got = ", ".join(type(v).__name__ for v in given)
        raise TypeError(
            f"randint() received an invalid combination of arguments - got ({got}), but "
            "expected one of:\n * (int high, tuple of ints size, *, torch.Generator generator, "
            "...)\n * (int low, int high, tuple of ints size, *, torch.Generator generator, ...)"
            "\nglassgrad: randint takes int bounds and a tuple size: randint(0, 10, (3,)).")
