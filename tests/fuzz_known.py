"""Known differences the fuzzer finds (tests/fuzz_check.py), each a class of bug with the issue-18
part that owns it and a predicate that recognises it. The default run in ``make test`` passes
while they stand; delete an entry when its fix lands, and the fuzzer checks the fix from then on.

A predicate sees the Finding: ``kind`` (raise, error_type, dtype, value, nan, requires_grad, ...),
the line (``f.step``: its code, op name and operands' (dtype, shape) as torch had them), and both
results as text (``f.theirs`` is torch's). Gradient findings are minimised first, so their
predicates look at the few ops left in ``f.steps``.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Callable

from tests.fuzz_ops import FLOATS

GRAD_STEPS = ("backward", "grad", "grad2")


@dataclasses.dataclass(frozen=True)
class Known:
    name: str
    part: str
    predicate: Callable


def _non_float(f):
    """Every tensor operand of the line is an integer or bool tensor (and there is one)."""
    return bool(f.step.args) and all(d not in FLOATS for d, _ in f.step.args)


def _int_operand(f):
    return any(d not in FLOATS for d, _ in f.step.args)


def _says(text, *phrases):
    return any(p in text for p in phrases)


def _ops(f):
    return {s.op for s in f.steps[: f.index + 1]}


def _program(f):
    return "\n".join(s.code for s in f.steps[: f.index + 1])


def _aliased(f):
    """The in-place line's operand is a view of its target made earlier (one level)."""
    names = re.findall(r"\b[xv]\d+\b", f.step.code)
    if len(names) < 2:
        return False
    target = names[0]
    for s in f.steps[: f.index]:
        m = re.match(r"([xv]\d+) = (\w+)[.\[]", s.code)
        if m and m.group(1) in names[1:] and m.group(2) == target:
            return True
    return False


def _shared_base(f):
    """The in-place line's target and operand are views made from one earlier tensor."""
    names = re.findall(r"\b[xv]\d+\b", f.step.code)
    made = {}
    for s in f.steps[: f.index]:
        m = re.match(r"([xv]\d+) = ([xv]\d+)[.\[]", s.code)
        if m:
            made[m.group(1)] = m.group(2)
    roots = {made.get(n, n) for n in names}
    return len(names) >= 2 and len(roots) == 1


def _raise_kind(f):
    return f.kind in ("raise", "error_type")


FLOAT_ONLY = ("not implemented for", "inputs not supported for", "does not support bool input",
              "Integer division with addcdiv", "with a bool tensor is not supported",
              "on a bool tensor is not supported", "with two bool tensors is not supported",
              "on an unsigned type with negative limits")
BOOL_ARITH = ("with a bool tensor is not supported", "on a bool tensor is not supported")
INT_WRITE_T = ("can't be cast to the desired output type", "cannot be converted to type")
INT_WRITE_G = ("out of bounds for uint8", "out of bounds for int8", "cannot convert float NaN",
               "cannot convert float infinity")
INPLACE_RULES = ("a leaf Variable that requires grad is being used in an in-place",
                 "a view of a leaf Variable that requires grad", "is a view and is being modified",
                 "created in no_grad mode", "refer to a single memory location",
                 "its base or another view of its base has been modified inplace")
# ops whose local derivative is 0 at a point where upstream can be inf/NaN, or whose gradient at
# a tie or bound issue 18 part 2 lists
EDGE_OPS = {"clamp", "clamp_", "clamp_min_", "clamp_max_", "maximum", "minimum", "max", "min",
            "amax", "amin", "hardshrink", "softshrink", "zero_", "fill_", "copy_", "sign",
            "sign_", "floor", "floor_", "round", "round_", "where", "masked_fill", "masked_fill_",
            "relu", "relu_", "relu6", "hardtanh", "abs", "abs_", "**", "pow", "pow_", "atan2",
            "remainder", "fmod", "%", "//", "ceil", "trunc", "frac", "sort", "norm", "sqrt",
            "sqrt_", "[{sl}]", "[{i}]", "[ > 0] = {lo}"}

