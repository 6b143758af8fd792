"""Hooks and the Node API against torch: tensor hooks, retain_grad, post-accumulate hooks, Node
pre/post hooks, next_functions, AccumulateGrad.variable, and grad_fn names of common ops."""

from __future__ import annotations

import pytest

from tests.autograd_oracle import same, same_error


def test_tensor_hook_replaces_the_gradient():
    def run(torch):
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: g * 10)
        (y**2).sum().backward()
        return x.grad

    same(run)


def test_leaf_used_three_times_gets_one_call_with_the_sum():
    def run(torch):
        x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
        calls = []
        x.register_hook(lambda g: calls.append(g.clone()))
        (x * 2 + x * 3 + x.exp()).sum().backward()
        return calls, x.grad

    assert len(same(run)[0]) == 1


def test_hooks_run_in_registration_order_and_remove():
    def run(torch):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        h1 = x.register_hook(lambda g: seen.append(("first", g.clone())) or g * 2)
        x.register_hook(lambda g: seen.append(("second", g.clone())))
        (x * 3).sum().backward()
        h1.remove()
        (x * 3).sum().backward()
        return seen, x.grad

    same(run)


def test_hook_that_changes_the_size():
    def run(torch):
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)

        def shrink(g):
            return g[:2]

        y = x * 2
        y.register_hook(shrink)
        y.sum().backward()

    same_error(run, RuntimeError, "hook 'shrink' has changed the size of value")


def test_hook_on_tensor_without_grad():
    same_error(
        lambda t: t.ones(3).register_hook(lambda g: g),
        RuntimeError,
        "cannot register a hook on a tensor that doesn't require gradient",
    )


def test_retain_grad():
    def run(torch):
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        z = y.exp()
        (z * y).sum().backward()
        x.retain_grad()  # no-op on a leaf
        return y.grad, y.retains_grad, x.retains_grad, x.grad

    same(run)


def test_retain_grad_accumulates_over_backwards():
    def run(torch):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        (y**2).sum().backward(retain_graph=True)
        (y**2).sum().backward()
        return y.grad

    same(run)


def test_post_accumulate_grad_hook():
    def run(torch):
        p = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        seen = []
        p.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
        (p * p).sum().backward()
        (p * 3).sum().backward()
        return seen

    same(run)


def test_post_accumulate_grad_hook_on_non_leaf():
    same_error(
        lambda t: (t.ones(3, requires_grad=True) * 2).register_post_accumulate_grad_hook(
            lambda p: None
        ),
        RuntimeError,
        "post accumulate grad hooks cannot be registered on non-leaf tensors",
    )


def test_node_prehook_and_hook():
    def run(torch):
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        seen = []
        y = x.exp()
        z = y * 2
        z.grad_fn.register_prehook(lambda go: seen.append(("pre", go)))
        z.grad_fn.register_hook(lambda gi, go: seen.append(("post", gi, go)))
        y.grad_fn.register_prehook(lambda go: (go[0] * 0 + 1,))
        z.sum().backward()
        return seen, x.grad

    same(run)


def test_node_hook_replaces_grad_inputs():
    def run(torch):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        w = torch.tensor([3.0, 4.0], requires_grad=True)
        y = x * w
        handle = y.grad_fn.register_hook(lambda gi, go: (gi[0] * 100, gi[1]))
        y.sum().backward(retain_graph=True)
        a = (x.grad.clone(), w.grad.clone())
        handle.remove()
        y.sum().backward()
        return a, x.grad, w.grad

    same(run)


def test_next_functions_structure():
    def run(torch):
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = torch.ones(3)
        y = (x * w).exp() + x

        def desc(edge):
            node, nr = edge
            return None if node is None else (type(node).__name__, nr)

        exp_node = y.grad_fn.next_functions[0][0]
        mul_node = exp_node.next_functions[0][0]
        acc = y.grad_fn.next_functions[1][0]
        return (
            [desc(e) for e in y.grad_fn.next_functions],
            [desc(e) for e in exp_node.next_functions],
            [desc(e) for e in mul_node.next_functions],
            acc.variable is x,
            mul_node.next_functions[0][0] is acc,
            x.grad_fn is None,
            y.grad_fn.metadata == {},
        )

    same(run)


