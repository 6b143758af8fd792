"""Parsing for ``einsum``: an equation -> explicit single-letter subscripts per operand and for
the output (ellipses expanded into unused letters, right-aligned), with PyTorch's errors; and the
pairwise contraction order. No Tensors here: shapes in, strings out."""

from __future__ import annotations

import string

import numpy as np

# PyTorch orders labels A-Z then a-z (also the implicit output's order)
_LETTERS = string.ascii_uppercase + string.ascii_lowercase


def parse_equation(equation: str, shapes) -> tuple:
    """``("...ij,jk", [(2, 3, 4), (4, 5)])`` -> ``(["Aij", "jk"], "Aik")``; RuntimeError with
    PyTorch's wording for a malformed equation or sizes that do not broadcast."""
    eq = equation.replace(" ", "")
    if eq.count("->") > 1:
        raise RuntimeError("einsum(): found multiple '->' in the equation")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    for c in eq.replace("...", "").replace("->", "").replace(",", ""):
        if c not in _LETTERS:
            raise RuntimeError(
                f"einsum(): invalid subscript given at index {eq.index(c)} in the equation string, "
                "subscripts must be in [a-zA-Z]"
            )
    n_ell = 0
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        letters = term.replace("...", "")
        if "." in letters:
            raise RuntimeError(
                f"einsum(): found '.' for operand {i} that is not part of any ellipsis"
            )
        if "..." in term:
            if len(letters) > len(shape):
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({len(letters)}) is more "
                    f"than the number of dimensions ({len(shape)}) for operand {i}"
                )
            n_ell = max(n_ell, len(shape) - len(letters))
        elif len(term) != len(shape):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(term)}) does not match "
                f"the number of dimensions ({len(shape)}) for operand {i} and no ellipsis was given"
            )
    free = [c for c in _LETTERS if c not in eq]
    ell = "".join(free[:n_ell])
    out_terms = [
        t.replace("...", ell[n_ell - (len(s) - len(t.replace("...", ""))) :]) if "..." in t else t
        for t, s in zip(terms, shapes)
    ]
    if arrow:
        if rhs.replace("...", "").count(".") or rhs.count("...") > 1:
            raise RuntimeError("einsum(): found '.' for output but it is not part of any ellipsis")
        out = rhs.replace("...", ell)
        seen_in = set("".join(out_terms))
        for c in rhs.replace("...", ""):
            if rhs.count(c) > 1:
                raise RuntimeError(
                    f"einsum(): output subscript {c} appears more than once in the output"
                )
            if c not in seen_in:
                raise RuntimeError(
                    f"einsum(): output subscript {c} does not appear in the "
                    "equation for any input operand"
                )
    else:
        counts = {}
        for c in "".join(terms).replace("...", ""):
            counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted((c for c, k in counts.items() if k == 1), key=_LETTERS.index))
    for i, (term, shape) in enumerate(zip(out_terms, shapes)):
        for j, c in enumerate(term):
            first = term.index(c)
            if first < j and shape[j] != shape[first]:
                raise RuntimeError(
                    f"einsum(): subscript {c} is repeated for operand {i} but the sizes "
                    f"don't match, {shape[j]} != {shape[first]}"
                )
    _check_sizes(out_terms, shapes)
    return out_terms, out


def _check_sizes(terms, shapes) -> None:
    sizes: dict = {}
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        for c, n in zip(term, shape):
            prev = sizes.get(c)
            if prev is None or prev == 1:
                sizes[c] = n
            elif n != 1 and n != prev:
                raise RuntimeError(
                    f"einsum(): subscript {c} has size {n} for operand {i} which does not "
                    f"broadcast with previously seen size {prev}\nglassgrad: operand shapes "
                    + ", ".join(f"{t}={list(s)}" for t, s in zip(terms, shapes))
                )


def diagonal_steps(term: str) -> list:
    """Diagonals that take a repeated subscript out of one operand's ``term``: a list of
    ``(dim1, dim2)`` pairs to apply in turn (each diagonal goes last, as ``torch.diagonal``
    puts it), and the term that results. ``"iij" -> ([(0, 1)], "ji")``."""
    steps = []
    while True:
        rep = next((c for c in term if term.count(c) > 1), None)
        if rep is None:
            return steps, term
        p = term.index(rep)
        q = term.index(rep, p + 1)
        steps.append((p, q))
        term = "".join(c for k, c in enumerate(term) if k not in (p, q)) + rep


def contraction_path(terms, out, shapes) -> list:
    """Pairwise contraction steps (indices into the shrinking operand list, results appended), as
    ``numpy.einsum_path`` orders them (greedy); a single pair is contracted directly."""
    if len(terms) <= 2:
        return [tuple(range(len(terms)))]
    # NOTE: einsum_path needs arrays; broadcast (stride-0) dummies cost no memory
    dummies = [np.broadcast_to(np.zeros((), np.float32), s) for s in shapes]
    path = np.einsum_path(f"{','.join(terms)}->{out}", *dummies, optimize="greedy")[0]
    return [tuple(step) for step in path[1:]]
