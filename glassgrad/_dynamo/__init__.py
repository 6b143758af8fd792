"""``glassgrad._dynamo``: the names programs probe on ``torch._dynamo``.

glassgrad has no tracing compiler: ``torch.compile`` runs models eagerly (``glassgrad._compile``),
so ``is_compiling()`` is always False, ``disable``/``allow_in_graph`` return the function they
decorate and ``config`` records the options programs set.
"""

from __future__ import annotations

from . import exc  # noqa: F401

# torch 2.13's registered backends with their tags; glassgrad accepts every name and runs eagerly
_DEBUG = (
    "aot_eager", "aot_eager_decomp_partition", "aot_eager_decomp_partition_crossref",
    "aot_eager_decomp_partition_with_mode", "aot_eager_default_partitioner", "aot_ts",
    "dynamo_accuracy_minifier_backend", "dynamo_minifier_backend", "eager", "eager_debug",
    "eager_noexcept", "invoke_subgraph", "pre_dispatch_eager", "ts",
)
_BACKENDS = {**dict.fromkeys(("cudagraphs", "inductor", "openxla", "tvm"), ()),
             **dict.fromkeys(_DEBUG, ("debug",)), "openxla_eval": ("experimental",)}


def list_backends(exclude_tags=("debug", "experimental")) -> list[str]:
    """The backend names ``compile`` accepts, without those tagged ``exclude_tags``
    (``torch._dynamo.list_backends``); in glassgrad all of them run the model eagerly."""
    return sorted(n for n, tags in _BACKENDS.items() if not set(tags) & set(exclude_tags or ()))


def is_compiling() -> bool:
    """False: nothing is ever being traced (``torch._dynamo.is_compiling``)."""
    return False


def reset() -> None:
    """Forget compiled code: there is none (``torch._dynamo.reset``)."""


def disable(fn=None, recursive: bool = True, *, reason=None, wrapping: bool = True):
    """Keep ``fn`` out of compilation: it already runs eagerly, so ``fn`` itself (or a decorator
    returning its argument when ``fn`` is None) (``torch._dynamo.disable``)."""
    return (lambda f: f) if fn is None else fn


def allow_in_graph(fn):
    """Mark ``fn`` traceable as a whole: returns ``fn`` (``torch._dynamo.allow_in_graph``)."""
    return fn


def mark_dynamic(t, index, **kwargs) -> None:
    """Mark a dimension as dynamic: eager code has no static shapes to relax (a no-op)."""


class _Config:
    """``torch._dynamo.config``: the options programs set; an unknown name is AttributeError
    "torch._dynamo.config.<name> does not exist", as in torch."""

    _defaults = {
        "suppress_errors": False, "cache_size_limit": 8, "recompile_limit": 8, "verbose": False,
        "capture_scalar_outputs": False, "optimize_ddp": True, "automatic_dynamic_shapes": True,
        "assume_static_by_default": True, "accumulated_cache_size_limit": 256,
    }

    def __init__(self):
        object.__setattr__(self, "_values", dict(self._defaults))

    def __getattr__(self, name):
        if name in self._values:
            return self._values[name]
        raise AttributeError(f"torch._dynamo.config.{name} does not exist")

    def __setattr__(self, name, value):
        if name not in self._values:
            raise AttributeError(f"torch._dynamo.config.{name} does not exist")
        self._values[name] = value


config = _Config()
