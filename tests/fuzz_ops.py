"""Random op programs for the differential fuzzer (tests/fuzz_check.py runs them).

A case is a seed. From it ``generate`` draws a short program, one Python line a step, written
against the names ``torch`` and ``F`` (``torch.nn.functional``), so the same lines run on torch and
on glassgrad and print as a standalone repro. Each step is drawn while the program runs on torch,
so that later steps can pick operands of fitting shapes and dtypes from the tensors made so far:
broadcasting operands, views (slicing, transpose, expand, reshape/view, narrow, diagonal, unbind),
in-place writes (add_, mul_, copy_, setitem, clamp_, zero_, ...), float16/bfloat16/float32/float64/
int8/uint8/int32/int64/bool, empty and 0-d tensors and non-finite values (inf, nan, -0.0). The last
steps take a weighted float64 sum of some outputs that require grad and call backward (and, for
float64, take a second derivative).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("int8", "uint8", "int32", "int64")
DTYPES = FLOATS + INTS + ("bool",)
# weights of the dtypes drawn for a new input: float32/float64 most, the rest often enough
DTYPE_P = np.array([2, 2, 4, 3, 1, 1, 1, 2, 1], dtype=float)
DTYPE_P /= DTYPE_P.sum()
SHAPES = ((), (0,), (1,), (3,), (4,), (2, 3), (3, 3), (1, 3), (3, 1), (2, 0), (2, 1, 3),
          (2, 3, 4), (2, 2, 2), (4, 4))
# exact in every float dtype (k/8 and powers of two), so construction rounds nowhere; specials
SPECIALS = (0.0, -0.0, math.inf, -math.inf, math.nan, 2.0**-12, 2.0**15, -(2.0**14), 1.0, -1.0)
INT_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int32": (-2**31, 2**31 - 1),
             "int64": (-2**63, 2**63 - 1)}


@dataclasses.dataclass
class Step:
    """One line of a program: ``code`` (Python), ``op`` (the op's name, for the known-difference
    predicates), ``args`` ((dtype, shape) of each tensor operand, from torch), ``checks`` (the
    expressions compared after the line; "*" is every tensor variable)."""

    code: str
    op: str
    args: tuple = ()
    checks: tuple = ()


def _fmt(v, dtype):
    if dtype == "bool":
        return "True" if v else "False"
    if dtype in INTS:
        return str(int(v))
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(float(v))


def _values(rng, dtype, n):
    if dtype == "bool":
        return list(rng.random(n) < 0.5)
    if dtype in INTS:
        lo, hi = INT_RANGE[dtype]
        small = rng.integers(max(lo, -6), min(hi, 6) + 1, n)
        edge = rng.choice([lo, hi, lo + 1, hi - 1, 0], n)
        return [int(e) if rng.random() < 0.1 else int(s) for s, e in zip(small, edge)]
    special = rng.random() < 0.3
    out = []
    for _ in range(n):
        if special and rng.random() < 0.3:
            out.append(SPECIALS[rng.integers(len(SPECIALS))])
        else:
            out.append(int(rng.integers(-24, 25)) / 8)
    return out


def _literal(vals, shape, dtype):
    it = iter(vals)

    def rec(dims):
        if not dims:
            return _fmt(next(it), dtype)
        return "[" + ", ".join(rec(dims[1:]) for _ in range(dims[0])) + "]"

    return rec(tuple(shape))


class Gen:
    """Draws the steps of one case; ``env`` is torch's namespace as the program runs."""

    def __init__(self, rng, env):
        self.rng, self.env = rng, env
        self.n_inputs = self.n_vars = 0

    # -- picking -----------------------------------------------------------------------------
    def tensors(self, pred=None):
        torch = self.env["torch"]
        return [k for k, v in self.env.items() if isinstance(v, torch.Tensor)
                and k[0] in "xv" and (pred is None or _holds(pred, v))]

    def meta(self, name):
        t = self.env[name]
        return (str(t.dtype).split(".")[-1], tuple(t.shape))

    def pick(self, pred=None, new_p=0.15):
        names = self.tensors(pred)
        if not names or self.rng.random() < new_p:
            return None
        return names[self.rng.integers(len(names))]

    def choice(self, seq):
        return seq[self.rng.integers(len(seq))]

    def dtype(self):
        return DTYPES[self.rng.choice(len(DTYPES), p=DTYPE_P)]

    def new_input(self, shape=None, dtype=None, grad=None):
        """A line making a new leaf ``x<i>``; returns (step, name)."""
        dtype = dtype or self.dtype()
        shape = SHAPES[self.rng.integers(len(SHAPES))] if shape is None else tuple(shape)
        n = int(np.prod(shape, dtype=int))
        lit = _literal(_values(self.rng, dtype, n), shape, dtype)
        if n == 0:
            lit = f"torch.zeros({shape!r}).tolist()"
        if grad is None:
            grad = dtype in FLOATS and self.rng.random() < 0.6
        name = f"x{self.n_inputs}"
        self.n_inputs += 1
        rg = ", requires_grad=True" if grad else ""
        code = f"{name} = torch.tensor({lit}, dtype=torch.{dtype}{rg})"
        return Step(code, "tensor", (), (name,)), name

    def operand(self, shape, steps, like=None):
        """A second operand broadcastable against ``shape``: a variable, a new input, a 0-d
        tensor or a Python number (as source text)."""
        r = self.rng.random()
        if r < 0.2:
            return self.choice(["2", "-1", "0.5", "-0.0", "3", "True", "inf", "nan", "-1.5"])
        if r < 0.45:
            fits = self.tensors(lambda t: _broadcasts(tuple(t.shape), shape))
            if fits:
                return self.choice(fits)
        if r < 0.55:
            sub = ()
        else:
            sub = list(shape[self.rng.integers(len(shape) + 1):]) if shape else []
            sub = tuple(1 if self.rng.random() < 0.3 else d for d in sub)
        dtype = like if like and self.rng.random() < 0.5 else None
        step, name = self.new_input(sub, dtype)
        steps.append(step)
        return name

    def target(self, steps, pred=None):
        """A tensor operand: an existing variable or a new input."""
        name = self.pick(pred)
        if name is None:
            step, name = self.new_input()
            steps.append(step)
        return name

    def var(self):
        name = f"v{self.n_vars}"
        self.n_vars += 1
        return name

    def dim(self, name, allow_none=False):
        nd = len(self.meta(name)[1])
        if allow_none and self.rng.random() < 0.25:
            return None
        if nd == 0:
            return self.choice([0, -1])
        return int(self.rng.integers(-nd, nd))


