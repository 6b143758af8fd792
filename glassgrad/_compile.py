"""``glassgrad.compile``: ``torch.compile``'s signature and checks, running the model eagerly.

glassgrad has no tracing compiler. ``compile(model)`` returns ``OptimizedModule`` (as torch does,
so state_dict keys carry ``_orig_mod.`` and programs that strip that prefix work) and
``compile(fn)`` a function wrapping ``fn``; both give exactly the eager numbers and warn once per
process that nothing was compiled. Works as ``@compile`` and ``@compile(mode=...)``.
"""

from __future__ import annotations

import functools

from . import _dynamo, _warn_always
from .nn.module import Module
from ._user_warning import warn_user

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
_warned = [False]


def _warn_once() -> None:
    if not _warned[0] or _warn_always.ALWAYS[0]:  # NOTE [Warn always]
        _warned[0] = True
        warn_user(
            "glassgrad.compile: glassgrad has no compiler, so the model runs eagerly (the same "
            "numbers, no speed-up); this warning is shown once.",
            UserWarning,
            stacklevel=3,
        )


class OptimizedModule(Module):
    """What ``compile(module)`` returns (``torch._dynamo.eval_frame.OptimizedModule``): calls the
    wrapped ``_orig_mod`` and forwards attribute reads to it."""

    def __init__(self, mod: Module) -> None:
        super().__init__()
        self._orig_mod = mod

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name: str):
        orig = self.__dict__.get("_modules", {}).get("_orig_mod")
        if orig is None:  # half-built (unpickling): no recursion through _modules
            raise AttributeError(name)
        if name == "_orig_mod":
            return orig
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(orig, name)


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend=None,
            mode=None, options=None, name=None, disable: bool = False, recompile_limit=None,
            isolate_recompiles: bool = False, shapes_spec=None):
    """Return ``model`` ready to run: eagerly, with a one-time UserWarning (``torch.compile``).

    Raises torch's errors for its arguments: RuntimeError "Unrecognized mode=..." and "Either
    mode or options can be specified", ``InvalidBackend`` for an unknown backend name,
    AssertionError "A callable function is expected" for a non-callable. ``disable=True``
    returns ``model`` itself. Example::

        >>> net = glassgrad.compile(glassgrad.nn.Linear(2, 2))  # doctest: +SKIP
        >>> list(net.state_dict())
        ['_orig_mod.weight', '_orig_mod.bias']
    """
    if model is None:  # @compile(...): torch checks the arguments when the model comes
        return functools.partial(
            compile, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
            options=options, name=name, disable=disable, recompile_limit=recompile_limit,
            isolate_recompiles=isolate_recompiles, shapes_spec=shapes_spec,
        )
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same "
            "time."
        )
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if isinstance(backend, str) and backend not in _dynamo._BACKENDS:
        raise _dynamo.exc.InvalidBackend(backend)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if disable:
        return model
    _warn_once()
    if isinstance(model, Module):
        return OptimizedModule(model)

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        return model(*args, **kwargs)

    return compiled
