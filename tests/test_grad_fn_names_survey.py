"""grad_fn names against torch over a survey of ~200 common ops, composed ones included:
``type(out.grad_fn).__name__`` and ``out.grad_fn.name()`` equal torch's (``F.layer_norm`` gives
``NativeLayerNormBackward0``, not the inner ``AddBackward0``), and so does ``next_functions``
(each edge's node name and input_nr) where glassgrad's graph has torch's shape. A composite
renamed by ``autograd.node_names.named_as`` keeps its inner edges (EDGES_DIFFER says why);
its gradient is checked against torch below, so the renaming cannot have changed backward."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad

F = "m.nn.functional."

CASES = {  # name -> expression on `m` (the library) and the inputs of _inputs
 "pow": "x ** 2", "pow_tensor": "x ** x.abs()", "rpow": "2 ** x", "add": "x + x", "add_scalar": "x + 1",
 "sub": "x - y2", "mul": "x * x", "mul_scalar": "x * 2", "div": "x / x.exp()", "div_scalar": "x / 2", "neg": "-x",
 "exp": "x.exp()", "log": "x.abs().log()", "sqrt": "x.abs().sqrt()", "abs": "x.abs()", "sin": "x.sin()", "cos":"x.cos()",
 "rsqrt": "x.abs().rsqrt()", "reciprocal":"x.reciprocal()", "clamp":"x.clamp(-0.5,0.5)", "clamp_min":"x.clamp(min=0)",
 "relu": "m.relu(x)", "F_relu": F+"relu(x)", "sigmoid": "x.sigmoid()", "tanh": "x.tanh()", "gelu": F+"gelu(x)",
 "silu": F+"silu(x)", "leaky_relu": F+"leaky_relu(x)", "elu": F+"elu(x)", "softplus": F+"softplus(x)",
 "hardtanh": F+"hardtanh(x)", "relu6": F+"relu6(x)", "logsigmoid": F+"logsigmoid(x)", "mish": F+"mish(x)",
 "sum": "x.sum()", "sum_dim": "x.sum(1)", "sum_dim_keep": "x.sum(1, keepdim=True)", "mean": "x.mean()",
 "mean_dim": "x.mean(0)", "prod": "x.prod()", "var": "x.var()", "std": "x.std(1)", "norm": "x.norm()",
 "logsumexp": "x.logsumexp(1)", "amax": "x.amax(1)", "cumsum": "x.cumsum(1)",
 "view": "x.view(12)", "reshape": "x.reshape(2, 6)", "reshape_noncontig": "x.t().reshape(12)", "flatten": "b.flatten()",
 "expand": "w.expand(3, 4)", "expand_as": "w.expand_as(x)", "permute": "b.permute(2,0,1)", "contiguous": "x.t().contiguous()",
 "clone": "x.clone()", "to_float32": "x.float()", "detach_then": "x.detach() * x",
 "cat": "m.cat([x, x])", "stack": "m.stack([x, x])", "hstack": "m.hstack([x, x])", "vstack":"m.vstack([x,x])",
 "where": "m.where(x > 0, x, y2)", "where_scalar": "m.where(x > 0, x, 0.0)", "flip": "x.flip(0)", "roll": "x.roll(1, 0)",
 "gather": "x.gather(1, m.tensor([[0],[1],[2]]))", "index_select": "x.index_select(0, m.tensor([0, 2]))",
 "masked_select": "x.masked_select(x > 0)", "bool_index": "x[x > 0]",
 "matmul_mm": "x @ y", "matmul_batched": "b @ b.mT", "matmul_bcast": "b @ y", "linear": F+"linear(x, y.t())",
 "linear_bias": F+"linear(x, y.t(), w5)", "addmm": "m.addmm(w5, x, y)", "outer": "m.outer(w, w)", "baddbmm": "m.baddbmm(b @ b.mT, b, b.mT)",
 "softmax": "x.softmax(1)", "log_softmax": F+"log_softmax(x, 1)", "F_softmax": F+"softmax(x, -1)",
 "layer_norm": F+"layer_norm(x, (4,))", "layer_norm_w": F+"layer_norm(x, (4,), w, w)", "group_norm": F+"group_norm(c, 1)",
 "batch_norm": F+"batch_norm(c, None, None, training=True)", "dropout_eval": F+"dropout(x, training=False)",
 "dropout": F+"dropout(x, 0.5)", "embedding": F+"embedding(m.tensor([0, 2]), x)",
 "conv1d": F+"conv1d(c3, k3)", "conv2d": F+"conv2d(c, k)", "conv2d_bias": F+"conv2d(c, k, w2)", "conv_transpose2d": F+"conv_transpose2d(c, k.transpose(0,1).contiguous())",
 "max_pool2d": F+"max_pool2d(c, 2)", "avg_pool2d": F+"avg_pool2d(c, 2)", "adaptive_avg_pool2d": F+"adaptive_avg_pool2d(c, 1)",
 "mse_loss": F+"mse_loss(x, y2)", "l1_loss": F+"l1_loss(x, y2)", "smooth_l1": F+"smooth_l1_loss(x, y2)",
 "cross_entropy": F+"cross_entropy(x, m.tensor([0, 1, 3]))", "nll_loss": F+"nll_loss(x, m.tensor([0, 1, 3]))",
 "bce": F+"binary_cross_entropy(x.sigmoid(), y2.sigmoid().detach())", "bce_logits": F+"binary_cross_entropy_with_logits(x, y2.sigmoid().detach())",
 "kl_div": F+"kl_div(x, y2.softmax(1).detach(), reduction='batchmean')", "huber": F+"huber_loss(x, y2)",
 "cosine_similarity": F+"cosine_similarity(x, y2)", "normalize": F+"normalize(x)", "pad": F+"pad(x, (1, 1))",
 "interpolate": F+"interpolate(c, scale_factor=2)", "one_hot_mul": F+"one_hot(m.tensor([0,1]), 4) * w",
 "max_elem": "m.maximum(x, y2)", "min_elem": "m.minimum(x, y2)", "sign_mul": "x.sign() * x", "floor": "x.floor()",
 "atan2": "m.atan2(x, y2)", "erf": "x.erf()", "square": "x.square()", "mean_dims": "b.mean((0, 2))", "sum_dims":"b.sum((0,1))",
 "argmax_index": "x[m.arange(3), x.argmax(1)]", "unflatten": "x.unflatten(1, (2, 2))", "movedim": "b.movedim(0, 2)",
 "triu": "x.triu()", "tril": "x.tril()", "type_as": "x.type_as(x)", "repeat_interleave": "x.repeat_interleave(2, 0)",
 "squeeze_noop": "x.squeeze()", "view_as": "x.view_as(x)", "scatter": "x.scatter(1, m.tensor([[0],[1],[2]]), 1.0)",
 "index_put": "x.index_put((m.tensor([0]),), m.tensor(1.0, dtype=m.float64))", "masked_scatter": "x.masked_scatter(x > 0, y2)",
 "dist": "m.dist(x, y2)", "cdist": "m.cdist(x, y2)", "max_binary": "m.max(x, y2)", "sort_values": "x.sort(1).values",
 "cummax": "x.cummax(1)[0]", "median": "x.median()", "median_dim": "x.median(1)[0]", "kthvalue": "x.kthvalue(2, 1)[0]",
 "mode": "x.mode(1)[0]", "nan_to_num": "x.nan_to_num()", "frac": "x.frac()", "sinh":"x.sinh()","asin":"(x/10).asin()",
 "expm1":"x.expm1()","log1p":"x.abs().log1p()","log2":"x.abs().log2()","sigmoid_F":F+"sigmoid(x)", "tanh_F":F+"tanh(x)",
 "softmin": F+"softmin(x, 1)", "glu": F+"glu(x)", "prelu": F+"prelu(x, w1)", "hardswish": F+"hardswish(x)", "selu": F+"selu(x)",
 "celu": F+"celu(x)", "softsign": F+"softsign(x)", "threshold": F+"threshold(x, 0.1, 0.0)", "pdist": F+"pdist(x)",
 "unfold": "x.unfold(1, 2, 1)", "F_unfold": F+"unfold(c, 2)", "pixel_shuffle": F+"pixel_shuffle(c4, 2)",
 "multi_margin": F+"multi_margin_loss(x, m.tensor([0,1,3]))", "triplet": F+"triplet_margin_loss(x, y2, x*2)",
 "sdpa": F+"scaled_dot_product_attention(b, b, b)", "std_mean": "m.std_mean(x)[0]", "var_mean": "m.var_mean(x)[1]",
 "aminmax": "m.aminmax(x)[0]", "logcumsumexp": "x.logcumsumexp(1)", "cumprod": "x.cumprod(1)", "diff": "x.diff()",
 "trace": "m.trace(s)", "inverse": "m.linalg.inv(s)", "det": "m.linalg.det(s)", "cholesky": "m.linalg.cholesky(s @ s.mT + m.eye(3, dtype=m.float64))",
 "clamp_tensor": "x.clamp(min=y2)", "fmod": "x.fmod(1.5)", "remainder": "x.remainder(1.5)", "lgamma":"x.lgamma()","digamma":"x.abs().digamma()",
 "float_pow": "x.pow(2.5)", "sq_pow": "x.pow(2)", "mul_inplace": "x.clone().mul_(2)", "add_inplace": "x.clone().add_(y2)",
 "relu_inplace": F+"relu(x.clone(), inplace=True)", "sigmoid_inplace": "x.clone().sigmoid_()", "exp_inplace": "x.clone().exp_()",
 "index_add": "x.index_add(0, m.tensor([0]), y2[:1])", "einsum_ii": "m.einsum('ij,ij->i', x, y2)", "tensordot": "m.tensordot(x, y, 1)",
 "kron": "m.kron(s, s)", "rot90": "x.rot90()", "take": "x.take(m.tensor([0, 5]))", "take_along_dim": "m.take_along_dim(x, m.tensor([[0],[1],[2]]), 1)",
 "cumsum_0d": "x[0, 0].cumsum(0)", "cumprod_0d": "x[0, 0].cumprod(0)",
 "logcumsumexp_0d": "x[0, 0].logcumsumexp(0)",
 "nn_Linear": "LIN", "nn_Conv2d": "CONV", "nn_LSTM": "LSTM", "nn_GRU": "GRU", "nn_RNN": "RNN", "nn_MHA": "MHA", "nn_Embedding": "EMB",
 "nn_LayerNorm": "LN", "nn_BatchNorm2d": "BN",
}
# a module case: (constructor, call), built after manual_seed(0) so both libraries match
MODS = {
 "LIN": ("m.nn.Linear(4, 2).double()", "mod(x)"), "CONV": ("m.nn.Conv2d(2, 3, 2).double()", "mod(c)"),
 "LSTM": ("m.nn.LSTM(4, 3).double()", "mod(x.unsqueeze(1))[0]"), "GRU": ("m.nn.GRU(4, 3).double()", "mod(x.unsqueeze(1))[0]"),
 "RNN": ("m.nn.RNN(4, 3).double()", "mod(x.unsqueeze(1))[0]"),
 "MHA": ("m.nn.MultiheadAttention(4, 2).double()", "mod(b, b, b)[0]"), "EMB": ("m.nn.Embedding(5, 3).double()", "mod(m.tensor([0,2]))"),
 "LN": ("m.nn.LayerNorm(4).double()", "mod(x)"), "BN": ("m.nn.BatchNorm2d(2).double()", "mod(c)"),
}

# glassgrad composes these and the outer node takes torch's name; the edges are the inner graph's
# (torch's are the op's inputs): a fused primitive per op would give torch's edges
COMPOSED = {
    "elu", "softplus", "hardtanh", "relu6", "logsigmoid", "selu", "celu", "threshold", "prelu",
    "glu", "layer_norm", "layer_norm_w", "group_norm", "batch_norm", "nn_LayerNorm", "addmm",
    "baddbmm", "smooth_l1", "huber", "bce", "multi_margin", "dist", "cdist", "pdist", "kthvalue",
    "pixel_shuffle", "rot90", "take", "masked_scatter", "std_mean", "interpolate", "pad",
}
EDGES_DIFFER = dict.fromkeys(COMPOSED, "composed: the inner graph's edges") | {
    # torch's edge lists differ in what they include, not in the node's name
    "std": "glassgrad's StdBackward0 takes the variance node's output",
    "outer": "torch views the vector (ViewBackward0); glassgrad unsqueezes",
    "linear_bias": "glassgrad's fused Linear orders its edges (input, weight, bias)",
    "nn_Linear": "glassgrad's Linear takes the weight directly, torch its t()",
    "normalize": "torch divides by an expanded norm, glassgrad by the clamped norm",
    "scatter": "glassgrad wraps the number as a tensor input (a None edge)",
    "fmod": "glassgrad wraps the number as a tensor input (a None edge)",
    "remainder": "glassgrad wraps the number as a tensor input (a None edge)",
    "clamp_tensor": "torch keeps a (None, 0) edge for the missing max",
    "triplet": "torch's inner clamp_min is ClampMinBackward0, glassgrad's ClampBackward1",
    "take_along_dim": "torch expands the input first",
    "nn_MHA": "torch's out-projection is an addmm",
}
NAME_DIFFERS = {  # glassgrad's outer node is another op than torch's; what would fix it
    "reshape_noncontig": "torch copies then views (UnsafeViewBackward0); glassgrad's reshape "
                         "copies in one ViewBackward0",
    "matmul_batched": "torch's matmul folds batches into bmm and unfolds (UnsafeViewBackward0)",
    "matmul_bcast": "torch's matmul folds batches into mm and unfolds (UnsafeViewBackward0)",
    "sdpa": "torch's attention ends in matmul's UnsafeViewBackward0",
    "repeat_interleave": "torch expands, clones and views; glassgrad selects indices",
    "einsum_ii": "torch's einsum ends in the views of its bmm plan",
    "tensordot": "torch's tensordot ends in a view of mm",
    "kron": "torch's kron ends in an unsafe view",
    "nn_LSTM": "glassgrad runs a fused LSTM layer (LSTMLayerBackward0); torch stacks its steps",
}


def _inputs(lib):
    rng = np.random.default_rng(0)
    shapes = {"x": (3, 4), "y": (4, 5), "y2": (3, 4), "w": (4,), "w5": (5,), "w1": (1,),
              "w2": (3,), "b": (2, 3, 4), "s": (3, 3), "c": (2, 2, 4, 4), "k": (3, 2, 2, 2),
              "c3": (2, 2, 5), "k3": (3, 2, 2), "c4": (1, 4, 2, 2)}
    return {k: lib.tensor(rng.standard_normal(v), requires_grad=True) for k, v in shapes.items()}


def _node(name):
    return name.replace("torch::autograd::", "")


def _output(lib, case):
    env = _inputs(lib)
    expr = CASES[case]
    if expr in MODS:
        lib.manual_seed(0)
        env["mod"] = eval(MODS[expr][0], {"m": lib}, env)  # the fixed expressions above
        expr = MODS[expr][1]
    return eval(expr, {"m": lib}, env), env


def _shape(fn, edges=True):
    if fn is None:  # the op returned its (leaf) input: dropout in eval, type_as to its dtype
        return None
    names = (_node(fn.name()), type(fn).__name__)
    if not edges:
        return names
    return names, [(None if n is None else _node(n.name()), i) for n, i in fn.next_functions]


@pytest.mark.parametrize("case", list(CASES))
def test_grad_fn_name_matches_torch(case, request):
    if case in NAME_DIFFERS:
        request.applymarker(pytest.mark.xfail(reason=NAME_DIFFERS[case], strict=True))
    edges = case not in EDGES_DIFFER
    ours = _shape(_output(glassgrad, case)[0].grad_fn, edges)
    theirs = _shape(_output(torch, case)[0].grad_fn, edges)
    assert ours == theirs


@pytest.mark.parametrize("case", sorted(COMPOSED))
def test_renamed_composite_backprops_as_torch(case):
    """The renamed node runs the inner op's backward unchanged: every input's gradient equals
    torch's for a random cotangent."""
    grads = []
    for lib in (glassgrad, torch):
        out, env = _output(lib, case)
        cot = lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)),
                         dtype=out.dtype)
        out.backward(cot)
        grads.append({k: None if v.grad is None else v.grad.numpy() for k, v in env.items()
                      if k != "mod"})
    assert grads[0].keys() == grads[1].keys()
    for k in grads[0]:
        if grads[1][k] is None:
            assert grads[0][k] is None or not grads[0][k].any(), k
        else:
            np.testing.assert_allclose(grads[0][k], grads[1][k], rtol=1e-7, atol=1e-9, err_msg=k)


def test_renaming_leaves_a_returned_input_alone():
    """A composite that returns its input (dropout in eval) must not rename the input's node."""
    x = glassgrad.randn(3, requires_grad=True)
    y = x * 2
    assert glassgrad.nn.functional.dropout(y, training=False).grad_fn is y.grad_fn
    assert y.grad_fn.name() == "MulBackward0"
    assert type(glassgrad.nn.functional.layer_norm(y, (3,)).grad_fn).__name__ == \
        "NativeLayerNormBackward0"
    assert y.grad_fn.name() == "MulBackward0"
