"""``functional_call``: run a module with given tensors in place of its parameters and buffers
(``torch.func.functional_call``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..nn.module import Module
from ..tensor import Tensor

_MISSING = object()
_NAMED_MODULES = Module.named_modules
_NAMED_PARAMETERS = Module.named_parameters
_NAMED_BUFFERS = Module.named_buffers
_NAMED_MEMBERS = Module._named_members


def _members(module) -> dict:
    """Every parameter, then every buffer, of ``module`` as ``dotted name -> (tensor, store, key,
    is_parameter, owner)`` (``store[key]`` holds it): the names that
    ``named_parameters(remove_duplicate=False)`` and ``named_buffers(...)`` give, in one walk."""
    # NOTE [Hot path]: functional_call runs this on every call (MAML: per task and inner step),
    # so it walks the ``_modules`` dicts directly (depth first, as ``named_modules``) instead of
    # nesting generators. A module that overrides the iteration methods gets the generic walk,
    # so the names stay its own.
    cls = type(module)
    if not (cls.named_parameters is _NAMED_PARAMETERS and cls.named_buffers is _NAMED_BUFFERS
            and cls._named_members is _NAMED_MEMBERS):
        return _members_generic(module)
    out = {}
    with_buffers = []
    stack = [("", module)]
    while stack:
        prefix, m = stack.pop()
        if type(m).named_modules is not _NAMED_MODULES:
            return _members_generic(module)
        store = m._parameters
        for key, t in store.items():
            if t is not None:
                out[prefix + key] = (t, store, key, True, m)
        if m._buffers:
            with_buffers.append((prefix, m))
        children = m._modules
        if children:
            for name, child in reversed(children.items()):
                if child is not None:
                    stack.append((prefix + name + ".", child))
    for prefix, m in with_buffers:
        store = m._buffers
        for key, t in store.items():
            if t is not None:
                out.setdefault(prefix + key, (t, store, key, False, m))
    return out


def _members_generic(module) -> dict:
    """``_members`` through the public iteration methods (which a subclass may override); a name
    not found where it says gets store None (``functional_call`` then swaps it the general way)."""
    out = {}
    for is_param, named in ((True, module.named_parameters), (False, module.named_buffers)):
        for name, t in named(remove_duplicate=False):
            prefix, _, key = name.rpartition(".")
            try:
                owner = module.get_submodule(prefix)
            except AttributeError:
                owner = None
            store = getattr(owner, "_parameters" if is_param else "_buffers", None)
            if store is None or store.get(key) is not t:
                owner = store = None
            out.setdefault(name, (t, store, key, is_param, owner))
    return out


def _untie(members: dict, tensors: dict) -> dict:
    """PyTorch's tie_weights=True: a value given for one name of a tied tensor goes to all."""
    if len({id(entry[0]) for entry in members.values()}) == len(members):
        return tensors  # nothing is tied (the common case)
    names_of: dict = {}
    for name, entry in members.items():
        names_of.setdefault(id(entry[0]), set()).add(name)
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


def _in_store(entry) -> bool:
    """Whether ``_swap`` would find the name of ``_members``' ``entry`` where ``entry`` says (a
    forward may have moved it): then the swap goes straight into that store."""
    _, store, key, is_param, owner = entry
    # the general swap looks in _parameters before _buffers
    return store is not None and key in store and (is_param or key not in owner._parameters)


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
    given = parameter_and_buffer_dicts
    if isinstance(given, dict):
        tensors = given
    elif isinstance(given, Sequence):
        if not all(isinstance(d, dict) for d in given):
            raise ValueError(
                "Expected all elements of parameter_and_buffer_dicts to be dictionaries"
            )
        counts = Counter(k for d in given for k in d)
        repeated = sorted(k for k, n in counts.items() if n > 1)
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
                "ambiguous"
            )
        tensors = {k: v for d in given for k, v in d.items()}
        given = None  # nothing to write back
    else:
        raise ValueError(  # noqa: TRY004 - PyTorch's exception type
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
            f"{type(parameter_and_buffer_dicts)}"
        )
    members = _members(module)
    if tie_weights:
        tensors = _untie(members, tensors)
    if strict:
        missing, unexpected = sorted(members.keys() - tensors.keys()), sorted(
            tensors.keys() - members.keys())
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
    fast = []  # the _members entry of each swapped name, None where the general _swap did it
    try:
        for name, value in tensors.items():
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"{value} is not an instance of torch.Tensor")
            entry = members.get(name)
            if entry is not None and _in_store(entry):
                store, key = entry[1], entry[2]
                originals[name] = store[key]
                store[key] = value
                fast.append(entry)
            else:
                originals[name] = _swap(module, name, value)
                fast.append(None)
        return module(*args, **kwargs) if kwargs else module(*args)
    finally:
        for (name, old), entry in zip(originals.items(), fast):
            if entry is not None and old is not _MISSING and _in_store(entry):
                store, key = entry[1], entry[2]
                current = store[key]
                store[key] = old
            else:
                current = _swap(module, name, old)
            if given is not None and name in given and given[name] is not current:
                given[name] = current  # PyTorch writes reassignments back


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
