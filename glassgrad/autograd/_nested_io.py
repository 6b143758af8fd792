"""``torch.autograd.NestedIOFunction``: the legacy, instance-style custom function whose
``forward_extended``/``backward_extended`` take and return nested lists/tuples/dicts of tensors.

The class is kept by torch for old code; its ``__call__`` relies on a pre-1.0 ``_do_forward``
that torch 2.x no longer has, so calling an instance raises AttributeError there. glassgrad
runs it as its docstrings describe: the nested inputs are flattened into one ``Function``
call (one ``<Name>Backward`` node), ``forward_extended`` sees the nested inputs (detached, as
torch's ``.data``), the outputs come back in ``forward_extended``'s nesting, and
``backward_extended`` receives the output gradients in that nesting and returns one gradient
(or None) per nested input.
"""

from __future__ import annotations

from .function import Function


def _flat(obj):
    """The tensors of a nested structure, depth first (torch's ``_iter_tensors``)."""
    from ..tensor import Tensor

    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _flat(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _flat(x)


def _flat_grads(obj):
    """Gradients of a nested result, None entries kept (torch's ``_iter_None_tensors``)."""
    from ..tensor import Tensor

    if obj is None or isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _flat_grads(x)
    else:
        raise ValueError(f"NestedIOFunction.backward_extended: expected a Tensor, None or a "
                         f"list/tuple of them, got {type(obj).__name__}")


def _nest(flat, proto):
    """``flat`` (a sequence of tensors) in ``proto``'s nesting (torch's ``_unflatten``)."""
    from ..tensor import Tensor

    it = iter(flat)

    def build(p):
        if isinstance(p, Tensor):
            return next(it)
        if isinstance(p, (list, tuple)):
            items = [build(x) for x in p]
            return type(p)(*items) if hasattr(p, "_fields") else type(p)(items)
        if isinstance(p, dict):
            return {k: build(v) for k, v in p.items()}
        return p

    return build(proto)


class NestedIOFunction:
    """Legacy custom function on nested inputs/outputs (``torch.autograd.NestedIOFunction``):
    subclass it, define ``forward_extended(self, *nested_inputs)`` and
    ``backward_extended(self, *nested_grad_outputs)``, then call an instance
    ``fn(*nested_inputs)``. ``save_for_backward`` / ``saved_tensors`` keep the nesting;
    ``mark_dirty`` and ``mark_non_differentiable`` take nested tensors. New code should use
    ``Function`` (as torch says); torch 2.x's own instances cannot be called."""

    def __call__(self, *input):
        self._nested_input = input
        flat = tuple(_flat(input))
        runner = type(f"{type(self).__name__}", (_NestedRun,), {"_owner": self})
        out = runner.apply(*flat)
        return _nest(out if isinstance(out, tuple) else (out,), self._nested_output)

    def save_for_backward(self, *args) -> None:
        """Keep nested tensors for ``backward_extended`` (read them as ``saved_tensors``)."""
        self.to_save = tuple(_flat(args))
        self._to_save_nested = args

    @property
    def saved_tensors(self):
        """The saved tensors in ``save_for_backward``'s nesting, version-checked."""
        return _nest(self._ctx.saved_tensors, self._to_save_nested)

    def mark_dirty(self, *args, **kwargs) -> None:
        """Declare nested inputs that ``forward_extended`` modified in place."""
        self.dirty_tensors = tuple(_flat((args, kwargs)))

    def mark_non_differentiable(self, *args, **kwargs) -> None:
        """Declare nested outputs that get no gradient."""
        self.non_differentiable = tuple(_flat((args, kwargs)))

    def forward_extended(self, *input):
        """User-defined forward on the nested inputs; returns nested outputs."""
        raise NotImplementedError

    def backward_extended(self, *grad_output):
        """User-defined backward: nested output gradients in, one gradient per input out."""
        raise NotImplementedError


class _NestedRun(Function):
    """The one ``Function`` call a ``NestedIOFunction`` instance makes (its node)."""

    _owner: NestedIOFunction

    @classmethod
    def forward(cls, ctx, *flat_input):
        fn = cls._owner
        nested = _nest([t.detach() for t in flat_input], fn._nested_input)
        del fn._nested_input
        result = fn.forward_extended(*nested)
        fn._nested_output = result
        fn._ctx = ctx
        ctx.save_for_backward(*getattr(fn, "to_save", ()))
        # forward saw detached aliases: the marks are translated back to the Function's inputs
        by_id = {id(d): t for d, t in zip(_flat(nested), flat_input)}
        if getattr(fn, "dirty_tensors", None):
            ctx.mark_dirty(*(by_id.get(id(t), t) for t in fn.dirty_tensors))
        outs = tuple(by_id.get(id(t), t) for t in _flat(result))
        if getattr(fn, "non_differentiable", None):
            ctx.mark_non_differentiable(*fn.non_differentiable)
        return outs

    @classmethod
    def backward(cls, ctx, *grads):
        fn = cls._owner
        result = fn.backward_extended(*_nest(grads, fn._nested_output))
        return tuple(_flat_grads(result if isinstance(result, (list, tuple)) else (result,)))
