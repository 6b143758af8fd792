"""``functional_call``: run a module with given tensors in place of its parameters and buffers
(``torch.func.functional_call``)."""

from __future__ import annotations

from collections.abc import Sequence

from ..tensor import Tensor

_MISSING = object()


def _untie(module, tensors: dict) -> dict:
    """PyTorch's tie_weights=True: a value given for one name of a tied tensor goes to all."""
    names_of: dict = {}
    for name, t in list(module.named_parameters(remove_duplicate=False)) + list(
            module.named_buffers(remove_duplicate=False)):
        names_of.setdefault(id(t), set()).add(name)
    tied = {n: names for names in names_of.values() if len(names) > 1 for n in names}
    given = [n for n in tensors if n in tied]
    for name in given:
        group = tied[name]
        values = {id(tensors[n]) for n in group if n in tensors}
        if len(values) > 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(group)}, which are tied. "
                "Consider using tie_weights=False"
            )
    out = dict(tensors)
    for name in given:
        for other in tied[name]:
            out[other] = tensors[name]
    return out


def _swap(module, path: str, value):
    """Put ``value`` at dotted ``path`` (a parameter, buffer or plain attribute); return the old
    entry (``_MISSING`` when there was none)."""
    prefix, _, name = path.rpartition(".")
    owner = module.get_submodule(prefix)
    for store in (owner._parameters, owner._buffers):
        if name in store:
            old = store[name]
            if value is _MISSING:
                del store[name]
            else:
                store[name] = value
            return old
    old = owner.__dict__.get(name, _MISSING)
    if value is _MISSING:
        owner.__dict__.pop(name, None)
    else:
        if old is not _MISSING and not isinstance(old, Tensor) and old is not None:
            raise TypeError(f"attribute `{name}`: {old} is not an instance of torch.Tensor")
        owner.__dict__[name] = value
    return old


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """Call ``module(*args, **kwargs)`` with the tensors of ``parameter_and_buffer_dicts`` (a dict
    name -> Tensor, or a sequence of dicts with distinct keys) in place of its parameters and
    buffers (``torch.func.functional_call``).

    The swap lasts for the call only (restored even on error); the given tensors keep their
    autograd history, so gradients flow to them (``autograd.grad(loss, fast_weights,
    create_graph=True)`` for second-order MAML). Names absent from the dict keep the module's own
    tensors; ``strict=True`` raises RuntimeError for missing or unexpected keys; with
    ``tie_weights`` a value given for one of tied weights is used for all of them.
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        tensors = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError(
                "Expected all elements of parameter_and_buffer_dicts to be dictionaries"
            )
        keys = [k for d in parameter_and_buffer_dicts for k in d]
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
                "ambiguous"
            )
        tensors = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(  # noqa: TRY004 - PyTorch's exception type
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
            f"{type(parameter_and_buffer_dicts)}"
        )
    if tie_weights:
        tensors = _untie(module, tensors)
    if strict:
        valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        valid |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing, unexpected = sorted(valid - set(tensors)), sorted(set(tensors) - valid)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError(
                f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(msgs)
            )
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    originals = {}
    try:
        for name, value in tensors.items():
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"{value} is not an instance of torch.Tensor")
            originals[name] = _swap(module, name, value)
        return module(*args, **(kwargs or {}))
    finally:
        for name, old in originals.items():
            current = _swap(module, name, old)
            if isinstance(parameter_and_buffer_dicts, dict) and name in parameter_and_buffer_dicts:
                parameter_and_buffer_dicts[name] = current  # PyTorch writes reassignments back


def stack_module_state(models) -> tuple[dict, dict]:
    """``(params, buffers)``: each parameter and buffer of ``M`` models of one class stacked into
    a tensor of shape ``(M, *shape)``, for ensembling with ``vmap`` (``torch.func.
    stack_module_state``). Stacked parameters are new leaves that require grad. RuntimeError when
    the models differ in class, training mode or ``requires_grad``."""
    from ..ops.shape import stack

    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def leaf(tensors, name):
        grads = {t.requires_grad for t in tensors}
        if len(grads) > 1:
            raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
        out = stack([t.detach() for t in tensors])
        return out.requires_grad_() if grads == {True} else out

    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: leaf([p[k] for p in all_params], k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers
