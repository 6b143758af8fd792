"""The user's source line behind each ``explain_grad`` cause, found at explain time only.

explain_grad adds nothing to the hot path, so nothing recorded which line made a tensor. The line
is found the way a reader would: the calling frames hold the user's variable for the tensor (or a
module whose parameter it is); the last assignment to that name in the frame's code, at or before
the running line, is the line that made it (read with ``ast`` from the file), together with the
``with`` blocks around it (``torch.no_grad()``). A node recorded with its line (anomaly mode)
gives that line instead. Nothing found: the cause is given without a line.
"""

from __future__ import annotations

import ast
import linecache
import sys

from .graph import _PACKAGE_DIR


def _user_frames():
    f = sys._getframe(1)
    while f is not None:
        if not f.f_code.co_filename.startswith(_PACKAGE_DIR):
            yield f
        f = f.f_back


def find_name(tensor):
    """(frame, the user's name for ``tensor``: ``w`` or ``model.fc.weight``), innermost frame
    first; (None, None) when no frame holds it."""
    for f in _user_frames():
        for name, value in list(f.f_locals.items()):
            if value is tensor:
                return f, name
        for name, value in list(f.f_locals.items()):
            named = getattr(value, "named_parameters", None)
            if callable(named) and not isinstance(value, type):
                try:
                    for pname, p in named():
                        if p is tensor:
                            return f, f"{name}.{pname}"
                except Exception:  # noqa: BLE001 - a look-up must never fail the explanation
                    continue
    return None, None


def _scope(tree, code):
    """The ast node of ``code`` (a function, or the module for top-level code)."""
    if code.co_name == "<module>":
        return tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and \
                node.lineno <= code.co_firstlineno <= getattr(node, "end_lineno", node.lineno) \
                and getattr(node, "name", "<lambda>") == code.co_name:
            return node
    return None


def _targets(node):
    if isinstance(node, (ast.Assign,)):
        return node.targets
    if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)):
        return [node.target]
    return []


def _names(target):
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def assignment(frame, name: str):
    """(file, line, source text, enclosing ``with`` texts) of the last statement at or before
    ``frame``'s running line that binds ``name`` (the part before the first dot); None when the
    source cannot be read or holds no such statement."""
    file = frame.f_code.co_filename
    source = "".join(linecache.getlines(file))
    try:
        scope = _scope(ast.parse(source), frame.f_code)
    except SyntaxError:
        return None
    if scope is None:
        return None
    base = name.split(".")[0]
    best, withs = None, []

    def visit(node, blocks):
        nonlocal best, withs
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                    child is not scope:
                continue
            inner = blocks
            if isinstance(child, (ast.With, ast.AsyncWith)):
                inner = blocks + [ast.get_source_segment(source, i.context_expr) or ""
                                  for i in child.items]
            if any(base in _names(t) for t in _targets(child)) and \
                    child.lineno <= frame.f_lineno and (best is None or child.lineno >= best):
                best, withs = child.lineno, inner
            visit(child, inner)

    visit(scope, [])
    if best is None:
        return None
    return file, best, linecache.getline(file, best).strip(), withs


def made_at(tensor) -> str:
    """`` (made at file:line: `text`)`` for ``tensor``, or "" when no line is found."""
    fn = getattr(tensor, "grad_fn", None)
    if fn is not None and getattr(fn, "source", None):
        file, _, line = fn.source.rpartition(":")
        text = linecache.getline(file, int(line)).strip() if line.isdigit() else ""
        return f" (made at {fn.source}: `{text}`)" if text else f" (made at {fn.source})"
    frame, name = find_name(tensor)
    if frame is None:
        return ""
    found = assignment(frame, name)
    if found is None:
        return ""
    file, line, text, withs = found
    inside = [w for w in withs if "no_grad" in w or "inference_mode" in w]
    block = f", inside `with {inside[-1]}:`" if inside else ""
    return f" ({name} made at {file}:{line}: `{text}`{block})"


def copy_made_at(tensor) -> str:
    """`` (the copy made at file:line: `text`)``: the last ``deepcopy`` assignment before the
    running line of the frame that holds ``tensor``'s module, or ""."""
    frame, name = find_name(tensor)
    if frame is None:
        return ""
    file = frame.f_code.co_filename
    lines = linecache.getlines(file)
    first = frame.f_code.co_firstlineno if frame.f_code.co_name != "<module>" else 1
    for k in range(frame.f_lineno, first - 1, -1):
        text = lines[k - 1].strip() if k - 1 < len(lines) else ""
        if "deepcopy(" in text and "=" in text.split("deepcopy(")[0]:
            return f" (the copy made at {file}:{k}: `{text}`)"
    return ""
