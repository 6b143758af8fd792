"""The steps the fuzzer draws (tests/fuzz_ops.py): each kind appends one or more Steps, taking its
operands from the tensors made so far (torch's, as the program runs) or from new inputs."""

from __future__ import annotations

import numpy as np

from tests.fuzz_ops import Step

UNARY = ("torch.exp({a})", "torch.log({a})", "torch.sqrt({a})", "{a}.abs()", "-{a}",
         "torch.sin({a})", "torch.tanh({a})", "torch.sigmoid({a})", "torch.relu({a})",
         "{a}.floor()", "{a}.ceil()", "{a}.round()", "{a}.sign()", "torch.reciprocal({a})",
         "{a}.square()", "torch.expm1({a})", "torch.log1p({a})", "torch.rsqrt({a})",
         "torch.erf({a})", "{a}.clamp({lo}, {hi})", "{a}.clamp(min={lo})", "{a}.clamp(max={hi})",
         "{a}.trunc()", "{a}.frac()", "torch.isnan({a})", "torch.isinf({a})",
         "torch.isfinite({a})", "torch.signbit({a})", "torch.logical_not({a})", "~{a}",
         "torch.atan({a})", "torch.asin({a})", "torch.cosh({a})", "torch.log2({a})",
         "{a}.float()", "{a}.double()", "{a}.half()", "{a}.bfloat16()", "{a}.bool()",
         "{a}.long()", "{a}.to(torch.{dt})", "{a}.int()", "F.relu6({a})", "F.softplus({a})",
         "F.silu({a})", "F.leaky_relu({a}, 0.1)", "F.elu({a})", "F.hardtanh({a})",
         "F.gelu({a})", "F.hardshrink({a})", "F.softshrink({a})", "F.logsigmoid({a})",
         "{a} ** 2", "{a} ** 0.5", "2 ** {a}", "{a} ** -1", "{a}.pow(3)", "{a}.clone()",
         "{a}.detach()", "{a}.contiguous()", "torch.zeros_like({a})", "torch.ones_like({a})",
         "torch.full_like({a}, {lo})", "{a}.new_zeros({shape})", "{a}.sum() * 0 + {a}")
BINARY = ("{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / {b}", "{a} // {b}", "{a} % {b}",
          "{a} ** {b}", "torch.maximum({a}, {b})", "torch.minimum({a}, {b})",
          "torch.atan2({a}, {b})", "torch.fmod({a}, {b})", "{a} > {b}", "{a} <= {b}",
          "{a} == {b}", "{a} != {b}", "{a} & {b}", "{a} | {b}", "{a} ^ {b}",
          "torch.where({a} > 0, {a}, {b})", "torch.add({a}, {b}, alpha=2)",
          "torch.sub({a}, {b}, alpha=0.5)", "torch.mul({a}, {b})", "torch.true_divide({a}, {b})",
          "torch.logical_and({a}, {b})", "torch.lerp({a}, {b}, 0.25)", "torch.remainder({a}, {b})",
          "torch.addcmul({a}, {b}, {b}, value=0.5)", "torch.addcdiv({a}, {b}, {a}, value=2)",
          "torch.eq({a}, {b})", "torch.clamp({a}, min={b})", "torch.clamp({a}, {b}, {b} + 1)",
          "{a}.masked_fill({a} > {b}, -2)", "torch.floor_divide({a}, {b})")
REDUCE = ("{a}.sum({d})", "{a}.mean({d})", "{a}.prod({d})", "{a}.amax({d})", "{a}.amin({d})",
          "{a}.max()", "{a}.min()", "{a}.max({d})[0]", "{a}.max({d})[1]", "{a}.min({d})[0]",
          "{a}.argmax({d})", "{a}.argmin({d})", "torch.cumsum({a}, {d})", "torch.cumprod({a}, {d})",
          "{a}.var({d})", "{a}.std({d})", "{a}.norm()", "torch.logsumexp({a}, {d})",
          "torch.softmax({a}, {d})", "torch.log_softmax({a}, {d})", "{a}.any({d})", "{a}.all()",
          "torch.count_nonzero({a})", "torch.nansum({a})", "torch.sort({a}, dim={d}, stable=True)[0]",
          "torch.sort({a}, dim={d}, stable=True)[1]", "{a}.sum()", "{a}.mean()", "{a}.var()",
          "torch.sum({a}, {d}, dtype=torch.float64)", "{a}.sum({d}, keepdim=True)",
          "{a}.mean({d}, keepdim=True)", "{a}.diff(dim={d})", "{a}.flip({d})", "{a}.roll(1, {d})",
          "{a}.tril()", "{a}.triu(1)", "{a}.trace()", "{a}.norm(dim={d})", "{a}.item()")
