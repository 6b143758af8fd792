"""``vmap``: vectorising map over a dim of the inputs (``torch.func.vmap``).

The function runs once, on tensors whose arrays are batched (NOTE [Batched arrays] in
_batched_array.py); every op is rewritten to one NumPy call over the whole batch, not a loop.
"""

from __future__ import annotations

import functools

from ..tensor import Tensor
from ._batched_array import level_of
from ._batching import AddBatchDim, RemoveBatchDim, VmapScope, new_level
from ._pytree import broadcast_to_and_flatten, tree_flatten, tree_unflatten


def _name(func) -> str:
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return getattr(func, "__name__", repr(func))


def _check_randomness(randomness) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}"
        )


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """Vectorise ``func`` over dim ``in_dims`` of its inputs (``torch.func.vmap``).

    ``in_dims``/``out_dims`` are an int, None (not mapped) or a pytree matching the inputs/outputs;
    the mapped dim is moved to ``out_dims`` of every output. ``randomness`` is 'error' (random ops
    raise), 'different' (one draw per batch entry) or 'same' (one draw shared by the batch);
    ``chunk_size`` runs the batch in pieces of that size. Raises ValueError for mismatched
    structures or batch sizes, as PyTorch.

    Example::

        >>> batched_dot = glassgrad.func.vmap(glassgrad.dot)   # (N, D), (N, D) -> (N,)
        >>> batched_dot(glassgrad.ones(3, 2), glassgrad.ones(3, 2))
        tensor([2., 2., 2.])
    """
    _check_randomness(randomness)
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    _check_out_dims(out_dims, func)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        size, flat_in_dims, flat_args, spec = _process_inputs(in_dims, args, func)
        if chunk_size is not None and chunk_size < size:
            return _chunked(func, size, flat_in_dims, flat_args, spec, out_dims, randomness,
                            chunk_size, kwargs)
        return _flat_vmap(func, size, flat_in_dims, flat_args, spec, out_dims, randomness,
                          kwargs)

    return wrapped


def _check_out_dims(out_dims, func) -> None:
    leaves, _ = tree_flatten(out_dims)
    for d in leaves:
        if d is not None and not isinstance(d, int):
            raise ValueError(
                f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None "
                "or a python collection of ints representing where in the outputs the vmapped "
                "dimension should appear."
            )


def _process_inputs(in_dims, args, func):
    if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
        raise ValueError(
            f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int "
            f"or a (potentially nested) tuple matching the structure of inputs, got: "
            f"{type(in_dims)}."
        )
    if len(args) == 0:
        raise ValueError(
            f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or "
            "you are trying to vmap over a function with no inputs. The latter is unsupported."
        )
    flat_args, spec = tree_flatten(args)
    flat_in_dims = broadcast_to_and_flatten(in_dims, spec)
    if flat_in_dims is None:
        raise ValueError(
            f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible "
            f"with the structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} "
            f"but inputs has structure {spec}."
        )
    for i, (arg, d) in enumerate(zip(flat_args, flat_in_dims)):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(  # noqa: TRY004 - PyTorch's exception type
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an "
                "input but in_dim must be either an integer dimension or None."
            )
        if not isinstance(arg, Tensor):
            raise ValueError(  # noqa: TRY004 - PyTorch's exception type
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an "
                f"input but the input is of type {type(arg)}. We cannot vmap over non-Tensor "
                "arguments, please use None as the respective in_dim"
            )
        nd = arg.dim()
        if d < -nd or d >= nd:
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for "
                f"some input, but that input is a Tensor of dimensionality {nd} so expected "
                f"in_dim to satisfy -{nd} <= in_dim < {nd}."
            )
        flat_in_dims[i] = d % nd
    sizes = [a.shape[d] for a, d in zip(flat_args, flat_in_dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
            f"{sizes} for the mapped dimension"
        )
    return sizes[0], flat_in_dims, flat_args, spec


def _flat_vmap(func, size, flat_in_dims, flat_args, spec, out_dims, randomness, kwargs):
    level = new_level()
    with VmapScope(level, size, randomness):
        batched = [a if d is None else AddBatchDim.apply(a, level=level, dim=d, size=size)
                   for a, d in zip(flat_args, flat_in_dims)]
        out = func(*tree_unflatten(batched, spec), **kwargs)
    return _unwrap(out, out_dims, level, size, func)


def _unwrap(out, out_dims, level, size, func):
    flat_out, out_spec = tree_flatten(out)
    if isinstance(out, Tensor) and isinstance(out_dims, tuple) and len(out_dims) == 1:
        flat_dims = list(out_dims)
    else:
        flat_dims = broadcast_to_and_flatten(out_dims, out_spec)
    if flat_dims is None:
        raise ValueError(
            f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
            f"with the structure of `outputs`. out_dims has structure "
            f"{tree_flatten(out_dims)[1]} but outputs has structure {out_spec}."
        )
    name = _name(func)
    result = []
    for o, d in zip(flat_out, flat_dims):
        if d is None:
            if isinstance(o, Tensor) and level in _levels(o):
                raise ValueError(
                    f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is "
                    "None"
                )
            result.append(o)
            continue
        if not isinstance(o, Tensor):
            raise ValueError(  # noqa: TRY004 - PyTorch's exception type
                f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(o)}. Did "
                "you mean to set out_dims= to None for output?"
            )
        nd = o.dim() + 1
        if not -nd <= d < nd:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got "
                f"{d})"
            )
        result.append(RemoveBatchDim.apply(o, level=level, dim=d % nd, size=size))
    return tree_unflatten(result, out_spec)


def _levels(t) -> tuple:
    arr = t._array
    return arr.levels if level_of(arr) else ()


def _chunked(func, size, flat_in_dims, flat_args, spec, out_dims, randomness, chunk_size,
             kwargs):
    from .. import _factories
    from ..ops.shape import cat

    state = _factories.get_rng_state() if randomness == "same" else None
    outputs = []
    for start in range(0, size, chunk_size):
        n = min(chunk_size, size - start)
        chunk = [a if d is None else a.narrow(d, start, n) for a, d in zip(flat_args, flat_in_dims)]
        if state is not None:
            _factories.set_rng_state(state)
        outputs.append(_flat_vmap(func, n, flat_in_dims, chunk, spec, out_dims, randomness,
                                  kwargs))
    flats = [tree_flatten(o) for o in outputs]
    out_spec = flats[0][1]
    flat_dims = broadcast_to_and_flatten(out_dims, out_spec)
    if isinstance(outputs[0], Tensor) and isinstance(out_dims, tuple) and len(out_dims) == 1:
        flat_dims = list(out_dims)
    joined = []
    for i, d in enumerate(flat_dims):
        parts = [f[0][i] for f in flats]
        joined.append(parts[0] if d is None else cat(parts, d))
    return tree_unflatten(joined, out_spec)
