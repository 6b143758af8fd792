"""Differential fuzzing against torch: run a case (tests/fuzz_ops.py) on both libraries, compare
line by line, and turn the first difference into a minimal standalone repro.

After every line the fuzzer compares whether it raised (and the exception type when both did),
then the values its checks name: dtype, shape, ``requires_grad`` and values (integers and bools
exactly; floats within a few ulps of their dtype, NaN and inf positions exactly). Known
differences, owned by other parts of issue 18, are listed in tests/fuzz_known.py.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import torch

import glassgrad
from tests.fuzz_ops import Step, generate

# relative tolerance in units of each dtype's epsilon: 16-bit results within a few ulps; float32
# and float64 looser in ulps, since SLEEF (torch) and NumPy's transcendentals differ by an ulp or
# two and a short chain can amplify it
EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}
ULPS = {"float16": 4, "bfloat16": 4, "float32": 64, "float64": 4096}
GRAD_OPS = ("backward", "grad", "grad2")

HEADER = """\
import sys
import torch
if sys.argv[1:] == ["glassgrad"]:
    import glassgrad as torch
F = torch.nn.functional
inf, nan = float("inf"), float("nan")
"""


@dataclasses.dataclass
class Finding:
    """The first difference of a case: ``kind`` (raise, error_type, dtype, shape, value, nan,
    requires_grad, type), the line (``index`` into ``steps``) and both results as text."""

    seed: int
    kind: str
    index: int
    check: str
    theirs: str
    ours: str
    steps: list
    known: str | None = None

    @property
    def step(self) -> Step:
        return self.steps[self.index]

    def signature(self):
        return (self.kind, self.step.op)

    def repro(self) -> str:
        """A standalone script: ``python repro.py`` runs torch, ``... glassgrad`` glassgrad."""
        lines = [s.code for s in self.steps[: self.index + 1]]
        body = "\n".join(lines)
        check = self.check if self.check != "*" else ", ".join(_tensor_names(self.steps, self.index))
        return (f"# glassgrad fuzz seed {self.seed}: {self.kind} at `{self.step.code}`\n"
                f"# torch: {self.theirs}\n# glassgrad: {self.ours}\n{HEADER}{body}\n"
                f"print({check or 'None'})\n")


def _tensor_names(steps, upto):
    import re
    seen = []
    for s in steps[: upto + 1]:
        for n in re.findall(r"^([xv]\d+) =", s.code):
            seen.append(n)
    return seen


def namespace(lib):
    return {"torch": lib, "F": lib.nn.functional, "inf": math.inf, "nan": math.nan}


def _snap(v, lib):
    if isinstance(v, lib.Tensor):
        t = v.detach()
        dt = str(t.dtype).split(".")[-1]
        if lib is torch:
            # force: a second-order gradient can be a ZeroTensor, which numpy() refuses
            arr = (t.to(torch.float64) if t.is_floating_point() else t).numpy(force=True)
        else:
            arr = np.asarray(t._array)
            arr = arr.astype(np.float64) if t.is_floating_point() else arr
        return ("T", dt, tuple(t.shape), bool(v.requires_grad), np.array(arr, copy=True))
    if isinstance(v, (list, tuple)):
        return ("L", tuple(_snap(x, lib) for x in v))
    if v is None or isinstance(v, (bool, int, float)):
        return ("N", type(v).__name__, v)
    return ("O", type(v).__name__, None)


def run_line(step: Step, env: dict):
    """Run one line in ``env``; ("raise", exception type, message) or ("ok", {check: snapshot})."""
    lib = env["torch"]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            exec(step.code, env)
        except Exception as exc:  # noqa: BLE001 - any exception is an outcome to compare
            return ("raise", type(exc), str(exc).split("\n")[0][:200])
        snaps = {}
        names = step.checks
        if names == ("*",):
            names = [k for k, v in env.items() if k[0] in "xv" and isinstance(v, lib.Tensor)]
        for c in names:
            try:
                snaps[c] = _snap(eval(c, env), lib)
            except Exception as exc:  # noqa: BLE001
                snaps[c] = ("E", type(exc).__name__, None)
        return ("ok", snaps)


def _same_error(theirs, ours):
    return theirs.__name__ in {c.__name__ for c in ours.__mro__}


def _describe(s):
    if s[0] == "T":
        vals = np.array2string(s[4], threshold=12, precision=6) if s[4].size else "[]"
        return f"{s[1]} {list(s[2])} rg={s[3]} {vals}"
    return repr(s[:3]) if s[0] != "L" else "(" + ", ".join(_describe(x) for x in s[1]) + ")"


def _compare_snap(theirs, ours, floor):
    """None, or (kind, detail) for the first difference between two snapshots."""
    if theirs[0] != ours[0]:
        return ("type", "")
    if theirs[0] == "L":
        if len(theirs[1]) != len(ours[1]):
            return ("shape", "length")
        for a, b in zip(theirs[1], ours[1]):
            d = _compare_snap(a, b, floor)
            if d:
                return d
        return None
    if theirs[0] == "N":
        a, b = theirs[2], ours[2]
        if theirs[1] != ours[1] and not {theirs[1], ours[1]} <= {"int", "bool"}:
            return ("type", "")
        if isinstance(a, float) and math.isnan(a):
            return None if isinstance(b, float) and math.isnan(b) else ("value", "")
        if isinstance(a, float) and isinstance(b, float):
            return None if math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9) else ("value", "")
        return None if a == b else ("value", "")
    if theirs[0] != "T":
        return None if theirs[:2] == ours[:2] else ("type", "")
    _, dt, shape, rg, a = theirs
    _, dt2, shape2, rg2, b = ours
    if dt != dt2:
        return ("dtype", "")
    if shape != shape2:
        return ("shape", "")
    if rg != rg2:
        return ("requires_grad", "")
    if dt not in EPS:
        return None if np.array_equal(a, b) else ("value", "")
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if not np.array_equal(nan_a, nan_b):
        return ("nan", "")
    inf_a = np.isinf(a)
    if not np.array_equal(inf_a, np.isinf(b)) or not np.array_equal(a[inf_a], b[inf_a]):
        return ("value", "inf")
    fin = ~(nan_a | inf_a)
    if not fin.any():
        return None
    rtol = max(ULPS[dt] * EPS[dt], floor)
    scale = max(1.0, float(np.max(np.abs(a[fin]))))
    if np.all(np.abs(a[fin] - b[fin]) <= rtol * (np.abs(a[fin]) + scale * 0.25)):
        return None
    return ("value", "")


def compare(step: Step, theirs, ours, floor=0.0):
    """None, or (kind, check, torch's result, glassgrad's result). ``floor``: the least relative
    tolerance, that of the coarsest float dtype the case has used so far (a float64 result made
    from float16 values carries their rounding)."""
    if theirs[0] == "raise" or ours[0] == "raise":
        if theirs[0] != ours[0]:
            t = f"{theirs[1].__name__}: {theirs[2]}" if theirs[0] == "raise" else "no error"
            o = f"{ours[1].__name__}: {ours[2]}" if ours[0] == "raise" else "no error"
            return ("raise", "", t, o)
        if not _same_error(theirs[1], ours[1]):
            return ("error_type", "", f"{theirs[1].__name__}: {theirs[2]}",
                    f"{ours[1].__name__}: {ours[2]}")
        return None
    for check, snap in theirs[1].items():
        mine = ours[1].get(check)
        if mine is None:
            return ("missing", check, _describe(snap), "absent")
        d = _compare_snap(snap, mine, floor)
        if d:
            return (d[0], check, _describe(snap), _describe(mine))
    return None


def _dtypes(outcome):
    if outcome[0] != "ok":
        return []
    out, todo = [], list(outcome[1].values())
    while todo:
        s = todo.pop()
        if s[0] == "T":
            out.append(s[1])
        elif s[0] == "L":
            todo.extend(s[1])
    return out


def run_steps(steps, lib):
    env = namespace(lib)
    return [run_line(s, env) for s in steps]


def first_difference(seed, steps, theirs, ours):
    """The first line whose outcomes differ, as a Finding, or None."""
    floor = 0.0
    for i, (s, a, b) in enumerate(zip(steps, theirs, ours)):
        used = [d for d, _ in s.args] + _dtypes(a)
        floor = max([floor] + [ULPS[d] * EPS[d] for d in used if d in EPS])
        # gradients sum over the whole program: four times the values' tolerance
        d = compare(s, a, b, floor * 4 if s.op in GRAD_OPS else floor)
        if d:
            return Finding(seed, d[0], i, d[1], d[2], d[3], list(steps))
        if a[0] == "raise" and s.checks == ("*",):
            # NOTE: torch can write part of an in-place result before it raises (an integer
            # remainder by zero writes the rows before the zero): the states may differ from here
            return None
    return None


def run_case(seed: int):
    """Generate case ``seed`` on torch, run it on glassgrad; the first Finding or None."""
    env = namespace(torch)
    steps, theirs = [], []
    for step, outcome in generate(seed, env, lambda s: run_line(s, env)):
        steps.append(step)
        theirs.append(outcome)
    ours = run_steps(steps, glassgrad)
    return first_difference(seed, steps, theirs, ours)


def minimise(f: Finding) -> Finding:
    """Drop lines while the first difference keeps its kind and op (both rerun on each try)."""
    sig = f.signature()
    steps = f.steps[: f.index + 1]
    best = f
    i = len(steps) - 2
    while i >= 0:
        trial = steps[:i] + steps[i + 1:]
        g = first_difference(f.seed, trial, run_steps(trial, torch), run_steps(trial, glassgrad))
        if g is not None and g.signature() == sig:
            steps, best = trial[: g.index + 1], g
            i = min(i, len(steps) - 1)
        i -= 1
    return best


def classify(f: Finding, fast: bool = False) -> Finding:
    """``f`` with ``known`` set (tests/fuzz_known.py); a gradient finding is minimised first, so
    that the predicates see the few ops that cause it. ``fast`` (long runs) tries the whole
    program first and minimises only what no predicate takes (about twice the cases a second,
    at the risk of filing a new gradient bug under a known class whose op the program also has)."""
    from tests.fuzz_known import GRAD_STEPS, known

    if f.step.op in GRAD_STEPS:
        if fast:
            f.known = known(f)
            if f.known:
                return f
        f = minimise(f)
    f.known = known(f)
    return f


def main(argv=None):
    """``python -m tests.fuzz_check N [START] [--fast]``: run N cases, print a tally of the known
    classes and a minimised repro of each new kind of difference, with the rate."""
    import collections
    import sys
    import time

    args = (argv if argv is not None else sys.argv[1:]) or ["1000"]
    fast = "--fast" in args
    args = [a for a in args if a != "--fast"]
    n, start = int(args[0]), int(args[1]) if len(args) > 1 else 0
    t0 = time.time()
    known_n, new = collections.Counter(), {}
    for seed in range(start, start + n):
        f = run_case(seed)
        if f is not None:
            f = classify(f, fast)
            if f.known:
                known_n[f.known] += 1
            elif f.signature() not in new:
                new[f.signature()] = minimise(f)
                print(new[f.signature()].repro(), flush=True)
        if (seed - start + 1) % 1000 == 0:
            rate = (seed - start + 1) / (time.time() - t0)
            print(f"# {seed - start + 1} cases, {rate:.1f}/s, {sum(known_n.values())} known, "
                  f"{len(new)} new kinds", flush=True)
    print(f"# done: {n} cases from seed {start} in {time.time() - t0:.0f} s; known:")
    for name, c in known_n.most_common():
        print(f"#   {c:6d}  {name}")
    print(f"# new kinds: {len(new)}")


if __name__ == "__main__":
    main()