VIEW = ("{a}[{sl}]", "{a}[{i}]", "{a}[..., None]", "{a}.transpose({d}, {e})", "{a}.t()",
        "{a}.mT", "{a}.permute({perm})", "{a}.expand({big})", "{a}.reshape({rs})", "{a}.view(-1)",
        "{a}.view({rs})", "{a}.narrow({d}, {s0}, {n0})", "{a}.diagonal({off}, {d}, {e})",
        "{a}.unbind({d})[{k}]", "{a}.select({d}, {k})", "{a}.unsqueeze({d})", "{a}.squeeze()",
        "{a}.squeeze({d})", "{a}.flatten()", "{a}.movedim({d}, {e})", "{a}.split(1, {d})[{k}]",
        "{a}.chunk(2, {d})[0]", "{a}[::2]", "{a}[..., 1:]", "{a}.unflatten(0, {uf})",
        "{a}.swapaxes({d}, {e})", "{a}.view_as({a})", "{a}.T")
INPLACE = ("{a}.add_({b})", "{a}.sub_({b})", "{a}.mul_({b})", "{a}.div_({b})", "{a}.copy_({b})",
           "{a}[{sl}] = {b}", "{a}[{i}] = {b}", "{a}.clamp_({lo}, {hi})", "{a}.clamp_min_({lo})",
           "{a}.clamp_max_({hi})", "{a}.zero_()", "{a}.fill_({lo})", "{a}.neg_()", "{a}.abs_()",
           "{a}.exp_()", "{a}.sqrt_()", "{a}.relu_()", "{a}.masked_fill_({a} < 0, {lo})",
           "{a}.pow_({b})", "{a} += {b}", "{a} *= {b}", "{a} -= {b}", "{a} /= {b}",
           "{a}.addcmul_({b}, {b})", "{a}.lerp_({b}, 0.5)", "{a}.floor_()", "{a}.sigmoid_()",
           "{a}.tanh_()", "{a}[{a} > 0] = {lo}", "{a}.round_()", "{a}.reciprocal_()",
           "{a}.fmod_(2)", "{a}.remainder_(-1.5)", "{a}.squeeze_()", "{a}.unsqueeze_(0)",
           "{a} //= {b}", "{a} %= {b}", "{a} &= {b}", "{a}.sign_()", "{a}.log_()")
JOIN = ("torch.cat([{a}, {b}], {d})", "torch.stack([{a}, {b}], {d})", "torch.cat([{a}, {a}])")
MATMUL = ("{a} @ {b}", "torch.matmul({a}, {b})", "torch.mm({a}, {b})", "torch.mv({a}, {v})",
          "torch.dot({v}, {v})", "torch.outer({v}, {v})", "torch.einsum('ij,jk->ik', {a}, {b})")
GATHER = ("{a}[{idx}]", "{a}.index_select({d}, {idx})", "{a}[{a} > 0]",
          "torch.gather({a}, {d}, {gidx})", "{a}.index_fill(0, {idx}, -1)",
          "{a}.take_along_dim({gidx}, {d})", "{a}.index_add(0, {idx}, {a}.index_select(0, {idx}))")
LITS = ("0", "-1", "1.5", "0.5", "-0.0", "2", "True", "inf", "-inf", "nan", "-2.5", "200", "-3")


def _shape_text(shape):
    return repr(tuple(shape))