# ops whose recorded node is the same op in both libraries
NAMED_OPS = {
    "mul": lambda t, x, w: x * w,
    "add": lambda t, x, w: x + w,
    "sub": lambda t, x, w: x - w,
    "div": lambda t, x, w: x / w,
    "pow_scalar": lambda t, x, w: x**2,
    "pow_tensor": lambda t, x, w: x**w,
    "rpow": lambda t, x, w: 2**x,
    "sum": lambda t, x, w: x.sum(),
    "sum_dim": lambda t, x, w: x.sum(0),
    "mean": lambda t, x, w: x.mean(),
    "mean_dim": lambda t, x, w: x.mean(1),
    "exp": lambda t, x, w: x.exp(),
    "log": lambda t, x, w: x.log(),
    "log1p": lambda t, x, w: x.log1p(),
    "mm": lambda t, x, w: x.mm(w),
    "matmul": lambda t, x, w: x @ w,
    "sigmoid": lambda t, x, w: x.sigmoid(),
    "tanh": lambda t, x, w: x.tanh(),
    "relu": lambda t, x, w: x.relu(),
    "view": lambda t, x, w: x.view(9),
    "reshape": lambda t, x, w: x.reshape(9),
    "permute": lambda t, x, w: x.permute(1, 0),
    "expand": lambda t, x, w: x.expand(2, 3, 3),
    "clone": lambda t, x, w: x.clone(),
    "neg": lambda t, x, w: -x,
    "abs": lambda t, x, w: x.abs(),
    "sqrt": lambda t, x, w: x.sqrt(),
    "sin": lambda t, x, w: x.sin(),
    "cos": lambda t, x, w: x.cos(),
    "prod": lambda t, x, w: x.prod(),
    "reciprocal": lambda t, x, w: x.reciprocal(),
    "rsqrt": lambda t, x, w: x.rsqrt(),
    "where": lambda t, x, w: t.where(x > 0.5, x, w),
    "clamp": lambda t, x, w: x.clamp(0.1, 0.5),
    "clamp_min": lambda t, x, w: x.clamp(min=0.1),
    "cumsum": lambda t, x, w: x.cumsum(0),
    "logsumexp": lambda t, x, w: x.logsumexp(0),
    "norm": lambda t, x, w: x.norm(),
    "norm_dim": lambda t, x, w: x.norm(2, dim=1),
    "gather": lambda t, x, w: x.gather(0, t.zeros(3, 3, dtype=t.long)),
    "double": lambda t, x, w: x.double(),
    "to": lambda t, x, w: x.to(t.float64),
    "flip": lambda t, x, w: x.flip(0),
    "maximum": lambda t, x, w: t.maximum(x, w),
    "minimum": lambda t, x, w: t.minimum(x, w),
    "atan2": lambda t, x, w: t.atan2(x, w),
    "mul_scalar": lambda t, x, w: x * 2,
    "add_scalar": lambda t, x, w: x + 1,
    "div_scalar": lambda t, x, w: x / 2,
    "sub_alpha": lambda t, x, w: x.sub(w, alpha=2),
    "expm1": lambda t, x, w: x.expm1(),
    "erf": lambda t, x, w: x.erf(),
    "cumprod": lambda t, x, w: x.cumprod(0),
    "roll": lambda t, x, w: x.roll(1, 0),
    "scatter_add": lambda t, x, w: x.scatter_add(0, t.zeros(3, 3, dtype=t.long), w),
    "cat": lambda t, x, w: t.cat([x, w]),
}


@pytest.mark.parametrize("op", sorted(NAMED_OPS))
def test_grad_fn_names_match_torch(op):
    def run(torch):
        torch.manual_seed(0)
        x = torch.tensor([[0.1, 0.6, 0.3], [0.8, 0.2, 0.9], [0.4, 0.7, 0.5]], requires_grad=True)
        w = torch.tensor([[0.5, 0.1, 0.2], [0.3, 0.9, 0.4], [0.6, 0.2, 0.8]], requires_grad=True)
        return NAMED_OPS[op](torch, x, w).grad_fn.name()

    same(run)


def test_leaf_node_name_and_custom_names():
    def run(torch):
        x = torch.ones(2, requires_grad=True)
        y = x * 2
        acc = y.grad_fn.next_functions[0][0]
        return type(acc).__name__, acc.variable is x

    same(run)


def test_saved_tensors_hooks_pack_and_unpack():
    def run(torch):
        x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
        w = torch.tensor([3.0, 4.0], dtype=torch.float64, requires_grad=True)
        log = []

        def pack(t):
            log.append(("pack", t.detach().clone()))
            return t * 2

        def unpack(t):
            log.append(("unpack", t.detach().clone()))
            return t / 2

        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (x * w).exp()
        y.sum().backward()
        return len(log), sorted(k for k, _ in log), x.grad, w.grad

    same(run)


def test_saved_tensors_hooks_keep_double_backward():
    def run(torch):
        x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
        h = x * 3
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            y = (h.sin() * x).sum()
        (g,) = torch.autograd.grad(y, x, create_graph=True)
        (g2,) = torch.autograd.grad(g.sum(), x)
        return g, g2

    same(run)