KNOWN = (
    Known("integer/bool input to a float-only op: torch refuses it (NotImplementedError "
          "'... not implemented for Long', 'Boolean inputs not supported'), glassgrad computes "
          "it or raises another type; and for empty inputs the other way round",
          "4 (ints)",
          lambda f: _raise_kind(f) and (_says(f.theirs, *FLOAT_ONLY) and (
              _int_operand(f) or f.step.op in GRAD_STEPS or _says(f.theirs, *BOOL_ARITH))
              or _int_operand(f) and _says(
              f.ours, "not implemented for", "with two bool tensors", "with a bool tensor"))),
    Known("write of a float, inf/NaN or out-of-range number into an integer tensor (in-place "
          "op, fill_, setitem, masked_fill, clamp_ bounds): torch raises 'result type Float "
          "can't be cast' / 'value cannot be converted' or wraps, glassgrad truncates or raises "
          "NumPy's OverflowError/ValueError", "4 (ints)",
          lambda f: _raise_kind(f) and (_says(f.theirs, *INT_WRITE_T) or _says(f.ours, *INT_WRITE_G)
                                        or f.theirs == "no error" and _non_float(f)
                                        and _says(f.ours, INT_WRITE_T[0])
                                        or re.search(r"Python integer -?\d+ out of bounds", f.ours)
                                        is not None)),
    Known("result dtype (and value) of integer/bool ops: bool ** 2 and 2 ** bool (int64 in "
          "torch, int8 and 2 ** True == 1 in glassgrad), bool.clamp(max=-1), "
          "add(bool, bool, alpha=2), hardtanh/relu6/addcmul on integers (float32 in glassgrad), "
          "int8 ^ 0-d int64", "4 (ints)",
          lambda f: f.kind == "dtype" and (_non_float(f) or f.step.op in ("addcmul", "addcdiv")
                                           and _int_operand(f))),
    Known("sign/sign_ of a bool tensor raises NumPy's message (torch returns the bools)",
          "4 (ints)", lambda f: f.kind == "raise" and _says(f.ours, "ufunc 'sign'")),
    Known("addcmul/addcmul_ of integer tensors into a float tensor: glassgrad multiplies in the "
          "integer dtype (INT64_MIN**2 wraps to 0), torch in the float result dtype", "4 (ints)",
          lambda f: f.step.op in ("addcmul", "addcmul_") and f.kind == "value"
          and _int_operand(f)),
    Known("create_graph=True first-order gradient whose formula is linear in upstream (a mask "
          "times grad, e.g. hardshrink, relu, clamp): torch's requires grad, glassgrad's not",
          "3 (graph)",
          lambda f: f.kind == "requires_grad" and f.step.op == "grad"),
    Known("in-place rules torch enforces and glassgrad misses: in-place on an EMPTY view of a "
          "leaf that requires grad; outputs of split/chunk/unbind; self-overlapping setitem",
          "3 (graph)",
          lambda f: f.kind == "raise" and f.ours == "no error"
          and _says(f.theirs, *INPLACE_RULES)),
    Known("in-place op on an empty tensor, or on the base of an empty view, with an operand "
          "that requires grad: the empty tensor does not require grad in glassgrad (torch: it "
          "does)", "3 (graph)",
          lambda f: f.kind == "requires_grad" and f.step.checks == ("*",)
          and (any(0 in shape for _, shape in f.step.args)
               or re.match(r"\w+ \[(\d+, )*0[],]", f.theirs) is not None)),
    Known("in-place op whose operand is a view of its target (x += x.split(1, -1)[0], "
          "x *= x.chunk(2, 2)[0]): torch reads elements it has already overwritten, glassgrad "
          "the old values (torch's result depends on its loop order)", "6 (fuzz, torch quirk)",
          lambda f: f.kind in ("value", "nan") and f.step.checks == ("*",) and _aliased(f)),
    Known("torch lets an integer or bool tensor require grad after int_t[:1] = float_leaf "
          "(a 0-d value), then refuses ops on it ('Autograd not support dtype: Int'); "
          "glassgrad's integer tensor does not require grad", "6 (fuzz, torch quirk)",
          lambda f: f.kind == "raise" and _says(f.theirs, "Autograd not support dtype")
          or f.kind == "requires_grad" and "] = " in f.step.code and "rg=False" in f.ours
          and re.match(r"\(?(u?int\d+|bool) ", f.theirs) is not None),
    Known("gradient at a NaN input of elu/celu/selu/silu-like activations: torch's depends on "
          "where the element sits (its vectorised loop and its scalar tail disagree); glassgrad "
          "follows the vectorised loop", "6 (fuzz, torch quirk)",
          lambda f: f.kind in ("nan", "value") and f.step.op in GRAD_STEPS
          and bool(_ops(f) & {"elu", "celu", "selu", "silu", "hardtanh", "leaky_relu"})
          and "nan" in _program(f)),
    Known("second derivative of elu/celu/selu at exactly 0: torch 0 (its double backward takes "
          "the positive branch), glassgrad alpha (the branch its first derivative takes, as "
          "torch's does)", "2 (edges)",
          lambda f: f.kind == "value" and f.step.op == "grad2"
          and bool(_ops(f) & {"elu", "celu", "selu"})),
    Known("float32 gelu in the negative tail (x < -1.5) amplified by a later op (reciprocal): "
          "torch's erf formula cancels there; glassgrad's value is the closer to the exact one "
          "(gelu(-2.625): exact -0.0113727, glassgrad's 1/x -87.92996, torch's -87.93116)",
          "6 (fuzz, tolerance)",
          lambda f: f.kind == "value" and f.step.op not in GRAD_STEPS and "gelu" in _ops(f)
          and f.theirs.startswith("float32")),
    Known("setitem into an expanded tensor (v = x.expand(2, 3, 3); v[1] = y): torch checks "
          "the written-to slice for self-overlap, glassgrad the whole tensor and refuses",
          "3 (graph)",
          lambda f: f.kind == "raise" and f.theirs == "no error"
          and _says(f.ours, "more than one element of the written-to tensor")),
    Known("backward refused with 'modified by an inplace operation' where torch computes it "
          "(an operand saved that needs no gradient)", "3 (graph)",
          lambda f: f.kind == "raise" and f.step.op in GRAD_STEPS
          and _says(f.ours, "modified by an inplace operation")),
    Known("backward after an in-place write to a saved tensor that does not require grad (the "
          "other operand of maximum, say): torch raises 'modified by an inplace operation', "
          "glassgrad computes, with the new values", "3 (graph)",
          lambda f: f.kind == "raise" and f.step.op in GRAD_STEPS and f.ours == "no error"
          and _says(f.theirs, "modified by an inplace operation")),
    Known("LeakyReluBackward under create_graph on a 0-d float64: 'return arrays must be of "
          "ArrayType' (a NumPy scalar reaches the array rule)", "2 (edges)",
          lambda f: f.kind == "raise" and _says(f.ours, "return arrays must be of ArrayType")),
    Known("gradient of cumprod/prod at zeros with an inf/NaN around: torch's formula (products "
          "of the others) is finite, glassgrad's (result / x) NaN", "2 (edges)",
          lambda f: f.kind in ("nan", "value") and f.step.op in GRAD_STEPS
          and bool(_ops(f) & {"cumprod", "prod"})),
    Known("addcmul/addcdiv gradient with an inf operand in mixed dtypes (the composite path): "
          "torch NaN (inf * 0 in its fused formula), glassgrad inf", "2 (edges)",
          lambda f: f.kind == "nan" and f.step.op in GRAD_STEPS
          and bool(_ops(f) & {"addcmul", "addcdiv", "addcmul_", "addcdiv_"})),
    Known("second derivative of var/std of one element (NaN forward): torch 0, glassgrad NaN",
          "2 (edges)",
          lambda f: f.kind == "nan" and f.step.op == "grad2" and bool(_ops(f) & {"var", "std"})),
    Known("view() of an op's result computed from a transposed input: the result's memory "
          "layout differs (torch's elementwise kernels follow their inputs' strides, glassgrad's "
          "cat and cumsum keep NumPy's F order, its logical ops give C order), so one library "
          "refuses the view ('view size is not compatible') and the other allows it", "6 (fuzz)",
          lambda f: f.kind == "raise" and f.step.op == "view"
          and _says(f.ours + f.theirs, "view size is not compatible")),
    Known("indexing an empty tensor with an out-of-range index (x of shape (1, 0), "
          "x[tensor([0, 1])]): torch skips the bounds check for empty inputs, glassgrad raises",
          "6 (fuzz)",
          lambda f: f.kind == "raise" and f.theirs == "no error" and f.ours.startswith(
              "IndexError") and "out of bounds" in f.ours
          and any(0 in shape for _, shape in f.step.args)),
    Known("gradient through an op whose local derivative is 0 (or split at a tie/bound) with an "
          "inf/NaN upstream or input: clamp (tensor bounds too), maximum/minimum, max/min, "
          "hardshrink, zero_/fill_/copy_, sign, floor, round, where", "2 (edges)",
          lambda f: f.kind in ("nan", "value") and f.step.op in GRAD_STEPS
          and bool(_ops(f) & EDGE_OPS)),
    Known("log_softmax/softmax/logsumexp over a slice holding +inf: torch gives NaN for the "
          "finite entries, glassgrad -inf/0", "2 (edges)",
          lambda f: f.kind in ("nan", "value") and f.step.op in ("log_softmax", "softmax",
                                                                  "logsumexp")),
    Known("F.gelu(inf): torch NaN, glassgrad inf", "2 (edges)",
          lambda f: f.kind in ("nan", "value") and f.step.op == "gelu"),
    Known("float to integer conversion out of range (x.int(), x.to(torch.uint8)): torch gives "
          "INT_MIN for NaN/inf and wraps negatives into uint8 (-3.0 -> 253), glassgrad 0",
          "4 (ints)",
          lambda f: f.kind == "value" and (f.step.op in ("int", "long", "to", "{dt})", "copy_")
                                           or "] = " in f.step.code)
          and re.match(r"u?int\d+ ", f.theirs) is not None),
    Known("integer extremes meeting floats (float16 == INT64_MIN + 1, float16 * INT32_MIN, "
          "masked_fill by a comparison with 2**63 - 2): torch converts the integer through "
          "another type than glassgrad", "4 (ints)",
          lambda f: f.kind in ("value", "nan")
          and re.search(r"\b(214748364[5-8]|92233720368547758\d\d)\b", _program(f)) is not None
          and f.step.op not in GRAD_STEPS),
    Known("squeeze_/unsqueeze_ on a tensor that is a view or has views (of a gather or tril "
          "result, a movedim), then an in-place op: glassgrad's replay of the view raises "
          "(CopySlices' gradient shape, an index out of bounds, a permute of the wrong rank) "
          "where torch computes; open, found by the final 100,000-case run", "6 (fuzz)",
          lambda f: f.kind == "raise" and f.theirs == "no error"
          and bool(_ops(f) & {"squeeze_", "unsqueeze_"})),
    Known("in-place op whose operand and target are two views of one tensor (v1 = x0.permute(...);"
          " v1.pow_(x0.split(1, 2)[0]), v1.add_(x0.diagonal(...))): torch reads elements it has "
          "already overwritten, glassgrad the old values (torch's loop order)",
          "6 (fuzz, torch quirk)",
          lambda f: f.kind in ("value", "nan") and f.step.checks == ("*",) and _shared_base(f)),
    # unowned by parts 1-5: found by the fuzzer (part 6)
    Known("argument parsing: a Python number where torch requires a Tensor (atan2, maximum, "
          "minimum, lerp, addcmul/addcdiv input, logical_and, eq, fmod, clamp, where) or a "
          "missing argument (permute()): torch TypeError, glassgrad computes; and "
          "t.copy_(number), which torch accepts", "6 (fuzz)",
          lambda f: _raise_kind(f) and (f.theirs.startswith("TypeError") or _says(
              f.ours, "copy_(): argument 'src' must be Tensor"))),
    Known("index_select/index_fill/index_add on a 0-d input (torch treats it as one element) "
          "or an empty one (torch: IndexError 'index out of range in self'), and gather with an "
          "empty index of another ndim (torch accepts it)", "6 (fuzz)",
          lambda f: _raise_kind(f) and f.step.op in ("index_select", "index_fill", "index_add",
                                                      "gather")
          and any(shape == () or 0 in shape for _, shape in f.step.args)
          or f.step.op == "gather" and re.search(r"tensor\(\[[\[\], ]*\], dtype=torch.long",
                                                   f.step.code) is not None),
    Known("index_select/index_add with an index out of range (-1 included): torch IndexError "
          "'index out of range in self', glassgrad RuntimeError", "4 (ints) / 6",
          lambda f: f.kind == "error_type" and f.step.op in ("index_select", "index_add")
          and _says(f.theirs, "index out of range in self")),
    Known("empty tensors lose their gradient (None; torch: an empty tensor): torch.cat's "
          "skipped legacy 1-D empty operand (the cat does not require grad when only that "
          "operand does), operands of in-place ops on empty tensors",
          "3 (graph) / 6",
          lambda f: f.kind == "type" and f.step.op in GRAD_STEPS
          and (re.match(r"\w+ \[(\d+, )*0", f.theirs) is not None
               or any(0 in shape for s in f.steps for _, shape in s.args)) and "None" in f.ours
          or f.kind == "requires_grad" and f.step.op == "cat" and "rg=True" in f.theirs),
    Known("torch's own integer overflow: addcdiv/addcmul backward with an int32/int64 operand "
          "near its limit computes value * tensor1 in the integer dtype and wraps (glassgrad's "
          "gradient is the true one)", "6 (fuzz, torch quirk)",
          lambda f: f.kind == "value" and f.step.op in GRAD_STEPS
          and bool(_ops(f) & {"addcdiv", "addcmul"})
          and re.search(r"\b(214748364[5-7]|92233720368547758\d\d)\b", "\n".join(
              s.code for s in f.steps)) is not None),
    Known("einsum of operands of different dtypes: torch promotes, glassgrad raises 'expected "
          "scalar type'", "6 (fuzz)",
          lambda f: f.kind == "raise" and f.step.op == "einsum"
          and _says(f.ours, "expected scalar type")),
    Known("torch's own internal assert (\"false INTERNAL ASSERT FAILED ... unknown ivalue "
          "tag\") in a second-order graph: glassgrad computes", "6 (fuzz, torch bug)",
          lambda f: f.kind == "raise" and _says(f.theirs, "INTERNAL ASSERT FAILED")),
    Known("float16/bfloat16 (-inf) ** 0.5: torch +inf (its 16-bit pow; float32 gives NaN in "
          "torch too), glassgrad NaN", "6 (fuzz)",
          lambda f: f.kind == "nan" and "** 0.5" in f.step.code
          and all(d in ("float16", "bfloat16") for d, _ in f.step.args)),
    Known("bfloat16 sign(NaN): torch 0 (as for float32), glassgrad NaN", "6 (fuzz)",
          lambda f: f.kind == "nan" and f.step.op in ("sign", "sign_")
          and any(d == "bfloat16" for d, _ in f.step.args)),
    Known("backward through an op torch has no derivative for (floor_divide, remainder with a "
          "number first): torch raises 'derivative for aten::floor_divide is not implemented', "
          "glassgrad gives a gradient", "6 (fuzz)",
          lambda f: f.kind == "raise" and f.step.op in GRAD_STEPS
          and re.search(r"derivative for aten::\w+ is not implemented", f.theirs) is not None),
    Known("signed zeros: clamp at a zero bound (clamp(x, min=-0.0), clamp(x, 0, -0.0)), "
          "remainder of an exact multiple (torch: +0.0 from fmod's sign), softshrink's zeros "
          "give the other zero, and so does (-0.0) ** 0.5 (torch +0.0), seen through 1 / x as inf "
          "of the other sign and through atan2 as -pi for pi", "2 (edges) / 4",
          lambda f: f.kind == "value" and f.step.op not in GRAD_STEPS
          and (_unsigned(f.theirs) == _unsigned(f.ours) or f.step.op == "atan2"
               and bool(_ops(f) & {"fmod", "fmod_", "remainder", "remainder_", "%", "** 0.5",
                                    "round_", "round"}))),
    Known("gradient at -0.0 with the sign of an infinity flipped: d(x ** 0.5)/dx at x = -0.0 "
          "is 0.5 * pow(-0.0, -0.5) = +inf in glassgrad, -inf in torch (as its sqrt's: "
          "0.5 / sqrt(-0.0))",
          "2 (edges)",
          lambda f: f.kind == "value" and f.step.op in GRAD_STEPS and "-0.0" in _program(f)
          and _unsigned(f.theirs) == _unsigned(f.ours)
          # and at -inf: torch NaN, glassgrad 0
          or f.kind == "nan" and f.step.op in GRAD_STEPS and "** 0.5" in _program(f)),
    Known("the sign bit of a NaN (signbit of pow(negative, fractional)): torch's NaN is "
          "positive, NumPy's negative", "6 (fuzz, NaN payload)",
          lambda f: f.kind == "value" and f.step.op == "signbit"),
    Known("16-bit reductions, fused pointwise ops and gradients compute intermediates in 16 "
          "bits (std of [2.06e4, ...] float16 is inf, addcdiv(x, x, x, value=2) at 32768 "
          "overflows); torch computes in float32 and rounds once", "1 (bf16)",
          lambda f: f.kind in ("value", "nan") and any(d in ("float16", "bfloat16")
                                                        for d, _ in f.step.args)
          and f.step.op in RED16
          # an elementwise 16-bit op amplifying an upstream rounding difference within tolerance
          # (sin near pi, division by a small value, cancellation in diff): a tolerance matter
          or f.kind == "value" and f.step.op not in GRAD_STEPS and bool(f.step.args)
          and all(d in ("float16", "bfloat16") for d, _ in f.step.args)
          # a 16-bit gradient: torch rounds its backward's intermediates differently
          or f.step.op in GRAD_STEPS and f.kind == "value"
          and re.match(r"\(?b?float16 ", f.theirs) is not None),
)


RED16 = {"sum", "mean", "var", "std", "norm", "prod", "cumsum", "cumprod", "logsumexp",
         "softmax", "log_softmax", "nansum", "trace", "addcdiv", "addcmul", "addcdiv_",
         "addcmul_", "lerp", "lerp_", "@", "matmul", "mm", "mv", "dot", "einsum", "outer"}


def _unsigned(text):
    """Results as text, the sign of infinities dropped and spacing normalised."""
    return re.sub(r"\s+", " ", text.replace("-inf", "inf")).replace("[ ", "[")


def known(f) -> str | None:
    """The name of the known class ``f`` falls in, or None."""
    for k in KNOWN:
        if k.predicate(f):
            return k.name
    return None