def _holds(pred, t):
    # NOTE: reading a tensor's flags can raise (a multi-output view modified in place)
    try:
        return pred(t)
    except RuntimeError:
        return False


def _broadcasts(a, b):
    """Whether shape ``a`` broadcasts to ``b`` (b is unchanged)."""
    if len(a) > len(b):
        return False
    return all(x == y or x == 1 for x, y in zip(a[::-1], b[::-1]))


def generate(seed: int, env: dict, run_line, n_steps: int | None = None):
    """Draw and run (on torch, through ``run_line(step)``) the steps of case ``seed``; the list
    of (step, torch's outcome as ``run_line`` returned it)."""
    from tests.fuzz_table import STEP_KINDS, WEIGHTS, finish

    rng = np.random.default_rng([seed, 18])
    g = Gen(rng, env)
    done = _Ran(run_line)
    n_steps = n_steps or int(rng.integers(2, 9))
    for _ in range(n_steps):
        STEP_KINDS[rng.choice(len(STEP_KINDS), p=WEIGHTS)](g, done)
    for step in finish(g):
        done.append(step)
    return done.ran


class _Ran:
    """The steps' list as the kinds see it: appending a step runs it on torch at once, so that
    the next draw sees its result."""

    def __init__(self, run_line):
        self.run_line, self.ran = run_line, []

    def append(self, step):
        self.ran.append((step, self.run_line(step)))
