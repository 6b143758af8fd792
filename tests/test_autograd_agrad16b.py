"""More of issue 15's autograd remainder against torch: a grad_fn called with the wrong number
of gradients, the deleters and readers of ``requires_grad`` / ``_grad_fn`` / ``_backward_hooks``,
``InplaceFunction``, inference_mode's view+inplace errors and ``resize_`` inside inference_mode."""

from __future__ import annotations

import pytest

from tests.autograd_oracle import same, same_error


@pytest.mark.parametrize("n", [0, 2])
def test_grad_fn_call_checks_the_number_of_gradients(n):
    def run(torch):
        x = torch.ones(1, requires_grad=True)
        y = x**2
        y.grad_fn(*[x.detach()] * n)

    same_error(run, TypeError, f"expected 1 arguments, got {n} instead")


def test_grad_fn_call_with_one_gradient_runs_the_backward():
    def run(torch):
        x = torch.tensor([1.5], requires_grad=True)
        return (x**2).grad_fn(torch.tensor([2.0]))

    same(run)


@pytest.mark.parametrize("attr, phrase", [
    ("requires_grad", "requires_grad must be a bool"),
    ("_grad_fn", "Deletion of _grad_fn not allowed"),
    ("_backward_hooks", "Deletion of _backwards_hooks not allowed"),
])
def test_autograd_attributes_refuse_deletion(attr, phrase):
    same_error(lambda torch: delattr(torch.ones(2, requires_grad=True), attr), RuntimeError,
               phrase)


def test_grad_fn_and_backward_hooks_read_as_torch():
    def run(torch):
        x = torch.ones(2, requires_grad=True)
        y = x * 2
        seen = [x._backward_hooks is None, x._grad_fn is None, y._grad_fn is y.grad_fn]
        h = x.register_hook(lambda g: g * 3)
        y.register_hook(lambda g: g)
        seen += [len(x._backward_hooks), len(y._backward_hooks)]
        h.remove()
        seen.append(len(x._backward_hooks))
        return seen

    same(run)



def test_backward_hooks_set_to_a_dict_run_what_is_added_to_it():
    def run(torch):
        from collections import OrderedDict

        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        x._backward_hooks = OrderedDict()
        y._backward_hooks = OrderedDict()
        x._backward_hooks["a"] = lambda g: g * 3
        y._backward_hooks["b"] = lambda g: g + 1
        free = torch.ones(2) + 1  # requires no grad: its hooks never run
        free._backward_hooks = OrderedDict(c=lambda g: 1 / 0)
        (y * y + free).sum().backward()
        return x.grad, list(x._backward_hooks), list(y._backward_hooks)

    same(run)

def test_inplace_function_subclass_marks_a_plain_input_dirty():
    def run(torch):
        class Inplace(torch.autograd.function.InplaceFunction):
            @staticmethod
            def forward(ctx, a, b):
                ctx.mark_dirty(a)
                return a.add_(b), b + 2

            @staticmethod
            def backward(ctx, grad_a, grad_b):
                return grad_a, grad_a + 3 * grad_b

        x = torch.tensor([1.0, 2.0])
        y = torch.tensor([0.5, -1.0], requires_grad=True)
        q, p = Inplace.apply(x, y)
        (q * 2 + p).sum().backward()
        return q is x, q.grad_fn.__class__ is Inplace._backward_cls, q.detach(), y.grad

    same(run)
    same_error(lambda torch: torch.autograd.function.InplaceFunction.apply(
        torch.ones(2, requires_grad=True)), RuntimeError, "You must implement the forward")


@pytest.mark.parametrize("op", ["add_", "transpose_"])
def test_write_to_an_inference_mode_view_in_normal_mode_is_refused(op):
    def run(torch):
        a = torch.ones(1, 2, 3, requires_grad=True).clone()
        with torch.inference_mode():
            v = a.view_as(a)
        getattr(v, op)(*((2,) if op == "add_" else (0, 1)))

    same_error(run, RuntimeError,
               "A view was created in inference mode and is being modified inplace in normal "
               "mode. Given that this use case is ambiguous")


