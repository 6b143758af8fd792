"""2-rank job of tests/test_distributed_collectives.py: every collective against NumPy.

Run as ``mpiexec -n 2 python collectives.py OUT_DIR``. Every rank can build every rank's input
(seeded by rank), so each result is checked against the NumPy reduction of all inputs on both
ranks. Each check's outcome ("ok" or the failure) and each refused call's (type, message) go to
OUT_DIR/rank{R}.json, which the pytest side asserts.
"""

import datetime
import json
import sys
import traceback

import ml_dtypes
import numpy as np

import glassgrad as torch
import glassgrad.distributed as dist

NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32,
      "float64": np.float64, "int32": np.int32, "int64": np.int64, "int8": np.int8,
      "uint8": np.uint8, "bool": np.bool_, "complex64": np.complex64}
results, errors, values = {}, {}, {}


def data(rank, shape, dtype, salt=0):
    rng = np.random.default_rng(1000 * salt + rank)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in ("int32", "int64", "int8", "uint8"):
        return rng.integers(1, 5, size=shape).astype(NP[dtype])
    if dtype == "complex64":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    return (rng.standard_normal(shape) + 2.0).astype(NP[dtype])


def tensor(a):
    return torch.from_numpy(np.array(a, copy=True))


def same(got, want, dtype):
    got = np.asarray(got._array if hasattr(got, "_array") else got)
    assert got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)
    assert got.shape == np.asarray(want).shape, (got.shape, np.asarray(want).shape)
    if dtype in ("float16", "bfloat16"):
        np.testing.assert_allclose(got.astype(np.float64), np.asarray(want).astype(np.float64),
                                   rtol=1e-2)
    elif dtype in ("float32", "complex64"):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)


def check(name):
    def wrap(fn):
        try:
            fn()
            results[name] = "ok"
        except Exception:  # noqa: BLE001: recorded for the pytest side
            results[name] = traceback.format_exc()
        return fn
    return wrap


def refused(name, fn):
    try:
        fn()
        errors[name] = None
    except Exception as e:  # noqa: BLE001
        errors[name] = [type(e).__name__, str(e)]


def reference(op, arrays, dtype):
    wide = [a.astype(np.float32) if dtype in ("float16", "bfloat16") else a for a in arrays]
    if op == "SUM":
        out = np.logical_or.reduce(wide) if dtype == "bool" else np.sum(wide, axis=0)
    elif op == "AVG":
        out = np.sum(wide, axis=0) / len(wide)
    elif op == "PRODUCT":
        out = np.logical_and.reduce(wide) if dtype == "bool" else np.prod(wide, axis=0)
    elif op == "MIN":
        out = np.min(wide, axis=0)
    elif op == "MAX":
        out = np.max(wide, axis=0)
    else:
        table = {"BAND": np.bitwise_and, "BOR": np.bitwise_or, "BXOR": np.bitwise_xor}
        out = table[op].reduce(wide)
    return np.asarray(out).astype(NP[dtype])


dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
R, W = dist.get_rank(), dist.get_world_size()
ALL = list(range(W))
FLOATS = ["float16", "bfloat16", "float32", "float64"]