def _fill(g, tmpl, a, steps, b=None):
    """Format ``tmpl`` with operands drawn for tensor ``a``."""
    dt, shape = g.meta(a)
    nd = len(shape)
    rng = g.rng
    d = g.dim(a) if nd else 0
    e = g.dim(a) if nd else 0
    fields = {"a": a, "d": d, "e": e, "lo": g.choice(LITS), "hi": g.choice(LITS),
              "dt": g.choice(("float16", "bfloat16", "float32", "float64", "int8", "uint8",
                              "int32", "int64", "bool")), "shape": _shape_text(shape)}
    if "{b}" in tmpl:
        fields["b"] = b or g.operand(shape, steps, like=dt)
    if "{d}" in tmpl and "{a}.sum({d})" in tmpl or tmpl.endswith("({d})"):
        fields["d"] = "" if rng.random() < 0.2 else d
    size = shape[d] if nd else 1
    k = int(rng.integers(0, max(size, 1)))
    fields["k"] = k if rng.random() < 0.9 else size
    fields["i"] = g.choice((0, -1, 1, "None", "...", "True")) if rng.random() < 0.3 else k
    fields["sl"] = g.choice(("1:", ":1", "::2", ":, 1:", "..., :2", "-1:", "1:-1", "None, 0:",
                             ":0", "..., 0"))
    perm = list(range(nd))
    rng.shuffle(perm)
    fields["perm"] = ", ".join(map(str, perm)) if nd else ""
    big = list(shape)
    if rng.random() < 0.5:
        big = [2] + big
    big = [(3 if (s == 1 and rng.random() < 0.6) else s) for s in big]
    if rng.random() < 0.2:
        big = [-1] * (len(big) - len(shape)) + big[len(big) - len(shape):] if shape else big
    fields["big"] = _shape_text(big)
    n = int(np.prod(shape, dtype=int))
    fields["rs"] = _shape_text(_factor(rng, n))
    fields["s0"] = int(rng.integers(0, max(size, 1)))
    fields["n0"] = int(rng.integers(0, size - fields["s0"] + 1)) if size else 0
    fields["off"] = int(rng.integers(-1, 2))
    fields["uf"] = _shape_text((1, -1) if rng.random() < 0.5 else (-1, 1))
    m = max(size, 1)
    idx = rng.integers(-m if rng.random() < 0.2 else 0, m + (rng.random() < 0.05), rng.integers(0, 4))
    fields["idx"] = f"torch.tensor({idx.tolist()}, dtype=torch.long)"
    gshape = list(shape)
    if nd:
        gshape[d] = int(rng.integers(0, 3))
    gidx = rng.integers(0, m, gshape) if nd else np.array(0)
    fields["gidx"] = f"torch.tensor({gidx.tolist()}, dtype=torch.long)"
    return tmpl.format(**fields)


def _factor(rng, n):
    if n == 0:
        return (0, -1) if rng.random() < 0.5 else (0,)
    dims = []
    rest = n
    for p in (2, 3, 2, 2):
        if rest % p == 0 and rng.random() < 0.5:
            dims.append(p)
            rest //= p
    dims.append(rest)
    rng.shuffle(dims)
    if rng.random() < 0.3:
        dims[int(rng.integers(len(dims)))] = -1
    if rng.random() < 0.1:
        dims.insert(0, 1)
    return tuple(int(x) for x in dims)


def _op(tmpl):
    """A short op name for a template: the method or function called, or the operator."""
    for sep in ("}.", "torch.", "F."):
        if sep in tmpl:
            rest = tmpl.split(sep, 1)[1]
            return rest.split("(")[0].split("[")[0].split(" ")[0]
    return tmpl.replace("{a}", "").replace("{b}", "").strip() or tmpl


def _expr_kind(table, pred=None, view=False):
    def kind(g, steps):
        tmpl = g.choice(table)
        a = g.target(steps, pred)
        code = _fill(g, tmpl, a, steps)
        args = tuple(g.meta(n) for n in _names(code, g))
        v = g.var()
        steps.append(Step(f"{v} = {code}", _op(tmpl), args, (v,)))
    return kind


def _names(code, g):
    import re
    return [n for n in dict.fromkeys(re.findall(r"\b[xv]\d+\b", code)) if n in g.env]