@pytest.mark.parametrize("mode, phrase", [
    ("no_grad", "which was created in no_grad mode and is being modified inplace with grad "
                "mode enabled"),
    ("inference_mode", "which was created in inference mode and is being modified inplace in "
                       "normal mode"),
])
def test_view_of_a_view_made_in_a_no_grad_mode_is_refused(mode, phrase):
    def run(torch):
        x = torch.zeros(2)
        with getattr(torch, mode)():
            y = x.view(2)
        y.requires_grad_(True)
        z = y.view(2)
        z /= 2

    same_error(run, RuntimeError, phrase)


def test_squeeze_inplace_on_a_no_grad_view_is_refused():
    def run(torch):
        z = torch.ones(2, 1, requires_grad=True) * 2
        with torch.no_grad():
            v = z.view(2, 1)
        v.squeeze_(1)

    same_error(run, RuntimeError, "A view was created in no_grad mode")


def test_resize_inside_inference_mode_keeps_requires_grad():
    def run(torch):
        with torch.inference_mode():
            c = torch.ones(1, 2, 3, requires_grad=True)
            c.resize_(1, 2)
            d = torch.ones(1, 2, 3, requires_grad=True)
            d.resize_as_(torch.ones(3))
        return list(c.shape), c.requires_grad, list(d.shape), torch.is_inference(c)

    same(run)
    same_error(lambda torch: torch.ones(2, requires_grad=True).resize_(1), RuntimeError,
               "cannot resize variables that require grad")


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_view_made_with_grad_off_requires_grad_through_its_base(mode):
    def run(torch):
        s = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        a = s.clone()
        with getattr(torch, mode)():
            v = a[:2]
            vv = v.view(2)
            seen = [v.requires_grad, v.is_leaf, v._is_view(), vv.requires_grad, vv.is_leaf]
            b = a.clone()
            b.add_(1)
            seen += [b.requires_grad, b.view(3).requires_grad]
            kept = s.detach()[:2]
        y = (v * v).sum()
        seen += [y.requires_grad, kept.requires_grad, v.grad_fn is None]
        y.backward()  # the view has no accumulator: nothing receives the gradient
        return seen + [v.grad is None, s.grad is None]

    same(run)