for dtype in FLOATS + ["int32", "int64", "int8", "uint8", "bool", "complex64"]:
    ops = ["SUM", "AVG", "PRODUCT", "MIN", "MAX"]
    if dtype.startswith(("int", "uint")) or dtype == "bool":
        ops = ["SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]
    if dtype == "complex64":
        ops = ["SUM", "AVG"]
    for op in ops:
        @check(f"all_reduce_{op}_{dtype}")
        def _():
            t = tensor(data(R, (3, 4), dtype))
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
            same(t, reference(op, [data(r, (3, 4), dtype) for r in ALL], dtype), dtype)


@check("all_reduce_async_work")
def _():
    t = tensor(data(R, (5,), "float32"))
    work = dist.all_reduce(t, async_op=True)
    assert isinstance(work, dist.Work)
    assert work.wait() is True and work.is_completed() and work.is_success()
    want = reference("SUM", [data(r, (5,), "float32") for r in ALL], "float32")
    same(t, want, "float32")
    same(work.result()[0], want, "float32")
    u = tensor(data(R, (5,), "float32"))
    fut = dist.all_reduce(u, async_op=True).get_future()
    same(fut.wait()[0], want, "float32")
    v = tensor(data(R, (5,), "float32"))
    w2 = dist.all_reduce(v, async_op=True)
    while not w2.is_completed():
        pass
    same(v, want, "float32")


@check("all_reduce_in_place_views")
def _():
    base = tensor(data(R, (4, 6), "float64"))
    view = base[1:3, ::2]                      # a strided view: the result goes into base
    dist.all_reduce(view)
    want = data(R, (4, 6), "float64")
    want[1:3, ::2] = reference("SUM", [data(r, (4, 6), "float64")[1:3, ::2] for r in ALL],
                               "float64")
    same(base, want, "float64")
    t = tensor(data(R, (3, 5), "float32")).t()  # non-contiguous
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    same(t, reference("MAX", [data(r, (3, 5), "float32").T for r in ALL], "float32"), "float32")
    s = tensor(np.float64(R + 1.5))            # 0-d
    dist.all_reduce(s)
    same(s, np.float64(sum(r + 1.5 for r in ALL)), "float64")
    e = torch.empty(0, 3)
    dist.all_reduce(e)
    assert tuple(e.shape) == (0, 3)
    p = torch.nn.Parameter(tensor(data(R, (3,), "float32")))
    dist.all_reduce(p)                          # a leaf requiring grad: allowed, as in torch
    assert p.requires_grad
    same(p.detach(), reference("SUM", [data(r, (3,), "float32") for r in ALL], "float32"),
         "float32")


for dtype in FLOATS + ["int64", "bool"]:
    for src in ALL:
        @check(f"broadcast_{dtype}_src{src}")
        def _():
            t = tensor(data(R, (2, 3), dtype))
            assert dist.broadcast(t, src=src) is None
            same(t, data(src, (2, 3), dtype), dtype)
            u = tensor(data(R, (3, 2), dtype)).t()
            dist.broadcast(u, group_src=src, async_op=True).wait()
            same(u, data(src, (3, 2), dtype).T, dtype)


for op in ["SUM", "MAX", "AVG"]:
    @check(f"reduce_{op}_dst1")
    def _():
        t = tensor(data(R, (4,), "float64"))
        dist.reduce(t, dst=1, op=getattr(dist.ReduceOp, op))
        want = reference(op, [data(r, (4,), "float64") for r in ALL], "float64")
        same(t, want if R == 1 else data(R, (4,), "float64"), "float64")


for dtype in FLOATS + ["int32", "bool"]:
    @check(f"all_gather_{dtype}")
    def _():
        outs = [torch.empty(2, 3, dtype=getattr(torch, dtype)) for _ in ALL]
        dist.all_gather(outs, tensor(data(R, (2, 3), dtype)))
        for r in ALL:
            same(outs[r], data(r, (2, 3), dtype), dtype)

    @check(f"all_gather_into_tensor_{dtype}")
    def _():
        flat = torch.empty(W * 2, 3, dtype=getattr(torch, dtype))
        dist.all_gather_into_tensor(flat, tensor(data(R, (2, 3), dtype)))
        same(flat, np.concatenate([data(r, (2, 3), dtype) for r in ALL]), dtype)
        stacked = torch.empty(W, 2, 3, dtype=getattr(torch, dtype))
        dist.all_gather_into_tensor(stacked, tensor(data(R, (2, 3), dtype)), async_op=True).wait()
        same(stacked, np.stack([data(r, (2, 3), dtype) for r in ALL]), dtype)


for dtype in FLOATS + ["int64"]:
    for op in (["SUM", "AVG", "MAX"] if dtype in FLOATS else ["SUM", "MIN"]):
        @check(f"reduce_scatter_{op}_{dtype}")
        def _():
            ins = [tensor(data(R, (3,), dtype, salt=j)) for j in ALL]
            out = torch.empty(3, dtype=getattr(torch, dtype))
            dist.reduce_scatter(out, ins, op=getattr(dist.ReduceOp, op))
            same(out, reference(op, [data(r, (3,), dtype, salt=R) for r in ALL], dtype), dtype)

        @check(f"reduce_scatter_tensor_{op}_{dtype}")
        def _():
            big = tensor(data(R, (W * 2, 3), dtype))
            out = torch.empty(2, 3, dtype=getattr(torch, dtype))
            dist.reduce_scatter_tensor(out, big, op=getattr(dist.ReduceOp, op))
            want = reference(op, [data(r, (W * 2, 3), dtype) for r in ALL], dtype)
            same(out, want[2 * R:2 * R + 2], dtype)


@check("gather_dst1")
def _():
    t = tensor(data(R, (2, 2), "float32"))
    outs = [torch.empty(2, 2) for _ in ALL] if R == 1 else None
    dist.gather(t, outs, dst=1)
    if R == 1:
        for r in ALL:
            same(outs[r], data(r, (2, 2), "float32"), "float32")


@check("scatter_src1")
def _():
    t = torch.empty(3, dtype=torch.bfloat16)
    ins = [tensor(data(1, (3,), "bfloat16", salt=j)) for j in ALL] if R == 1 else None
    dist.scatter(t, ins, src=1)
    same(t, data(1, (3,), "bfloat16", salt=R), "bfloat16")


@check("all_to_all")
def _():
    ins = [tensor(data(R, (j + 1, 2), "float64", salt=7)) for j in ALL]   # sizes differ by peer
    outs = [torch.empty(R + 1, 2, dtype=torch.float64) for _ in ALL]
    dist.all_to_all(outs, ins)
    for j in ALL:
        same(outs[j], data(j, (R + 1, 2), "float64", salt=7), "float64")


@check("all_to_all_single")
def _():
    x = tensor(data(R, (W * 2, 3), "int64"))
    out = torch.empty(W * 2, 3, dtype=torch.int64)
    dist.all_to_all_single(out, x)
    same(out, np.concatenate([data(j, (W * 2, 3), "int64")[2 * R:2 * R + 2] for j in ALL]),
         "int64")
    # uneven: rank r sends r + j + 1 rows to rank j
    ins_split = [R + j + 1 for j in ALL]
    out_split = [j + R + 1 for j in ALL]
    x = tensor(data(R, (sum(ins_split), 2), "float32", salt=3))
    out = torch.empty(sum(out_split), 2)
    dist.all_to_all_single(out, x, out_split, ins_split)
    pieces = []
    for j in ALL:
        mine = [j + k + 1 for k in ALL]
        start = sum(mine[:R])
        pieces.append(data(j, (sum(mine), 2), "float32", salt=3)[start:start + mine[R]])
    same(out, np.concatenate(pieces), "float32")


@check("send_recv")
def _():
    peer = 1 - R
    t = tensor(data(R, (4,), "float16"))
    got = torch.empty(4, dtype=torch.float16)
    if R == 0:
        dist.send(t, dst=peer)
        assert dist.recv(got, src=peer) == peer
    else:
        assert dist.recv(got) == peer       # any source: the sender's rank comes back
        dist.send(t, dst=peer)
    same(got, data(peer, (4,), "float16"), "float16")
    a, b = torch.empty(3, dtype=torch.int64), torch.empty(3, dtype=torch.int64)
    works = [dist.isend(tensor(data(R, (3,), "int64")), dst=peer, tag=5),
             dist.irecv(a, src=peer, tag=5)]
    for w in works:
        w.wait()
    same(a, data(peer, (3,), "int64"), "int64")
    ops = [dist.P2POp(dist.isend, tensor(data(R, (3,), "int64", salt=2)), peer),
           dist.P2POp(dist.irecv, b, peer)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    same(b, data(peer, (3,), "int64", salt=2), "int64")


@check("barrier")
def _():
    assert dist.barrier() is None
    assert dist.barrier(async_op=True).wait()


@check("new_group")
def _():
    solo = dist.new_group([1])
    if R == 1:
        assert dist.get_rank(solo) == 0 and dist.get_world_size(solo) == 1
        t = tensor(data(R, (2,), "float32"))
        dist.all_reduce(t, group=solo)
        same(t, data(R, (2,), "float32"), "float32")
        assert dist.get_process_group_ranks(solo) == [1]
        assert dist.get_global_rank(solo, 0) == 1 and dist.get_group_rank(solo, 1) == 0
    else:
        assert solo is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(solo) == -1
    rev = dist.new_group(list(reversed(ALL)), sort_ranks=False)
    assert dist.get_rank(rev) == W - 1 - R
    t = tensor(data(R, (2,), "float64"))
    dist.broadcast(t, src=W - 1, group=rev)    # src is a global rank
    same(t, data(W - 1, (2,), "float64"), "float64")
    outs = [torch.empty(2, dtype=torch.float64) for _ in ALL]
    dist.all_gather(outs, tensor(data(R, (2,), "float64")), group=rev)
    for i, g in enumerate(reversed(ALL)):
        same(outs[i], data(g, (2,), "float64"), "float64")
    dist.destroy_process_group(rev)


@check("new_subgroups")
def _():
    before = dist.get_pg_count()
    mine, every = dist.new_subgroups(1)
    assert len(every) == W and dist.get_pg_count() == before + W
    assert dist.get_process_group_ranks(mine) == [R] and dist.get_rank(mine) == 0
    t = tensor(data(R, (3,), "float32"))
    dist.all_reduce(t, group=mine)
    same(t, data(R, (3,), "float32"), "float32")
    whole, _ = dist.new_subgroups(W)
    t = tensor(data(R, (3,), "float32"))
    dist.all_reduce(t, group=whole)
    same(t, reference("SUM", [data(r, (3,), "float32") for r in ALL], "float32"), "float32")


@check("nn_functional_gradients")
def _():
    import glassgrad.distributed.nn.functional as F

    def leaf(a):
        return tensor(a).requires_grad_()

    c = [data(r, (3,), "float64", salt=9) for r in ALL]
    for op, scale in (("SUM", 1.0), ("AVG", 1.0 / W)):
        x = leaf(data(R, (3,), "float64"))
        y = F.all_reduce(x * 2, op=getattr(dist.ReduceOp, op))
        same(y.detach(), reference(op, [2 * data(r, (3,), "float64") for r in ALL], "float64"),
             "float64")
        (y * tensor(c[R])).sum().backward()
        same(x.grad, 2 * scale * np.sum(c, axis=0), "float64")
        same(x.detach(), data(R, (3,), "float64"), "float64")   # the input is left alone
    x = leaf(data(R, (3,), "float64"))
    y = F.broadcast(x, src=1)
    same(y.detach(), data(1, (3,), "float64"), "float64")
    (y * tensor(c[R])).sum().backward()
    same(x.grad, np.sum(c, axis=0) if R == 1 else np.zeros(3), "float64")
    x = leaf(data(R, (3,), "float64"))
    ys = F.all_gather(x)
    cc = [[data(r, (3,), "float64", salt=10 + j) for j in ALL] for r in ALL]
    sum(((y * tensor(cc[R][j])).sum() for j, y in enumerate(ys))).backward()
    same(x.grad, np.sum([cc[r][R] for r in ALL], axis=0), "float64")
    xs = [leaf(data(R, (3,), "float64", salt=20 + j)) for j in ALL]
    out = torch.empty(3, dtype=torch.float64)
    y = F.reduce_scatter(out, xs)
    same(out, reference("SUM", [data(r, (3,), "float64", salt=20 + R) for r in ALL], "float64"),
         "float64")
    (y * tensor(c[R])).sum().backward()
    for j in ALL:
        same(xs[j].grad, c[j], "float64")
    x = leaf(data(R, (3,), "float64"))
    (F.reduce(x, dst=0) * tensor(c[R])).sum().backward()
    same(x.grad, c[0], "float64")
    x = leaf(data(R, (3,), "float64"))
    y = F.all_reduce(x, op=dist.ReduceOp.MAX)
    try:
        y.sum().backward()
    except NotImplementedError as e:
        assert "ReduceOp.MAX is not implemented" in str(e), e
    else:
        raise AssertionError("the MAX backward gave numbers")


@check("objects")
def _():
    obj = {"rank": R, "name": f"r{R}", "t": tensor(data(R, (2,), "float32")), "l": [1, (2, 3.5)]}
    got = [None] * W
    dist.all_gather_object(got, obj)
    for r in ALL:
        assert got[r]["rank"] == r and got[r]["name"] == f"r{r}" and got[r]["l"] == [1, (2, 3.5)]
        same(got[r]["t"], data(r, (2,), "float32"), "float32")
    lst = [R, {"a": R * 10}, None] if R == 1 else [None, None, None]
    dist.broadcast_object_list(lst, src=1)
    assert lst == [1, {"a": 10}, None], lst
    gl = [None] * W if R == 0 else None
    dist.gather_object(("x", R), gl, dst=0)
    if R == 0:
        assert gl == [("x", r) for r in ALL], gl
    out = [None]
    dist.scatter_object_list(out, [{"to": j} for j in ALL] if R == 0 else None, src=0)
    assert out == [{"to": R}], out
    if R == 0:
        dist.send_object_list(["hello", 3], dst=1)
    else:
        box = [None, None]
        assert dist.recv_object_list(box) == 0 and box == ["hello", 3], box


@check("distributed_sampler_splits_an_epoch")
def _():
    from glassgrad.utils.data import DistributedSampler

    for n, drop_last in ((23, False), (23, True), (24, False)):
        sampler = DistributedSampler(range(n), shuffle=True, seed=4, drop_last=drop_last)
        assert (sampler.rank, sampler.num_replicas) == (R, W)   # from the default group
        for epoch in (0, 1):
            sampler.set_epoch(epoch)
            shares = [None] * W
            dist.all_gather_object(shares, list(sampler))
            assert len({len(s) for s in shares}) == 1
            every = sorted(i for s in shares for i in s)
            if drop_last:
                assert len(set(every)) == len(every) == (n // W) * W
            else:
                assert set(every) == set(range(n)) and len(every) == -(-n // W) * W


@check("object_refused")
def _():
    got = [None] * W
    try:
        dist.all_gather_object(got, (lambda: 0) if R == 1 else 5)
    except TypeError:
        assert R == 1
    except RuntimeError as e:
        assert R == 0 and "rank 1" in str(e), e
    else:
        raise AssertionError("an object glassgrad.save refuses was sent")


@check("object_list_short_on_one_rank")
def _():
    # torch fills the list after the exchange, so only the short list's rank fails (IndexError)
    # and the other one completes instead of waiting for it
    got = [None] * (W - 1 if R == 1 else W)
    try:
        dist.all_gather_object(got, R)
    except IndexError:
        assert R == 1
    else:
        assert R != 1 and got == ALL, got
    gl = [None] * (W - 1) if R == 0 else None
    try:
        dist.gather_object(R, gl, dst=0)
    except IndexError:
        assert R == 0
    else:
        assert R != 0
    dist.barrier()


# half AVG as torch's backends hold it (the sum rounded to the half type, then divided): the
# pytest side compares with torch's arithmetic
for dtype in ("float16", "bfloat16"):
    t = torch.tensor([60000.0 + 16 * R, 1.5 + R, -0.3, 3e38 if dtype == "bfloat16" else 7.0],
                     dtype=getattr(torch, dtype))
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    values[f"avg_{dtype}"] = [float(v) for v in t.tolist()]

# refusals: the pytest side compares them with torch's
refused("complex_max", lambda: dist.all_reduce(torch.ones(2, dtype=torch.complex64),
                                               op=dist.ReduceOp.MAX))
refused("complex_product", lambda: dist.all_reduce(torch.ones(2, dtype=torch.complex64),
                                                   op=dist.ReduceOp.PRODUCT))
refused("float_band", lambda: dist.all_reduce(torch.ones(2), op=dist.ReduceOp.BAND))
refused("int_avg", lambda: dist.all_reduce(torch.ones(2, dtype=torch.int64),
                                           op=dist.ReduceOp.AVG))
refused("bool_avg", lambda: dist.all_reduce(torch.ones(2, dtype=torch.bool),
                                            op=dist.ReduceOp.AVG))
refused("not_a_tensor", lambda: dist.all_reduce([torch.ones(2)]))
refused("send_to_self", lambda: dist.send(torch.ones(2), dst=R))
refused("gather_no_list", lambda: dist.gather(torch.ones(2), None, dst=R))
refused("scatter_no_list", lambda: dist.scatter(torch.ones(2), None, src=R))
refused("src_and_group_src", lambda: dist.broadcast(torch.ones(2), src=0, group_src=0))
refused("init_twice", lambda: dist.init_process_group("gloo"))
refused("all_gather_size", lambda: dist.all_gather([torch.ones(3) for _ in ALL], torch.ones(4)))
refused("reduce_scatter_list",
        lambda: dist.reduce_scatter(torch.ones(2), [torch.ones(2)] * (W + 1)))
refused("bad_root", lambda: dist.broadcast(torch.ones(2), src=W))
refused("big_group", lambda: dist.new_group(list(range(W + 1))))
refused("all_gather_dtypes", lambda: dist.all_gather([torch.ones(2, dtype=torch.float64)
                                                    for _ in ALL], torch.ones(2)))
refused("gather_dtypes", lambda: dist.gather(torch.ones(2), [torch.ones(2, dtype=torch.int64)
                                                             for _ in ALL], dst=R))
refused("scatter_dtypes", lambda: dist.scatter(torch.ones(2, dtype=torch.int32),
                                               [torch.ones(2) for _ in ALL], src=R))
refused("reduce_scatter_dtypes", lambda: dist.reduce_scatter(
    torch.ones(2), [torch.ones(2, dtype=torch.float16) for _ in ALL]))
refused("all_to_all_dtypes", lambda: dist.all_to_all(
    [torch.ones(2) for _ in ALL], [torch.ones(2, dtype=torch.float64) for _ in ALL]))
refused("all_to_all_single_dtypes", lambda: dist.all_to_all_single(
    torch.ones(2 * W, dtype=torch.bfloat16), torch.ones(2 * W)))
refused("object_list_short", lambda: dist.all_gather_object([None] * (W - 1), R))
dist.barrier()
assert dist.get_backend() == "gloo"
dist.destroy_process_group()
results["destroyed"] = "ok" if not dist.is_initialized() else "still initialized"
with open(f"{sys.argv[1]}/rank{R}.json", "w") as f:
    json.dump({"results": results, "errors": errors, "values": values, "world": W}, f)
