"""Custom differentiable operations: ``Function``, its ``ctx``, ``once_differentiable``
(``torch.autograd.Function``).

The ctx a ``forward`` receives *is* the graph node (``y.grad_fn``), as in PyTorch: a
``<ClassName>Backward`` node holding the saved tensors, ``needs_input_grad`` and any attribute the
user set. Its edges are one per Tensor input; ``backward``'s results are checked with PyTorch's
errors (count, shape) and the engine reduces and casts them as it does for every node.

Example::

    class Exp(glassgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = x.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad):
            (result,) = ctx.saved_tensors
            return grad * result
"""

from __future__ import annotations

import contextlib
import functools

from ..backend import xp
from . import engine, forward_ad
from .grad_mode import _state, no_grad
from .graph import Node, SavedTensor, _Hooks, _user_frame, grad_accumulator
from .._user_warning import warn_user


class FunctionCtx:
    """What ``forward`` can tell backward (``torch.autograd.function.FunctionCtx``)."""

    def save_for_backward(self, *tensors) -> None:
        """Keep tensors (inputs, outputs or None) for backward, with in-place version checks."""
        self.to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors) -> None:
        """Declare inputs that forward modified in place (they are returned as outputs)."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that get no gradient (indices, masks): they do not require grad."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward receives None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = bool(value)


class BackwardCFunction(FunctionCtx, Node):
    """The node of one ``Function.apply`` call; ``name()`` is ``<ClassName>Backward``."""

    _forward_cls = None
    _is_tensor_arg: tuple = ()
    _out_meta: tuple = ()
    materialize_grads = True

    def apply(self, *grads):
        """Call the Function's backward with this ctx (``BackwardCFunction.apply``)."""
        return self._forward_cls.backward(self, *grads)

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward``, unpacked (RuntimeError once freed)."""
        return tuple(self._unpack_saved())

    @property
    def saved_variables(self) -> tuple:
        """``saved_tensors`` under its old name, with torch's DeprecationWarning."""
        warn_user("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning,
                  stacklevel=2)
        return self.saved_tensors

    @property
    def needs_input_grad(self) -> tuple:
        return self._needs_input_grad

    def _run_backward(self, grads):
        if self.materialize_grads:
            grads = [
                _zeros(meta) if g is None and meta is not None else g
                for g, meta in zip(grads, self._out_meta)
            ]
        out = self._forward_cls.backward(self, *grads)
        return self._check_grads(out)

    def _check_grads(self, out) -> tuple:
        if not isinstance(out, tuple):
            out = (out,)
        n = len(self._is_tensor_arg)
        if len(out) > n and all(g is None for g in out[n:]):
            out = out[:n]
        if len(out) != n:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected {n}, "
                f"got {len(out)})\nglassgrad: {self._forward_cls.__name__}.backward must return "
                "one value per forward argument (after ctx), None for arguments that need no "
                "gradient."
            )
        grads = []
        for i, (g, is_tensor) in enumerate(zip(out, self._is_tensor_arg)):
            if g is not None and not isinstance(g, engine._Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            if is_tensor:
                grads.append(g)
            elif g is not None:
                raise RuntimeError(
                    f"function {self.name()} returned a gradient different than None at position "
                    f"{i + 1}, but the corresponding forward input was not a Variable"
                )
        return tuple(grads)


def _both_backward_and_vjp(ctx, *_):
    raise RuntimeError(
        "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You should "
        f"only implement one of them.\nglassgrad: {ctx._forward_cls.__name__} defines both; "
        "vjp is another name for backward.")


def _zeros(meta):
    shape, np_dtype = meta
    return engine._Tensor._make(xp.zeros(shape, dtype=np_dtype))


def _with_defaults(forward, args: tuple) -> tuple:
    """``args`` with forward's defaults for the positional parameters not passed: the inputs
    torch hands ``setup_context``."""
    defaults = forward.__defaults__
    bound = hasattr(forward, "__self__")  # a classmethod forward: cls is not an input
    missing = forward.__code__.co_argcount - bound - len(args) if defaults else 0
    return args + defaults[len(defaults) - missing:] if 0 < missing <= len(defaults) else args


class Function:
    """Base class of custom differentiable operations (``torch.autograd.Function``).

    Subclasses define static ``forward(ctx, *args)`` (runs under no_grad on Tensors and other
    values) and ``backward(ctx, *grads)`` returning one gradient (or None) per forward argument;
    call them with ``MyFn.apply(*args)``. Raises RuntimeError with PyTorch's wording when backward
    returns the wrong number or shape of gradients.
    """

    _backward_cls: type = BackwardCFunction

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "vjp" in cls.__dict__ and "backward" not in cls.__dict__:
            cls.backward = cls.__dict__["vjp"]  # PyTorch's other name for backward
        body = {"_forward_cls": cls, "__module__": cls.__module__}
        if cls.backward is not Function.backward and cls.vjp is not Function.vjp \
                and cls.backward is not cls.vjp:  # refused when backward runs, as in PyTorch
            body["apply"] = body["_run_backward"] = _both_backward_and_vjp
        cls._backward_cls = type(cls.__name__ + "Backward", (BackwardCFunction,), body)

    def __init__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` and, when grad mode is on and a Tensor input requires grad, record a
        ``<ClassName>Backward`` node that calls ``backward``."""
        Tensor = engine._Tensor
        ctx = cls._backward_cls.__new__(cls._backward_cls)
        Node.__init__(ctx, (), (), None, None)
        is_tensor = tuple(isinstance(a, Tensor) for a in args)
        ctx._needs_input_grad = tuple(t and a._requires_grad for t, a in zip(is_tensor, args))
        recording = _state.enabled and any(ctx._needs_input_grad)
        # NOTE [Forward AD] in forward_ad.py: forward sees primals; jvp gives the tangents
        dual = _Hooks.forward_ad is not None
        with no_grad(), forward_ad.paused() if dual else contextlib.nullcontext():
            if cls.setup_context is not Function.setup_context:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, _with_defaults(cls.forward, args), outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        # edges are taken before a dirty input gets this node as its new history
        edges = tuple(
            (a.grad_fn, a._output_nr)
            if a.grad_fn is not None
            else ((grad_accumulator(a), 0) if a._requires_grad else (None, 0))
            for a, t in zip(args, is_tensor)
            if t
        )
        single = not isinstance(outputs, tuple)
        outs = _wrap_outputs(ctx, args, (outputs,) if single else outputs, recording)
        if recording:
            ctx.next_functions = edges
            ctx._is_tensor_arg = is_tensor
            ctx._in_meta = tuple(
                (a._array.shape, a._array.dtype) for a, t in zip(args, is_tensor) if t
            )
            ctx._n_outputs = len(outs)
            ctx._saved = _save(ctx, outs)
            if _Hooks.record_source:
                from .anomaly import note_source

                note_source(ctx, _user_frame())
        if dual:
            forward_ad.function_jvp(cls, ctx, args, outs)
        return outs[0] if single else outs


def _wrap_outputs(ctx, args, outputs, recording) -> tuple:
    Tensor = engine._Tensor
    dirty = {id(t) for t in getattr(ctx, "dirty_tensors", ())}
    non_diff = {id(t) for t in getattr(ctx, "non_differentiable", ())}
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    outs = []
    meta = []
    for i, o in enumerate(outputs):
        if not isinstance(o, Tensor):
            outs.append(o)
            meta.append(None)
            continue
        if id(o) in dirty:
            o._vc[0] += 1
            if recording and id(o) not in non_diff:
                _take_history(o, ctx, i)
        else:
            if id(o) in input_ids:  # an input returned as-is: a new tensor sharing it, as PyTorch
                alias = Tensor._make(o._array)
                alias._vc = o._vc
                o = alias
            if recording and id(o) not in non_diff and o.is_floating_point():
                o._requires_grad = True
                o.grad_fn = ctx
                o._output_nr = i
            if o._base is not None:  # a view made in forward: in-place writes to it are refused
                from ..ops import _view_meta  # (NOTE [View creation]; ops import this module)

                _view_meta.mark(o, _view_meta.CUSTOM_FUNCTION)
        outs.append(o)
        # NOTE: meta None = backward gets None, not zeros: non-tensors, and non-differentiable
        # outputs when forward set ctx._materialize_non_diff_grads = False (as torch's)
        materialize = id(o) not in non_diff or getattr(ctx, "_materialize_non_diff_grads", True)
        meta.append((o._array.shape, o._array.dtype) if materialize and o.is_floating_point()
                    else None)
    ctx._out_meta = tuple(meta)
    return tuple(outs)


def _take_history(t, ctx, i) -> None:
    if t.grad_fn is None and t._requires_grad:
        raise RuntimeError(
            "a leaf Variable that requires grad has been used in an in-place operation.\n"
            f"glassgrad: {ctx._forward_cls.__name__}.forward marked a leaf of shape "
            f"{list(t.shape)} dirty; pass a clone of it instead."
        )
    t._requires_grad = True
    t.grad_fn = ctx
    t._output_nr = i
    if t._base is not None:
        t._rebase_history()


def _save(ctx, outs) -> tuple:
    to_save = getattr(ctx, "to_save", None)
    if not to_save:
        return ()
    Tensor = engine._Tensor
    out_nr = {id(o): i for i, o in enumerate(outs) if isinstance(o, Tensor)}
    saved = []
    for t in to_save:
        if t is None:
            saved.append(None)
        elif not isinstance(t, Tensor):
            raise TypeError(
                f"save_for_backward can only save variables, but argument {len(saved)} is of type "
                f"{type(t).__name__}"
            )
        elif id(t) in out_nr:
            saved.append(SavedTensor(t, True, out_nr[id(t)]))
        else:
            saved.append(SavedTensor(t, False))
    del ctx.to_save
    return tuple(saved)


class InplaceFunction(Function):
    """A Function that may write its inputs in place (``torch.autograd.function.InplaceFunction``):
    a Function whose instances carry an ``inplace`` flag; ``apply`` is Function's, and forward
    marks what it wrote with ``ctx.mark_dirty``."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace


def once_differentiable(fn):
    """Decorate a Function's backward that cannot itself be differentiated: it runs under no_grad,
    and a backward that reaches its result raises "trying to differentiate twice a function that
    was marked with @once_differentiable" (``torch.autograd.function.once_differentiable``)."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not _state.enabled:
            return outputs
        Tensor = engine._Tensor
        if not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        # as PyTorch: the error node hangs off fresh leaves, so only a backward that reaches it
        # fails (grad() w.r.t. earlier inputs finds them unused)
        fakes = [o.detach().requires_grad_() if isinstance(o, Tensor) else None for o in outs]
        err = _DelayedError(
            "trying to differentiate twice a function that was marked with @once_differentiable\n"
            f"glassgrad: {ctx.name()}'s backward is not differentiable; a double backward "
            "(create_graph=True) cannot go through it.",
            tuple((grad_accumulator(f), 0) if f is not None else (None, 0) for f in fakes),
        )
        wrapped = []
        for i, (o, f) in enumerate(zip(outs, fakes)):
            if f is not None:
                o = f._alias()
                o._requires_grad = True
                o.grad_fn = err
                o._output_nr = i
            wrapped.append(o)
        return wrapped[0] if single else tuple(wrapped)

    return wrapper


class _DelayedError(Node):
    """A node that raises when backward reaches it (PyTorch's ``DelayedError``)."""

    __slots__ = ("_n_outputs", "msg")

    def __init__(self, msg: str, next_functions):
        Node.__init__(self, next_functions, None, None, None)
        self.msg = msg
        self._n_outputs = len(next_functions)

    def name(self) -> str:
        return "DelayedError"

    def _run_backward(self, grads):
        raise RuntimeError(self.msg)
