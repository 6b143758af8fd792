"""The autograd remainder of issue 15 against torch: allow_mutation_on_saved_tensors' copy on
write (its ``cloned`` / ``tid_to_weakhandle`` bookkeeping), ``del t.grad`` and ``t.data``'s rules,
``_materialize_non_diff_grads``, anomaly mode's message for a node made before it was on, forward
AD's error for a missing derivative, and autograd.functional's strict create_graph check."""

from __future__ import annotations

import warnings

import pytest

from tests.autograd_oracle import same, same_error


def _mutation_counts(torch):
    """The copies alive at each step of torch's own copy-on-write scenarios."""
    seen = []
    allow = torch.autograd.graph.allow_mutation_on_saved_tensors
    a = torch.tensor([[0.1, 0.5, 0.9], [0.3, 0.2, 0.7]], requires_grad=True)
    with allow() as ctx:
        b = a.clone()
        out = (b**2).sum()
        b.sin_()
        seen.append(len(ctx.cloned))
        out.backward()
        seen.append(a.grad.clone())
    seen.append(len(ctx.cloned))  # cleared when the block ends
    with allow() as ctx:
        x = a.detach().clone().requires_grad_().clone()
        out = (x**2).sum()
        seen.append((len(ctx.tid_to_weakhandle), len(ctx.cloned)))
        out.backward()
        x.sin_()
        seen.append(len(ctx.cloned))  # saved no longer: nothing copied
        out = (x**2).sum()
        x.sin_()
        seen.append(len(ctx.cloned))
        del out
        seen.append(len(ctx.cloned))  # the copy dies with the graph
        y, z = x**2, x**2
        x.sin_()
        seen.append(len(ctx.cloned))  # saved twice at one version: copied once
        del y, z
        u = x**2
        x.sin_()
        w = x**2
        x.sin_()
        seen.append(len(ctx.cloned))  # two versions: two copies
        del u
        seen.append(len(ctx.cloned))
        del w
    with allow() as ctx:
        p = torch.tensor([1.0], requires_grad=True)
        q = torch.tensor([1.0])
        out = p * q
        seen.append(len(ctx.tid_to_weakhandle))  # mul saves only q, the other factor
        torch.sin(torch.tensor([2.0]), out=q)
        seen.append(len(ctx.cloned))
        out.backward()
        seen.append((len(ctx.cloned), p.grad.clone()))
    with allow() as ctx:
        b = a.clone()
        out = (b**2).sum()
        b[:1] *= 10  # through a view starting at the base's first element
        (da,) = torch.autograd.grad(out, a, create_graph=True)
        (d2a,) = torch.autograd.grad(da.sum(), a)
        seen.append((len(ctx.cloned), da.detach(), d2a))
    return seen


def test_allow_mutation_on_saved_tensors_copies_on_write_as_torch():
    same(_mutation_counts)


def test_allow_mutation_copies_through_any_view():
    # glassgrad keys the buffer by its version counter: a view at an offset is seen too (torch
    # keys by data_ptr and would use the overwritten values here)
    import glassgrad as gg

    a = gg.tensor([[0.1, 0.5, 0.9], [0.3, 0.2, 0.7]], requires_grad=True)
    with gg.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
        b = a.clone()
        out = (b**2).sum()
        b[1:].mul_(10)
        b[0] = 5.0
        assert len(ctx.cloned) == 1
        out.backward()
    assert gg.allclose(a.grad, 2 * a)


def test_allow_mutation_errors_as_torch():
    def outside(torch):
        with torch.autograd.graph.allow_mutation_on_saved_tensors():
            out = (torch.ones(2, requires_grad=True) ** 2).sum()
        out.backward()

    def nested(torch):
        with torch.autograd.graph.allow_mutation_on_saved_tensors():
            with torch.autograd.graph.allow_mutation_on_saved_tensors():
                pass

    same_error(outside, AssertionError, "Trying to backward outside of the "
               "'allow_mutation_on_saved_tensors' context")
    same_error(nested, RuntimeError, "allow_mutation_on_saved_tensors contexts cannot be nested")


