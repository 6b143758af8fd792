"""Strides, storages, set_/resize_ and memory formats, each run on torch and on glassgrad and
compared (issue 15, lane surface)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import glassgrad

LIBS = (torch, glassgrad)

# each probe: lib -> a value made only of Python numbers, tuples, lists, bools
GEOMETRY = {
    "contiguous": lambda lib, x: (x.stride(), x.storage_offset(), x.is_contiguous()),
    "size-1 dims": lambda lib, x: lib.zeros(3, 1, 4).stride(),
    "empty": lambda lib, x: (lib.zeros(0, 3).stride(), lib.zeros(()).stride()),
    "one dim": lambda lib, x: (x.stride(1), x.stride(-2)),
    "transpose": lambda lib, x: (x.t().stride(), x.t().is_contiguous(), x.t().dim_order()),
    "permute": lambda lib, x: x.reshape(2, 3, 2).permute(2, 0, 1).stride(),
    "expand": lambda lib, x: x[0].expand(2, 3, 4).stride(),
    "narrow": lambda lib, x: (x.narrow(1, 1, 2).stride(), x.narrow(1, 1, 2).storage_offset()),
    "step slice": lambda lib, x: (x[1:, ::2].stride(), x[1:, ::2].storage_offset()),
    "diagonal": lambda lib, x: (x.diagonal().stride(), x.diagonal(1).storage_offset()),
    "select": lambda lib, x: (x[2].storage_offset(), x[:, 3].stride(), x[:, 3].storage_offset()),
    "elementwise keeps layout": lambda lib, x: (x.t() * 2).stride(),
    "data_ptr": lambda lib, x: (x[1:].data_ptr() - x.data_ptr(), x.t().data_ptr() == x.data_ptr(),
                                x.const_data_ptr() == x.data_ptr(), lib.zeros(0).data_ptr()),
    "storage": lambda lib, x: (x[1:].untyped_storage().nbytes(),
                               x[1:].untyped_storage().data_ptr() == x.data_ptr(),
                               x.untyped_storage().size(), len(x.untyped_storage()),
                               x.untyped_storage()[4:8].nbytes(), lib.is_storage(x),
                               lib.is_storage(x.untyped_storage())),
    "storage bytes": lambda lib, x: lib.arange(3, dtype=lib.int16).untyped_storage().tolist(),
    "expanded storage": lambda lib, x: x[0].expand(5, 4).untyped_storage().nbytes(),
    "dim_order": lambda lib, x: lib.empty(2, 3, 4, 5).permute(0, 2, 3, 1).dim_order(),
    "empty_strided": lambda lib, x: (lib.empty_strided((2, 3), (1, 2)).stride(),
                                     lib.empty_strided((2, 3), (1, 2)).untyped_storage().nbytes(),
                                     x.new_empty_strided((2, 2), (1, 2)).stride(),
                                     x.new_empty_strided((2, 2), (1, 2)).dtype == x.dtype),
    "empty_permuted": lambda lib, x: lib.empty_permuted((2, 3, 4), (2, 0, 1)).stride(),
    "channels_last": lambda lib, x: _channels_last(lib),
    "channels_last_3d": lambda lib, x: lib.ones(2, 3, 4, 5, 6).contiguous(
        memory_format=lib.channels_last_3d).stride(),
    "is_contiguous formats": lambda lib, x: (
        x.is_contiguous(memory_format=lib.channels_last),
        x.is_contiguous(memory_format=lib.contiguous_format),
        lib.legacy_contiguous_format is lib.contiguous_format),
    "pinned": lambda lib, x: x.is_pinned(),
}


def _channels_last(lib):
    y = lib.arange(120.).reshape(2, 3, 4, 5)
    c = y.contiguous(memory_format=lib.channels_last)
    return (c.stride(), c.is_contiguous(), c.is_contiguous(memory_format=lib.channels_last),
            (c + 1).stride(), c.contiguous(memory_format=lib.channels_last) is c,
            c.contiguous().stride(), c.tolist() == y.tolist())


@pytest.mark.parametrize("name", GEOMETRY)
def test_geometry_matches_torch(name):
    theirs, ours = (GEOMETRY[name](lib, lib.arange(12.).reshape(3, 4)) for lib in LIBS)
    assert ours == theirs


def _run(fn):
    out = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out.append(("ok", fn(lib), [str(w.message) for w in caught]))
            except Exception as exc:  # noqa: BLE001 - the error itself is compared
                out.append((type(exc).__name__, str(exc).split("\n")[0], []))
    return out


def _resize_grow(lib):
    r = lib.arange(6.)
    r.resize_(2, 2)
    first = r.tolist()
    r.resize_(3, 3)
    return first, r[:2].tolist(), r.untyped_storage().nbytes(), r.stride()


def _set_storage(lib):
    a = lib.arange(6.)
    b = lib.empty(0)
    b.set_(a.untyped_storage(), 2, (2, 2), (1, 1))
    c = lib.empty(0).set_(a)
    d = lib.empty(3).set_()
    a[3] = 30.0  # writes through every tensor set to a's storage
    return (b.tolist(), b.is_set_to(a), c.is_set_to(a), a.is_set_to(a), a[1:].is_set_to(a),
            c.data_ptr() == a.data_ptr(), tuple(d.shape), c.tolist())


BEHAVIOURS = {
    "resize_ shrink and grow": _resize_grow,
    "resize_ view": lambda lib: lib.arange(6.)[1:].resize_(2).tolist(),
    "resize_ requires grad": lambda lib: lib.ones(3, requires_grad=True).resize_(3),
    "resize_ numpy": lambda lib: _resize_numpy(lib),
    "resize_ negative": lambda lib: lib.arange(6.).resize_(2, -1),
    "resize_ channels_last rank": lambda lib: lib.arange(6.).resize_(
        (2, 2), memory_format=lib.channels_last),
    "resize_ channels_last": lambda lib: lib.arange(6.).resize_(
        (1, 2, 2, 1), memory_format=lib.channels_last).stride(),
    "resize_as_": lambda lib: lib.arange(6.).resize_as_(lib.zeros(2, 2)).tolist(),
    "resize_as_ function": lambda lib: lib.resize_as_(lib.arange(6.), lib.zeros(2, 2)).tolist(),
    "as_strided_ function": lambda lib: lib.as_strided_(lib.zeros(4), (2, 2), (1, 1)).stride(),
    "resize deprecated": lambda lib: lib.arange(6.).resize(2, 3).tolist(),
    "resize wrong numel": lambda lib: lib.arange(6.).resize(2, 2),
    "resize_as deprecated": lambda lib: lib.arange(4.).resize_as(lib.zeros(2, 2)).tolist(),
    "set_ storage": _set_storage,
    "set_ dtype": lambda lib: lib.empty(0, dtype=lib.int64).set_(lib.arange(3.)),
    "set_ leaf": lambda lib: lib.ones(3, requires_grad=True).set_(lib.arange(3.)),
    "as_strided out of bounds": lambda lib: lib.arange(12.).as_strided((2, 2), (1, 2), 100),
    "as_strided lengths": lambda lib: lib.arange(12.).as_strided((2, 2), (1, 2, 3)),
    "as_strided negative size": lambda lib: lib.arange(12.).as_strided((2, -2), (1, 2)),
    "as_strided negative stride": lambda lib: lib.arange(12.).as_strided((2, 2), (1, -2)),
    "as_strided_": lambda lib: _as_strided_(lib),
    "as_strided_ leaf": lambda lib: lib.ones(3, requires_grad=True).as_strided_((2,), (1,)),
    "as_strided writes through": lambda lib: _write_through(lib),
    "contiguous channels_last rank": lambda lib: lib.ones(2, 3).contiguous(
        memory_format=lib.channels_last),
    "empty_permuted bad": lambda lib: lib.empty_permuted((2, 3), (0, 0)),
    "storage element access": lambda lib: _storage_access(lib),
    "stride out of range": lambda lib: lib.ones(2, 3).stride(2),
    "sparse geometry": lambda lib: (lambda s: (s.stride(), s.stride(0), s.storage_offset(),
                                               s.is_contiguous()))(lib.ones(2, 2).to_sparse()),
    "sparse data_ptr": lambda lib: lib.ones(2, 2).to_sparse().data_ptr(),
    "sparse storage": lambda lib: lib.ones(2, 2).to_sparse().untyped_storage(),
    "sparse is_shared": lambda lib: lib.ones(2, 2).to_sparse().is_shared(),
    "sparse dim_order": lambda lib: lib.ones(2, 2).to_sparse().dim_order(),
}


def _resize_numpy(lib):
    a = np.arange(3.0)
    return lib.from_numpy(a).resize_(10)


def _as_strided_(lib):
    z = lib.zeros(4)
    out = z.as_strided_((2, 2), (1, 1))
    return out is z, tuple(z.shape), z.stride()


def _write_through(lib):
    x = lib.zeros(6)
    w = x.as_strided((2, 2), (1, 2), 1)
    w.fill_(1.0)
    return x.tolist(), w._version == x._version


def _storage_access(lib):
    # both libraries warn once per process: start both from "not warned yet", whatever ran before
    torch.storage._warn_typed_storage_removal.__dict__["has_warned"] = False
    glassgrad._storage._WARNED.discard("typed")
    x = lib.arange(4.)
    s = x.untyped_storage()
    s[0] = 5
    ts = x.storage()
    ts[1] = 7.0
    return (s[1], ts[1], ts.size(), ts.nbytes(), ts.element_size(), ts.dtype is x.dtype,
            x.tolist()[1:], ts.data_ptr() == x.data_ptr(), ts.untyped().nbytes(),
            x.storage_type().__name__, len(ts.tolist()))


@pytest.mark.parametrize("name", BEHAVIOURS)
def test_behaviour_matches_torch(name):
    theirs, ours = _run(BEHAVIOURS[name])
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "ok":
        assert ours[1] == theirs[1]
        assert ours[2] == theirs[2]
    else:  # torch's key phrase starts glassgrad's message
        assert ours[1].startswith(theirs[1]) or theirs[1] in ours[1], (ours, theirs)


def test_as_strided_on_history():
    """``as_strided_`` on a non-leaf: the gradient flows through the new window, as torch's."""
    grads = []
    for lib in LIBS:
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True, dtype=lib.float64)
        v = w * 2
        v.as_strided_((2, 2), (1, 1))
        (v * lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)).sum().backward()
        grads.append((w.grad.tolist(), v.grad_fn.name()[:16]))
    assert grads[0] == grads[1]