def _inplace(g, steps):
    tmpl = g.choice(INPLACE)
    # in-place on a leaf that requires grad raises on both: draw it sometimes, not always
    a = g.target(steps, lambda t: not (t.is_leaf and t.requires_grad) or g.rng.random() < 0.1)
    code = _fill(g, tmpl, a, steps)
    args = tuple(g.meta(n) for n in _names(code, g))
    steps.append(Step(code, _op(tmpl).rstrip("=").strip() or tmpl, args, ("*",)))


def _matmul(g, steps):
    tmpl = g.choice(MATMUL)
    r = g.rng
    dt = g.choice(("float32", "float64", "float64", "float16", "bfloat16", "int64", "int32"))
    n, k, m = (int(x) for x in r.integers(0, 4, 3))
    a = g.pick(lambda t: t.dim() == 2, new_p=0.5)
    if a is None:
        s, a = g.new_input((n, k), dt)
        steps.append(s)
    k = g.meta(a)[1][-1]
    s, b = g.new_input((k, m), g.meta(a)[0] if r.random() < 0.8 else dt)
    steps.append(s)
    s, v = g.new_input((k,), g.meta(a)[0])
    steps.append(s)
    code = tmpl.format(a=a, b=b, v=v)
    name = g.var()
    args = tuple(g.meta(x) for x in _names(code, g))
    steps.append(Step(f"{name} = {code}", _op(tmpl), args, (name,)))


def _binary(g, steps):
    tmpl = g.choice(BINARY)
    a = g.target(steps)
    b = g.operand(g.meta(a)[1], steps, like=g.meta(a)[0])
    if g.rng.random() < 0.2:
        a, b = b, a
    code = tmpl.format(a=a, b=b)
    args = tuple(g.meta(x) for x in _names(code, g))
    v = g.var()
    steps.append(Step(f"{v} = {code}", _op(tmpl), args, (v,)))


def _join(g, steps):
    tmpl = g.choice(JOIN)
    a = g.target(steps)
    b = g.pick(lambda t: tuple(t.shape) == tuple(g.env[a].shape))
    if b is None:
        s, b = g.new_input(g.meta(a)[1])
        steps.append(s)
    code = _fill(g, tmpl, a, steps, b=b)
    args = tuple(g.meta(x) for x in _names(code, g))
    v = g.var()
    steps.append(Step(f"{v} = {code}", _op(tmpl), args, (v,)))


STEP_KINDS = (_expr_kind(UNARY), _binary, _expr_kind(REDUCE), _expr_kind(VIEW), _inplace,
              _join, _matmul, _expr_kind(GATHER))
WEIGHTS = np.array([4, 4, 3, 4, 4, 1, 1, 1], dtype=float)
WEIGHTS /= WEIGHTS.sum()


def finish(g):
    """The gradient steps: a float64 weighted sum of up to two outputs that require grad,
    backward, then the leaves' .grad; for float64 leaves sometimes a second derivative."""
    torch = g.env["torch"]
    outs = g.tensors(lambda t: t.requires_grad and t.is_floating_point() and not t.is_leaf)
    leaves = g.tensors(lambda t: t.requires_grad and t.is_leaf)
    if not outs or not leaves:
        return
    outs = outs[-2:] if g.rng.random() < 0.5 else outs[-1:]
    terms = []
    for o in outs:
        shape = tuple(g.env[o].shape)
        n = int(np.prod(shape, dtype=int))
        terms.append(f"({o}.double() * torch.arange(1., {n + 1}, dtype=torch.float64)"
                     f".reshape({shape!r}).sin()).sum()")
    yield Step("loss = " + " + ".join(terms), "loss", (), ())
    second = all(g.env[x].dtype == torch.float64 for x in leaves) and g.rng.random() < 0.4
    lv = "[" + ", ".join(leaves) + "]"
    if not second:
        yield Step("loss.backward()", "backward", (), tuple(f"{x}.grad" for x in leaves))
        return
    yield Step(f"gs = torch.autograd.grad(loss, {lv}, create_graph=True, allow_unused=True)",
               "grad", (), ("gs",))
    yield Step("s = sum((t * t).sum() for t in gs if t is not None and t.requires_grad)\n"
               f"ggs = torch.autograd.grad(s, {lv}, allow_unused=True) if torch.is_tensor(s) "
               "else None", "grad2", (), ("ggs",))