def test_del_grad_and_data_rules_as_torch():
    def run(torch):
        x = torch.ones(2, requires_grad=True)
        (x * 3).sum().backward()
        had = x.grad.clone()
        del x.grad
        return had, x.grad is None

    same(run)
    same_error(lambda torch: delattr(torch.ones(2), "data"), RuntimeError,
               "Deleting tensor data is not allowed")
    same_error(lambda torch: setattr(torch.ones(2), "data", None), TypeError,
               "Variable data has to be a tensor, but got NoneType")
    same(lambda torch: torch.autograd.torch.ones(2))


def test_materialize_non_diff_grads_false_passes_none():
    def run(torch):
        got = []

        class Two(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                a, b = x.clone(), x.clone()
                ctx.mark_non_differentiable(b)
                ctx._materialize_non_diff_grads = flag
                return a, b

            @staticmethod
            def backward(ctx, g0, g1):
                got.append(g1 is None)
                return g0

        for flag in (False, True):
            x = torch.tensor(1.0, requires_grad=True)
            Two.apply(x)[0].backward()
        return got

    assert same(run) == [True, False]


def test_anomaly_message_for_a_node_made_before_anomaly_mode():
    def run(torch):
        class Bad(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g / 0 * 0

        y = Bad.apply(torch.ones(2, requires_grad=True)).sum()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
                with torch.autograd.detect_anomaly():
                    y.backward()
        return any("No forward pass information available" in str(w.message) for w in caught)

    assert same(run)


def test_anomaly_warning_made_an_error_goes_to_stderr(capfd):
    def run(torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.autograd.detect_anomaly():
                warnings.simplefilter("error")
                a = torch.randn(5, requires_grad=True)
                d1 = a + 1
                d2 = d1**2
                d1 += 1
                torch.autograd.grad(d2.sum(), a)

    same_error(run, RuntimeError, "modified by an inplace operation")
    assert capfd.readouterr().err.count("Error detected in PowBackward0") == 2


def test_forward_ad_without_a_derivative_raises_torchs_error():
    def run(torch):
        fwAD = torch.autograd.forward_ad
        with fwAD.dual_level():
            x = fwAD.make_dual(torch.rand(3), torch.rand(3))
            torch.igamma(x, x)

    same_error(run, NotImplementedError, "Trying to use forward AD with igamma that does not "
               "support it")


@pytest.mark.parametrize("name", ["vjp", "jvp"])
def test_functional_strict_create_graph_and_size_errors(name):
    def strict(torch):
        fn = getattr(torch.autograd.functional, name)
        fn(lambda a: a.clone(), torch.rand(4, requires_grad=True), torch.rand(4), strict=True,
           create_graph=True)

    def size(torch):
        fn = getattr(torch.autograd.functional, name)
        fn(lambda a: a * 2, torch.rand(4 if name == "vjp" else 3), torch.rand(2))

    same_error(strict, RuntimeError, "jacobian of the user-provided function is independent of "
               "input 0. This is not allowed in strict mode when create_graph=True")
    same_error(size, RuntimeError, "v has invalid size: should be torch.Size([")


@pytest.mark.parametrize("index", [
    [[1, 1, 3, 2, 1, 2], [0]], [slice(None), [2, 3]], [[2, 3], slice(None)], [0], [[0, 1], [1, 0]],
    [None, 1], [Ellipsis, [1]]], ids=str)
def test_list_index_with_sequences_reads_as_a_tuple(index):
    def run(torch):
        x = torch.arange(1.0, 17).view(4, 4).requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = x[index]
            y.sum().backward()
            z = x.detach().clone()
            z[index] = 0
        return y, x.grad, z

    same(run)
