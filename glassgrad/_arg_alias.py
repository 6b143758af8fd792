"""torch's NumPy-style keyword aliases: ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=``.

PyTorch's argument parser accepts ``x.sum(axis=1, keepdims=True)`` on every function and Tensor
method it parses (the ones written in C++: ``torch.sum``, ``Tensor.max``, ``torch.cat``,
``torch.softmax``, ...), not on those written in Python (``torch.norm``, ``torch.split``,
``torch.unique``, ``Tensor.unflatten``, ``nn.functional.*``). Passing both names is a TypeError.

NOTE [Alias code]: a wrapper would cost every call one more Python frame. Instead ``install``
recompiles each such function once, at import, from its own source with the aliases added as
keyword-only parameters and one test in front of the body (``if axis is not _UNSET: ...``), and
swaps the function's ``__code__`` in place: the same function object (so ``Tensor.sum is
ops.reduction.sum`` still holds and every reference sees the new signature), the same file and
line numbers in tracebacks, and a call without an alias pays one identity test. A function whose
source cannot be recompiled so (a closure, a decorator, a lambda) is left as it was.
"""

from __future__ import annotations

import __future__
import ast
import inspect
import textwrap
import types

# canonical parameter -> torch's alias for it (torch/csrc/utils/python_arg_parser.cpp)
ALIASES = {"dim": "axis", "keepdim": "keepdims"}
# torch functions and methods with a dim that torch defines in Python: no aliases there
PYTHON_LEVEL = frozenset({"norm", "split", "unique", "unique_consecutive"})


class _Unset:
    __slots__ = ()

    def __repr__(self):
        return "<unset>"


_UNSET = _Unset()  # default of an alias parameter, and of a required dim that got an alias
_OPS: dict = {}  # "module.qualname" -> {canonical: its default, or _UNSET when required}


def _arg_alias(key: str, name: str, value, alias_value):
    """The value ``name`` takes when its alias may have been given (called only then)."""
    alias = ALIASES[name]
    op = key.rsplit(".", 1)[-1]
    if alias_value is _UNSET:  # a required dim given by neither name
        raise TypeError(f"{op}() missing 1 required positional argument: '{name}'")
    if value is not _OPS[key][name]:
        raise TypeError(f"{op}() got an unexpected keyword argument '{alias}'\nglassgrad: "
                        f"'{alias}' is torch's alias of '{name}'; pass one of the two.")
    return alias_value


def _rewritten(fn, key: str, names: list):
    """(``fn``'s code recompiled with the aliases of ``names``, how many positional parameters
    got a default), or None (NOTE [Alias code])."""
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    tree = ast.parse(textwrap.dedent("".join(lines)))
    node = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(node, ast.FunctionDef) or node.decorator_list or \
            node.name != fn.__code__.co_name:
        return None
    args = node.args
    positional = args.posonlyargs + args.args
    n_required = len(positional) - len(args.defaults)
    added = 0
    prologue = []
    for name in names:
        alias = ALIASES[name]
        test = f"{alias} is not _ARG_UNSET"
        i = next((i for i, a in enumerate(positional) if a.arg == name), None)
        if i is not None and i < n_required:  # a required dim: defaulted, and checked here
            if i != n_required - 1:
                return None  # a required parameter after it (gather's index)
            args.defaults.insert(0, ast.Name("_ARG_UNSET", ast.Load()))
            n_required -= 1
            added += 1
            test += f" or {name} is _ARG_UNSET"
        args.kwonlyargs.append(ast.arg(alias))
        args.kw_defaults.append(ast.Name("_ARG_UNSET", ast.Load()))
        prologue.append(f"if {test}:\n    {name} = _ARG_ALIAS({key!r}, {name!r}, {name}, {alias})")
    first_stmt = node.body[0]
    doc = isinstance(first_stmt, ast.Expr) and isinstance(first_stmt.value, ast.Constant)
    at = 1 if doc and len(node.body) > 1 else 0
    extra = ast.parse("\n".join(prologue)).body
    for stmt in extra:
        for sub in ast.walk(stmt):
            if "lineno" in sub._attributes:  # the prologue reports the body's first line
                ast.copy_location(sub, node.body[at])
                sub.end_lineno = sub.lineno
    node.body[at:at] = extra
    free = fn.__code__.co_freevars
    if free:  # a function made by a factory: the same free variables, from an enclosing def
        outer = ast.parse("def _arg_outer():\n    " + "; ".join(f"{v} = None" for v in free))
        outer.body[0].body.append(node)
        tree = outer
    ast.fix_missing_locations(tree)
    ast.increment_lineno(tree, first - 1)
    flags = fn.__code__.co_flags & __future__.annotations.compiler_flag
    code = compile(tree, fn.__code__.co_filename, "exec", flags=flags, dont_inherit=True)
    for _ in range(2 if free else 1):
        code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    if code.co_name != fn.__code__.co_name or code.co_freevars != free:
        return None
    return code, added


def _install_one(fn, names: list) -> None:
    key = f"{fn.__module__}.{fn.__qualname__}"
    done = _rewritten(fn, key, names)
    if done is None:
        return
    code, added = done
    params = inspect.signature(fn).parameters
    _OPS[key] = {n: _UNSET if params[n].default is inspect.Parameter.empty else params[n].default
                 for n in names}
    glb = fn.__globals__
    glb.setdefault("_ARG_UNSET", _UNSET)
    glb.setdefault("_ARG_ALIAS", _arg_alias)
    fn.__code__ = code
    fn.__defaults__ = (_UNSET,) * added + (fn.__defaults__ or ())
    fn.__kwdefaults__ = {**(fn.__kwdefaults__ or {}), **{ALIASES[n]: _UNSET for n in names}}


def _aliasable(fn) -> list:
    if not isinstance(fn, types.FunctionType) or fn.__name__ in PYTHON_LEVEL:
        return []
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return []
    return [n for n in ALIASES if n in params and ALIASES[n] not in params
            and params[n].kind in (params[n].POSITIONAL_OR_KEYWORD, params[n].KEYWORD_ONLY)]


def install(namespace: dict, cls) -> None:
    """Give every public function in ``namespace`` (glassgrad's top level) and every method of
    ``cls`` (Tensor) that has ``dim``/``keepdim`` torch's aliases for them, in place."""
    seen = set()
    values = [v for k, v in namespace.items() if not k.startswith("_")]
    values += [v for k, v in vars(cls).items() if not k.startswith("_")]
    for value in values:
        if not isinstance(value, types.FunctionType):
            continue
        fn = inspect.unwrap(value)
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        names = _aliasable(fn)
        if names:
            _install_one(fn, names)