def test_as_strided_scatter_gradients():
    """torch 2.13's gradient for ``input`` is wrong (it fails torch's own gradcheck), so glassgrad's
    is checked by finite differences; the gradient for ``src`` equals torch's."""
    def fn(lib):
        return lambda x, s: lib.as_strided_scatter(x, s, (2, 2), (1, 2), 1)

    rng = np.random.default_rng(0)
    xs, ss = rng.standard_normal((3, 4)), rng.standard_normal((2, 2))
    g = [lib.tensor(v, requires_grad=True) for lib in LIBS for v in (xs, ss)]
    assert glassgrad.autograd.gradcheck(fn(glassgrad), (g[2], g[3]))
    assert glassgrad.autograd.gradgradcheck(fn(glassgrad), (g[2], g[3]))
    assert not torch.autograd.gradcheck(fn(torch), (g[0], g[1]), raise_exception=False)
    cot = rng.standard_normal((3, 4))
    (gs_t,) = torch.autograd.grad(fn(torch)(g[0], g[1]), g[1], torch.tensor(cot))
    (gs_g,) = glassgrad.autograd.grad(fn(glassgrad)(g[2], g[3]), g[3], glassgrad.tensor(cot))
    np.testing.assert_allclose(gs_g.numpy(), gs_t.numpy())


