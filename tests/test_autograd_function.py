"""Custom ``autograd.Function`` against torch: ctx API, saved tensors and versions, multiple
outputs, non-tensor arguments, mark_dirty / mark_non_differentiable / set_materialize_grads,
once_differentiable, PyTorch's errors for wrong gradients, and higher order through a Function."""

from __future__ import annotations

import pytest

from tests.autograd_oracle import same, same_error


def functions(torch):
    """The same Function classes built on either library."""
    Function = torch.autograd.Function

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            result = x.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad):
            (result,) = ctx.saved_tensors
            return grad * result

    class Cube(Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x**3 * k

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x**2 * ctx.k, None

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**2

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 2 * x

    class MulAdd(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y, x + y

        @staticmethod
        def backward(ctx, grad_prod, grad_sum):
            x, y = ctx.saved_tensors
            return grad_prod * y + grad_sum, grad_prod * x + grad_sum

    class TooMany(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    class TooFew(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return grad

    class WrongShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad[:2]

    class GradForNumber(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    class Broadcast(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad.expand(4, 3) * 2  # summed back to (1, 3)

    class Mixed(Function):
        @staticmethod
        def forward(ctx, a, x, b):
            ctx.seen = ctx.needs_input_grad
            return x * 2 + b

        @staticmethod
        def backward(ctx, grad):
            return None, grad * 2, grad

    class Double(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    class MaxIndex(Function):
        @staticmethod
        def forward(ctx, x):
            idx = x.argmax()
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(x, idx)
            return x.max(), idx

        @staticmethod
        def backward(ctx, grad_value, grad_idx):
            x, idx = ctx.saved_tensors
            grad = torch.zeros_like(x)
            grad[idx] = grad_value
            return grad

    class TwoNoMaterialize(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            ctx.got = (g1 is None, g2 is None)
            return (g1 * 2 if g1 is not None else 0) + (g2 * 3 if g2 is not None else 0)

    class TwoMaterialize(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    class Scale(Function):
        @staticmethod
        def forward(x, k):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.k, None

    return {
        c.__name__: c
        for c in (
            Exp,
            Cube,
            Square,
            MulAdd,
            TooMany,
            TooFew,
            WrongShape,
            GradForNumber,
            Broadcast,
            Mixed,
            Double,
            MaxIndex,
            TwoNoMaterialize,
            TwoMaterialize,
            Identity,
            Scale,
        )
    }


def test_exp_function_values_and_node():
    def run(torch):
        x = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
        y = functions(torch)["Exp"].apply(x)
        y.sum().backward()
        node = y.grad_fn
        return (
            y,
            x.grad,
            node.name(),
            type(node).__name__,
            len(node.next_functions),
            type(node.next_functions[0][0]).__name__,
            node.next_functions[0][0].variable is x,
        )

    same(run)


def test_saved_output_modified_in_place():
    def run(torch):
        x = torch.tensor([0.5, 1.0], requires_grad=True)
        y = functions(torch)["Exp"].apply(x)
        y.add_(1)
        y.sum().backward()

    same_error(
        run,
        RuntimeError,
        "one of the variables needed for gradient computation has been "
        "modified by an inplace operation: [torch.FloatTensor [2]], which is output 0 of "
        "Exp, is at version 1; expected version 0 instead.",
    )


def test_saved_tensors_freed_after_backward():
    def run(torch):
        x = torch.tensor([0.5, 1.0], requires_grad=True)
        y = functions(torch)["Exp"].apply(x)
        s = y.sum()
        s.backward()
        s.backward()

    same_error(run, RuntimeError, "Trying to backward through the graph a second time")

    def access(torch):
        x = torch.tensor([0.5, 1.0], requires_grad=True)
        y = functions(torch)["Exp"].apply(x)
        y.sum().backward()
        return y.grad_fn.saved_tensors

    same_error(access, RuntimeError, "Trying to backward through the graph a second time")


def test_non_tensor_argument_and_higher_order():
    def run(torch):
        x = torch.tensor([0.5, 2.0], dtype=torch.float64, requires_grad=True)
        y = functions(torch)["Cube"].apply(x, 2.0)
        (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
        (g2,) = torch.autograd.grad(g.sum(), x, create_graph=True)
        (g3,) = torch.autograd.grad(g2.sum(), x)
        return y, g, g2, g3, y.grad_fn.name()

    same(run)


def test_double_backward_through_saved_output():
    def run(torch):
        x = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
        y = functions(torch)["Exp"].apply(x)
        (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
        (g2,) = torch.autograd.grad(g.sum(), x)
        return g, g2

    same(run)


def test_once_differentiable():
    def first(torch):
        x = torch.tensor([0.5, 2.0], requires_grad=True)
        functions(torch)["Square"].apply(x).sum().backward()
        return x.grad

    same(first)

    def plain_cotangent(torch):
        # the incoming gradient does not require grad: the result is simply not differentiable
        x = torch.tensor([0.5, 2.0], requires_grad=True)
        (g,) = torch.autograd.grad(functions(torch)["Square"].apply(x).sum(), x, create_graph=True)
        return g, g.requires_grad

    same(plain_cotangent)

    def double(torch):
        x = torch.tensor([0.5, 2.0], requires_grad=True)
        y = functions(torch)["Square"].apply(x)
        (g,) = torch.autograd.grad((y**2).sum(), x, create_graph=True)
        g.sum().backward()

    same_error(
        double,
        RuntimeError,
        "trying to differentiate twice a function that was marked with @once_differentiable",
    )

    def double_grad(torch):
        x = torch.tensor([0.5, 2.0], requires_grad=True)
        y = functions(torch)["Square"].apply(x)
        (g,) = torch.autograd.grad((y**2).sum(), x, create_graph=True)
        torch.autograd.grad(g.sum(), x)

    same_error(
        double_grad,
        RuntimeError,
        "The differentiated Tensor at index 0 appears to not have been used in the graph.",
    )


def test_multiple_outputs():
    def run(torch):
        x = torch.tensor([0.5, 2.0], requires_grad=True)
        y = torch.tensor([1.5, -1.0], requires_grad=True)
        prod, total = functions(torch)["MulAdd"].apply(x, y)
        (prod * 2 + total**2).sum().backward()
        return x.grad, y.grad, prod.grad_fn is total.grad_fn, prod.output_nr, total.output_nr

    same(run)

    def one_used(torch):
        x = torch.tensor([0.5, 2.0], requires_grad=True)
        y = torch.tensor([1.5, -1.0], requires_grad=True)
        _, total = functions(torch)["MulAdd"].apply(x, y)
        total.sum().backward()
        return x.grad, y.grad

    same(one_used)


WRONG = {
    "TooMany": (
        (),
        ("function TooManyBackward returned an incorrect number of gradients (expected 1, got 2)"),
    ),
    "TooFew": (
        (2.0,),
        ("function TooFewBackward returned an incorrect number of gradients (expected 2, got 1)"),
    ),
    "WrongShape": (
        (),
        (
            "Function WrongShapeBackward returned an invalid gradient at index 0 - got "
            "[2] but expected shape compatible with [3]"
        ),
    ),
    "GradForNumber": (
        (2.0,),
        (
            "function GradForNumberBackward returned a gradient different than "
            "None at position 2, but the corresponding forward input was not a "
            "Variable"
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_gradients(name):
    args, phrase = WRONG[name]

    def run(torch):
        x = torch.ones(3, requires_grad=True)
        functions(torch)[name].apply(x, *args).sum().backward()

    same_error(run, RuntimeError, phrase)


def test_broadcast_gradient_is_reduced():
    def run(torch):
        x = torch.ones(1, 3, requires_grad=True)
        functions(torch)["Broadcast"].apply(x).sum().backward()
        return x.grad

    same(run)


def test_needs_input_grad_and_edges():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        b = torch.ones(3)
        y = functions(torch)["Mixed"].apply(1, x, b)
        y.sum().backward()
        return (
            y.grad_fn.seen,
            y.grad_fn.needs_input_grad,
            x.grad,
            len(y.grad_fn.next_functions),
            y.grad_fn.next_functions[1],
        )

    same(run)


def test_mark_dirty():
    def leaf(torch):
        functions(torch)["Double"].apply(torch.ones(3, requires_grad=True))

    same_error(
        leaf,
        RuntimeError,
        "a leaf Variable that requires grad has been used in an in-place operation.",
    )

    def non_leaf(torch):
        a = torch.ones(3, requires_grad=True)
        b = a * 1
        c = functions(torch)["Double"].apply(b)
        before = (c is b, b._version, b.grad_fn.name())
        (c * c).sum().backward()
        return before, a.grad

    same(non_leaf)

    def view(torch):
        a = torch.ones(3, requires_grad=True)
        b = a.clone()
        v = b[:2]
        c = functions(torch)["Double"].apply(v)
        (b * b).sum().backward()
        return c is v, a.grad, b.detach()

    same(view)


def test_mark_non_differentiable():
    def run(torch):
        x = torch.tensor([1.0, 3.0, 2.0], requires_grad=True)
        value, idx = functions(torch)["MaxIndex"].apply(x)
        value.backward()
        return value.requires_grad, idx.requires_grad, idx.grad_fn, x.grad

    same(run)


def test_materialize_grads():
    def run(torch, name):
        x = torch.ones(2, requires_grad=True)
        a, _ = functions(torch)[name].apply(x)
        a.sum().backward()
        return x.grad, getattr(a.grad_fn, "got", None)

    same(lambda t: run(t, "TwoNoMaterialize"))
    same(lambda t: run(t, "TwoMaterialize"))


def test_input_returned_as_is_and_no_grad():
    def run(torch):
        x = torch.ones(2, requires_grad=True)
        y = functions(torch)["Identity"].apply(x)
        with torch.no_grad():
            z = functions(torch)["Exp"].apply(x)
        return y is x, y.grad_fn.name(), z.requires_grad, z.grad_fn

    same(run)


def test_setup_context_style():
    def run(torch):
        x = torch.ones(2, requires_grad=True)
        functions(torch)["Scale"].apply(x, 3.0).sum().backward()
        return x.grad

    same(run)


def test_backward_cls_and_direct_apply():
    def run(torch):
        fns = functions(torch)
        x = torch.tensor([0.5, 1.0], requires_grad=True)
        y = fns["Exp"].apply(x)
        return fns["Exp"]._backward_cls.__name__, y.grad_fn.apply(torch.ones(2))

    same(run)