@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("write", ["add_", "copy_"])
def test_view_returned_by_a_custom_function_refuses_in_place_writes(requires_grad, write):
    def run(torch):
        class ViewOf(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.view_as(x)

            @staticmethod
            def backward(ctx, grad):
                return grad

        a = torch.rand(1, 2, requires_grad=requires_grad).clone()
        b = torch.rand(1, requires_grad=True)
        v = ViewOf.apply(a)
        getattr(v, write)(b.expand(1, 2))

    msg = same_error(run, RuntimeError, "This view was created inside a custom Function (or "
                                        "because an input was returned as-is)")
    assert ("Output 0 of ViewOf is a view" in msg) == requires_grad


def test_grad_runs_no_accumulate_grad_node_hooks_but_the_leafs_tensor_hooks():
    def run(torch):
        counts = {"tensor": 0, "pre": 0, "post": 0}

        def bump(key):
            def hook(*_):
                counts[key] += 1
            return hook

        a = torch.tensor(1.0, requires_grad=True)
        b = a * 2
        c = b * 2
        a.register_hook(bump("tensor"))
        acc = b.grad_fn.next_functions[0][0]
        acc.register_hook(bump("post"))
        acc.register_prehook(bump("pre"))
        seen = []
        for go in (lambda: torch.autograd.grad(c, inputs=(a, b), retain_graph=True),
                   lambda: c.backward(retain_graph=True)):
            go()
            seen.append(dict(counts))
        return seen

    same(run)


def test_backward_inputs_runs_the_inputs_node_and_takes_its_gradient_before_its_pre_hooks():
    def run(torch):
        log = []

        def tensor_hook(g):
            log.append("tensor")
            return g * 3

        def pre_hook(gs):
            log.append("pre")
            return tuple(g * 2 for g in gs)

        a = torch.tensor(1.0, requires_grad=True)
        b = a.clone()
        b.grad_fn.register_prehook(pre_hook)
        b.grad_fn.register_hook(lambda gi, go: log.append("post"))
        b.register_hook(tensor_hook)
        a.register_hook(lambda g: log.append("a"))
        b.sum().backward(inputs=(b,), retain_graph=True)
        seen = [list(log), b.grad, a.grad]
        log.clear()
        seen += [torch.autograd.grad(b.sum(), b), list(log)]
        return seen

    same(run)


def test_function_with_both_backward_and_vjp_fails_when_backward_runs():
    def run(torch):
        class Both(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g

            @staticmethod
            def vjp(ctx, g):
                return g

        y = Both.apply(torch.rand(1, requires_grad=True))  # forward is fine
        y.sum().backward()

    same_error(run, RuntimeError, "Implementing both 'backward' and 'vjp' for a custom Function "
                                  "is not allowed")

    def only_vjp(torch):
        class OnlyVjp(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def vjp(ctx, g):
                return g * 2

        x = torch.tensor([1.0, 3.0], requires_grad=True)
        OnlyVjp.apply(x).sum().backward()
        return x.grad

    same(only_vjp)


def test_set_gives_a_leaf_a_new_gradient_edge():
    def run(torch):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        edge = torch.autograd.graph.get_gradient_edge(x)
        out = x * 3
        with torch.no_grad():
            x.set_(torch.tensor([5.0, 6.0]))
        seen = [torch.autograd.graph.get_gradient_edge(x).node is edge.node,
                torch.autograd.grad(out.sum(), edge, retain_graph=True)]
        out.sum().backward()  # the old node still accumulates into x
        return seen + [x.grad]

    same(run)

    def unused(torch):
        x = torch.rand(2, requires_grad=True)
        out = x.clone()
        with torch.no_grad():
            x.set_(torch.rand_like(x))
        torch.autograd.grad(out.sum(), x)

    same_error(unused, RuntimeError, "to not have been used in the graph")


def test_resize_to_the_same_shape_is_a_no_op():
    def run(torch):
        x = torch.rand(1)
        y = torch.randn(3)
        x.resize_((1, 2))
        seen = [x._version]
        x.resize_as_(y)
        seen.append(x._version)
        x.resize_((3,))
        x.resize_as_(y)
        seen.append(x._version)
        t = torch.arange(6.0).reshape(2, 3).t()
        t.resize_(3, 2)
        return seen + [t._version, t.stride(), t]

    same(run)


@pytest.mark.parametrize("split", ["unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk"])
def test_unsafe_split_pieces_are_no_views_with_their_own_version_counters(split):
    def run(torch):
        a = torch.arange(9.0).reshape(3, 3).requires_grad_()
        b = a * 2
        arg = (1, 1, 1) if split == "unsafe_split_with_sizes" else (1 if split == "unsafe_split"
                                                                     else 3)
        s1, s2, _ = getattr(b, split)(arg)
        s1.mul_(s2)  # s2 saved for backward stays valid: s1's write bumps only s1's counter
        s1.sum().backward()
        return s1._is_view(), s1._version, s2._version, b._version, a.grad, b.detach()

    same(run)


def test_saved_input_detached_in_place_is_refused_a_saved_output_is_not():
    def detached_input(torch):
        a = torch.tensor(1.0, requires_grad=True).clone()
        b = a.sin()
        before = a._version
        a.detach_()
        assert a._version == before and not a.requires_grad
        b.backward()

    same_error(detached_input, RuntimeError, "Trying to use a saved tensor that has been detached "
                                             "in-place, i.e. with .detach_()")

    def detached_output(torch):
        x = torch.tensor(2.0, requires_grad=True)
        y = x.exp()
        z = y * 2
        y.detach_()
        z.backward()
        a = torch.tensor(1.5, requires_grad=True)
        c = a.clone()
        d = c.exp()
        c.detach_()
        d.backward()
        return x.grad, a.grad, y._version

    same(detached_output)