def test_storage_types():
    assert glassgrad.UntypedStorage(4).nbytes() == torch.UntypedStorage(4).nbytes() == 4
    assert glassgrad.TypedStorage(3).size() == 3
    assert repr(glassgrad.channels_last) == "glassgrad.channels_last"
    assert isinstance(glassgrad.channels_last, glassgrad.memory_format)


def _shared(lib, tmp_path):
    x = lib.arange(12.0).reshape(3, 4) * 2  # (not a view: see the test below)
    before = x.is_shared()
    same = x.share_memory_() is x
    np.arange(4, dtype=np.float32).tofile(tmp_path / lib.__name__)
    mapped = lib.from_file(str(tmp_path / lib.__name__), shared=False, size=2)
    return (before, same, x.is_shared(), x.stride(), x.tolist(), mapped.is_shared(),
            lib.ones(2).is_distributed())


def test_share_memory_matches_torch(tmp_path):
    theirs, ours = (_shared(lib, tmp_path) for lib in LIBS)
    assert ours == theirs


def test_share_memory_is_seen_by_a_forked_process():
    import os

    if not hasattr(os, "fork"):
        pytest.skip("needs fork")
    x = glassgrad.zeros(3).share_memory_()
    pid = os.fork()
    if pid == 0:  # the child writes; the parent must see it
        x[1] = 42.0
        os._exit(0)
    os.waitpid(pid, 0)
    assert x.tolist() == [0.0, 42.0, 0.0]


def test_share_memory_refuses_a_storage_others_see():
    v = glassgrad.ones(4)
    w = v[1:]
    with pytest.raises(RuntimeError, match="share_memory_: glassgrad cannot move"):
        v.share_memory_()
    assert w.tolist() == [1.0, 1.0, 1.0]
