"""Run an unchanged PyTorch script on glassgrad: ``torch`` and every ``torch.X.Y`` resolve to
``glassgrad`` and ``glassgrad.X.Y``.

From a shell, ``python -m glassgrad.alias script.py [args...]`` runs ``script.py`` as ``__main__``
with ``sys.argv == ["script.py", *args]`` and the script's folder first on ``sys.path``, as
``python script.py [args...]`` would (``python -m glassgrad.alias -m package.module [args...]``
runs a module the same way). In Python, ``glassgrad.alias.install()`` does the aliasing for the rest
of the process and ``uninstall()`` undoes it.

The alias is a meta-path finder placed first on ``sys.meta_path``: ``import torch.nn.functional as
F`` gives the very module object ``glassgrad.nn.functional`` (never a second copy), so
``isinstance`` checks, module-level state and monkey-patching agree between the two names. A
``torch`` submodule that glassgrad lacks raises ``ModuleNotFoundError`` with PyTorch's own wording
("No module named 'torch.X'") followed by what glassgrad is missing. PyTorch has no such tool; the
nearest is running a script in an environment where ``torch`` is another package.

Example::

    >>> import glassgrad.alias
    >>> glassgrad.alias.install()
    >>> import torch, glassgrad
    >>> torch is glassgrad
    True
    >>> from torch.optim.lr_scheduler import StepLR   # glassgrad.optim.lr_scheduler.StepLR
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import runpy
import sys
import types

__all__ = ["install", "uninstall", "is_installed", "main"]

_ALIAS, _TARGET = "torch", "glassgrad"


def _target_name(fullname: str) -> str:
    return _TARGET + fullname[len(_ALIAS):]


def _resolve(fullname: str) -> types.ModuleType:
    """The glassgrad module that ``fullname`` (``torch`` or ``torch.X.Y``) names."""
    target = _target_name(fullname)
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as e:
        # Only a missing glassgrad module is ours to explain; a missing third-party package
        # imported by an existing glassgrad module (e.g. onnx) keeps its own message.
        if e.name is None or not (e.name == target or target.startswith(e.name + ".")):
            raise
        missing = e
    # A module object held as an attribute but not importable by name (e.g. made with
    # types.ModuleType) still counts as the submodule.
    parent_name, _, leaf = fullname.rpartition(".")
    parent = sys.modules.get(parent_name)
    candidate = getattr(parent, leaf, None) if parent is not None else None
    if isinstance(candidate, types.ModuleType):
        return candidate
    gap = "" if missing.name == target else f" ({missing.name} is missing)"
    raise ModuleNotFoundError(
        f"No module named '{fullname}'\nglassgrad: `torch` is aliased to glassgrad "
        f"(glassgrad.alias), and glassgrad has no module {target}{gap}, so this part of PyTorch "
        "is not available here.",
        name=fullname,
    ) from None


class _AliasLoader(importlib.abc.Loader):
    """Hands back the already imported glassgrad module instead of executing anything."""

    def __init__(self, module: types.ModuleType) -> None:
        self._module = module

    def create_module(self, spec):
        return self._module

    def exec_module(self, module) -> None:
        # NOTE: nothing to run; the glassgrad module was executed once under its own name.
        pass


class _TorchAliasFinder(importlib.abc.MetaPathFinder):
    """Maps ``torch`` and ``torch.*`` imports to the glassgrad modules of the same path."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _ALIAS and not fullname.startswith(_ALIAS + "."):
            return None
        module = _resolve(fullname)
        is_package = hasattr(module, "__path__")
        return importlib.machinery.ModuleSpec(
            fullname, _AliasLoader(module), is_package=is_package
        )


_FINDER = _TorchAliasFinder()


def is_installed() -> bool:
    """Whether ``install()`` is in effect in this process."""
    return _FINDER in sys.meta_path


def install() -> None:
    """Alias ``torch`` to glassgrad for every later import in this process (idempotent).

    Raises RuntimeError if the real ``torch`` is already imported: its modules are cached in
    ``sys.modules``, so later ``import torch`` statements would keep returning them and the
    script would mix two libraries.
    """
    loaded = sys.modules.get(_ALIAS)
    if loaded is not None and not (loaded.__name__ == _TARGET or is_installed()):
        raise RuntimeError(
            "glassgrad.alias.install(): the real torch is already imported in this process "
            f"({getattr(loaded, '__file__', loaded)}), so `import torch` would keep returning it. "
            "Call install() before anything imports torch, or run the script with "
            "`python -m glassgrad.alias script.py`."
        )
    if not is_installed():
        sys.meta_path.insert(0, _FINDER)


def uninstall() -> None:
    """Undo ``install()``: remove the finder and the ``torch``/``torch.*`` entries it put in
    ``sys.modules`` (the glassgrad modules themselves stay imported)."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [n for n in sys.modules if n == _ALIAS or n.startswith(_ALIAS + ".")]:
        if getattr(sys.modules[name], "__name__", "").startswith(_TARGET):
            del sys.modules[name]


_USAGE = (
    "usage: python -m glassgrad.alias script.py [args...]\n"
    "       python -m glassgrad.alias -m package.module [args...]\n"
    "Runs a PyTorch program with `torch` aliased to glassgrad."
)


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``python -m glassgrad.alias``: install the alias, then run the script (or
    ``-m`` module) as ``__main__`` with ``sys.argv`` set as Python would set it. A missing
    script name prints the usage and exits with status 2."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in (["-h"], ["--help"]):
        print(_USAGE)
        raise SystemExit(0)
    if not argv or argv == ["-m"]:
        print(_USAGE, file=sys.stderr)
        raise SystemExit(2)
    install()
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return
    script = argv[0]
    sys.argv = [script, *argv[1:]]
    # NOTE: `python -m` put the current folder first on sys.path; `python script.py` puts the
    # script's folder there instead, and scripts import their neighbours (`import data`).
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    # NOTE: run the imported copy, not this __main__ one, so that one finder object serves
    # is_installed()/uninstall() for code that imports glassgrad.alias.
    from glassgrad.alias import main as _main

    _main()
