"""glassgrad.utils.data against torch.utils.data: datasets, samplers, collate, DataLoader."""

from __future__ import annotations

import collections

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import glassgrad
import glassgrad.utils.data as gdata

from .oracle import to_np

Point = collections.namedtuple("Point", "x y")


def assert_same(ours, theirs, path="batch"):
    """Same nested structure (container types, keys), same tensor values and dtypes."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, glassgrad.Tensor), f"{path}: {type(ours)} vs a tensor"
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], path
        assert tuple(ours.shape) == tuple(theirs.shape), path
        np.testing.assert_array_equal(to_np(ours), to_np(theirs), err_msg=path)
        return
    assert type(ours) is type(theirs), f"{path}: {type(ours)} vs {type(theirs)}"
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs), path
        for k in theirs:
            assert_same(ours[k], theirs[k], f"{path}[{k!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{path}[{i}]")
    else:
        assert ours == theirs, path


def both(value):
    """(glassgrad, torch) versions of a sample: NumPy arrays marked ``T`` become tensors."""
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "T":
        return glassgrad.from_numpy(value[1].copy()), torch.from_numpy(value[1].copy())
    if isinstance(value, Point):
        pairs = [both(v) for v in value]
        return Point(*(p[0] for p in pairs)), Point(*(p[1] for p in pairs))
    if isinstance(value, (list, tuple)):
        pairs = [both(v) for v in value]
        return type(value)(p[0] for p in pairs), type(value)(p[1] for p in pairs)
    if isinstance(value, dict):
        pairs = {k: both(v) for k, v in value.items()}
        return {k: p[0] for k, p in pairs.items()}, {k: p[1] for k, p in pairs.items()}
    return value, value


def T(arr):
    return ("T", np.asarray(arr))


def _samples(kind, rng):
    f32 = rng.standard_normal((3,)).astype(np.float32)
    table = {
        "tensors": [T(rng.standard_normal((2, 3)).astype(np.float32)) for _ in range(3)],
        "0d_tensors": [T(np.float64(i)) for i in range(4)],
        "int_tensors": [T(np.arange(i, i + 2)) for i in range(3)],
        "tuple": [(T(f32 * i), i) for i in range(3)],
        "floats": [1.5, 2.0, -3.25],
        "ints": [1, 2, 3],
        "bools": [True, False],
        "strings": ["a", "bc"],
        "bytes": [b"a", b"b"],
        "numpy": [f32 * i for i in range(3)],
        "np_scalars_f32": [np.float32(i) for i in range(3)],
        "np_scalars_f64": [np.float64(i) for i in range(3)],
        "np_scalars_i32": [np.int32(i) for i in range(3)],
        "np_bool": [np.bool_(True), np.bool_(False)],
        "dicts": [{"x": T(f32 + i), "y": i, "name": str(i)} for i in range(3)],
        "lists": [[i, float(i), [T(f32), "s"]] for i in range(2)],
        "namedtuple": [Point(T(f32), i) for i in range(2)],
        "nested": [{"a": (1, {"b": [2.0, T(f32)]})}, {"a": (3, {"b": [4.0, T(f32)]})}],
    }
    return table[kind]


COLLATE_KINDS = [
    "tensors", "0d_tensors", "int_tensors", "tuple", "floats", "ints", "bools", "strings", "bytes",
    "numpy", "np_scalars_f32", "np_scalars_f64", "np_scalars_i32", "np_bool", "dicts", "lists",
    "namedtuple", "nested",
]


@pytest.mark.parametrize("kind", COLLATE_KINDS)
def test_default_collate_matches_torch(kind, rng):
    ours, theirs = both(_samples(kind, rng))
    assert_same(gdata.default_collate(list(ours)), tdata.default_collate(list(theirs)))


@pytest.mark.parametrize("kind", ["tensors", "tuple", "numpy", "dicts", "lists", "namedtuple",
                                  "np_scalars_f32", "strings"])
def test_default_convert_matches_torch(kind, rng):
    ours, theirs = both(_samples(kind, rng))
    for a, b in zip(ours, theirs):
        assert_same(gdata.default_convert(a), tdata.default_convert(b))


@pytest.mark.parametrize("batch", [[None, None], [np.array(["a"]), np.array(["b"])], [[1, 2], [1]],
                                   [object()]])
def test_default_collate_errors_match_torch(batch):
    with pytest.raises(Exception) as theirs:
        tdata.default_collate(batch)
    with pytest.raises(theirs.type) as ours:
        gdata.default_collate(batch)
    assert str(theirs.value) in str(ours.value)


def test_collate_stacks_with_autograd():
    x = glassgrad.randn(3, requires_grad=True)
    out = gdata.default_collate([x * 2, x * 3])
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 5.0))
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        gdata.default_collate([glassgrad.zeros(3), glassgrad.zeros(2)])


def _pair(n=10, d=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = rng.integers(0, 5, n)
    gds = gdata.TensorDataset(glassgrad.from_numpy(x.copy()), glassgrad.from_numpy(y.copy()))
    tds = tdata.TensorDataset(torch.from_numpy(x.copy()), torch.from_numpy(y.copy()))
    return gds, tds


def test_tensor_dataset_matches_torch():
    gds, tds = _pair()
    assert len(gds) == len(tds)
    for i in (0, 3, -1):
        assert_same(gds[i], tds[i])
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        tdata.TensorDataset(torch.zeros(3), torch.zeros(4))
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        gdata.TensorDataset(glassgrad.zeros(3), glassgrad.zeros(4))
    with pytest.raises(IndexError):
        gds[10]


@pytest.mark.parametrize("kwargs", [
    {"batch_size": 4}, {"batch_size": 4, "drop_last": True}, {"batch_size": 1},
    {"batch_size": None}, {"batch_size": 3, "num_workers": 2}, {"batch_size": 20},
    {"batch_size": 3, "collate_fn": lambda b: len(b)},
    {"batch_sampler": [[0, 1], [5, 2, 9], [3]]},
    {"batch_size": 2, "sampler": [9, 8, 1, 0, 4]},
])
def test_dataloader_sequential_matches_torch(kwargs):
    gds, tds = _pair()
    gl, tl = gdata.DataLoader(gds, **kwargs), tdata.DataLoader(tds, **kwargs)
    assert len(gl) == len(tl)
    for _ in range(2):  # re-iterable
        ours, theirs = list(gl), list(tl)
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b)


def test_dataloader_over_dicts_and_subsets_matches_torch():
    class Dicts(gdata.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"x": np.full(2, i, dtype=np.float32), "i": i, "name": f"s{i}"}

    class TDicts(tdata.Dataset):
        __len__, __getitem__ = Dicts.__len__, Dicts.__getitem__

    ours = gdata.DataLoader(Dicts(), batch_size=2)
    for a, b in zip(ours, tdata.DataLoader(TDicts(), batch_size=2)):
        assert_same(a, b)
    gds, tds = _pair()
    idx = [7, 2, 2, 9]
    ours = list(gdata.DataLoader(gdata.Subset(gds, idx), batch_size=3))
    theirs = list(tdata.DataLoader(tdata.Subset(tds, idx), batch_size=3))
    for a, b in zip(ours, theirs):
        assert_same(a, b)


class _Stream(gdata.IterableDataset):
    def __init__(self, n, length=None):
        self.n, self.length = n, length

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n if self.length is None else self.length


class _TStream(tdata.IterableDataset):
    def __init__(self, n, length=None):
        self.n, self.length = n, length

    __iter__, __len__ = _Stream.__iter__, _Stream.__len__


@pytest.mark.parametrize("kwargs", [{"batch_size": 3}, {"batch_size": 3, "drop_last": True},
                                    {"batch_size": None}, {"batch_size": 4, "num_workers": 1}])
def test_iterable_dataset_matches_torch(kwargs):
    gl, tl = gdata.DataLoader(_Stream(10), **kwargs), tdata.DataLoader(_TStream(10), **kwargs)
    assert len(gl) == len(tl)
    for a, b in zip(list(gl), list(tl)):
        assert_same(a, b)
    chained = list(gdata.DataLoader(_Stream(2) + _Stream(3), batch_size=None))
    assert [int(v) for v in chained] == list(tdata.ChainDataset([_TStream(2), _TStream(3)]))


def test_iterable_length_warning():
    loader = gdata.DataLoader(_Stream(5, length=2), batch_size=None)
    len(loader)
    with pytest.warns(UserWarning, match="was reported to be 2"):
        list(loader)


def _errors(make):
    """Run ``make(lib)`` on torch and glassgrad; both must raise the same type and message."""
    with pytest.raises(Exception) as theirs:
        make(torch)
    with pytest.raises(theirs.type) as ours:
        make(glassgrad)
    assert str(ours.value).startswith(str(theirs.value).split("\n")[0].split(", but got")[0])


def _data(lib):
    return lib.utils.data


ARG_ERRORS = {
    "num_workers": lambda lib: _data(lib).DataLoader(range(3), num_workers=-1),
    "timeout": lambda lib: _data(lib).DataLoader(range(3), timeout=-1),
    "prefetch": lambda lib: _data(lib).DataLoader(range(3), prefetch_factor=2),
    "persistent": lambda lib: _data(lib).DataLoader(range(3), persistent_workers=True),
    "sampler_shuffle": lambda lib: _data(lib).DataLoader(range(3), sampler=[0], shuffle=True),
    "batch_sampler": lambda lib: _data(lib).DataLoader(range(3), batch_sampler=[[0]], batch_size=2),
    "none_drop_last": lambda lib: _data(lib).DataLoader(range(3), batch_size=None, drop_last=True),
    "set_after_init": lambda lib: setattr(_data(lib).DataLoader(range(3)), "batch_size", 2),
    "iterable_shuffle": lambda lib: _data(lib).DataLoader(
        (_Stream if lib is glassgrad else _TStream)(3), shuffle=True),
    "batch_size": lambda lib: _data(lib).BatchSampler(range(3), 0, False),
    "drop_last": lambda lib: _data(lib).BatchSampler(range(3), 2, 1),
    "replacement": lambda lib: _data(lib).RandomSampler(range(3), replacement=1),
    "num_samples": lambda lib: _data(lib).RandomSampler(range(3), num_samples=0),
    "weights_num": lambda lib: _data(lib).WeightedRandomSampler([1.0, 2.0], 0),
    "weights_2d": lambda lib: _data(lib).WeightedRandomSampler([[1.0, 2.0]], 2),
    "concat_empty": lambda lib: _data(lib).ConcatDataset([]),
    "concat_index": lambda lib: _data(lib).ConcatDataset([range(2), range(3)])[-6],
    "split_sum": lambda lib: _data(lib).random_split(range(5), [2, 2]),
    "split_frac": lambda lib: _data(lib).random_split(range(5), [1.5, -0.5]),
}


@pytest.mark.parametrize("case", sorted(ARG_ERRORS))
def test_argument_errors_match_torch(case):
    _errors(ARG_ERRORS[case])


def _ys(loader):
    return [y.tolist() for _, y in loader]


def test_shuffle_reproducible_with_generator_and_new_each_epoch():
    gds, _ = _pair(n=50)
    make = lambda seed: gdata.DataLoader(
        gds, batch_size=8, shuffle=True, generator=glassgrad.Generator().manual_seed(seed))
    a, b = make(0), make(0)
    e1, e2 = _ys(a), _ys(a)
    assert e1 == _ys(b) and e2 == _ys(b)
    assert e1 != e2
    assert _ys(make(1)) != e1
    loader = gdata.DataLoader(gdata.TensorDataset(glassgrad.arange(50)), batch_size=8, shuffle=True)
    flat = [i for batch in loader for i in batch[0].tolist()]
    assert sorted(flat) == list(range(50)) and flat != list(range(50))
    glassgrad.manual_seed(3)
    g1 = _ys(gdata.DataLoader(gds, batch_size=8, shuffle=True))
    glassgrad.manual_seed(3)
    assert _ys(gdata.DataLoader(gds, batch_size=8, shuffle=True)) == g1


@pytest.mark.parametrize("drop_last", [False, True])
def test_fast_path_gathers_once_and_equals_generic_path(monkeypatch, drop_last):
    gds, _tds = _pair(n=23)
    train, _ = gdata.random_split(gds, [0.75, 0.25], generator=glassgrad.Generator().manual_seed(0))

    def generic(batch):
        return gdata.default_collate(batch)

    calls = []
    original = gdata.TensorDataset.__getitem__

    def counting_getitem(self, i):
        calls.append(i)
        return original(self, i)

    for ds in (gds, train):
        kw = {"batch_size": 5, "shuffle": True, "drop_last": drop_last}
        slow = list(gdata.DataLoader(ds, collate_fn=generic,
                                     generator=glassgrad.Generator().manual_seed(7), **kw))
        monkeypatch.setattr(gdata.TensorDataset, "__getitem__", counting_getitem)
        fast = list(gdata.DataLoader(ds, generator=glassgrad.Generator().manual_seed(7), **kw))
        monkeypatch.undo()
        assert calls == []  # one fancy index per tensor, no per-sample __getitem__
        assert len(fast) == len(slow) == (len(ds) // 5 if drop_last else -(-len(ds) // 5))
        for (fx, fy), (sx, sy) in zip(fast, slow):
            np.testing.assert_array_equal(fx.numpy(), sx.numpy())
            np.testing.assert_array_equal(fy.numpy(), sy.numpy())
    # an overriding subclass keeps its own __getitem__
    class Doubled(gdata.TensorDataset):
        def __getitem__(self, i):
            return tuple(t[i] * 2 for t in self.tensors)

    x, = next(iter(gdata.DataLoader(Doubled(glassgrad.arange(4)), batch_size=4)))
    assert x.tolist() == [0, 2, 4, 6]


def test_samplers_match_torch():
    for drop_last in (False, True):
        ours = gdata.BatchSampler(gdata.SequentialSampler(range(10)), 3, drop_last)
        theirs = tdata.BatchSampler(tdata.SequentialSampler(range(10)), 3, drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    g = glassgrad.Generator().manual_seed(0)
    rs = gdata.RandomSampler(range(7), generator=g)
    first, second = list(rs), list(rs)
    assert sorted(first) == list(range(7)) and first != second and len(rs) == 7
    g0 = glassgrad.Generator().manual_seed(0)
    assert first == list(gdata.RandomSampler(range(7), generator=g0))
    for kw in ({"replacement": True, "num_samples": 20}, {"num_samples": 17}):
        draws = list(gdata.RandomSampler(range(7), **kw))
        assert len(draws) == len(tdata.RandomSampler(range(7), **kw))
        assert all(0 <= d < 7 for d in draws)
    assert sorted(gdata.SubsetRandomSampler([3, 5, 9])) == [3, 5, 9]
    weights = [0.0, 1.0, 0.0, 3.0]
    draws = list(gdata.WeightedRandomSampler(weights, 50))
    assert len(draws) == 50 and set(draws) <= {1, 3}
    assert sorted(gdata.WeightedRandomSampler(weights, 2, replacement=False)) == [1, 3]
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size"):
        list(gdata.WeightedRandomSampler(weights, 5, replacement=False))


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.33, 0.33, 0.34], [0.5, 0.5], [10]])
def test_random_split_matches_torch(lengths):
    ours = gdata.random_split(range(10), lengths, generator=glassgrad.Generator().manual_seed(0))
    theirs = tdata.random_split(range(10), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    flat = [s[i] for s in ours for i in range(len(s))]
    assert sorted(flat) == list(range(10))
    again = gdata.random_split(range(10), lengths, generator=glassgrad.Generator().manual_seed(0))
    assert [list(s.indices) for s in again] == [list(s.indices) for s in ours]


def test_concat_subset_stack_match_torch():
    gds, tds = _pair(n=4)
    gcat, tcat = gds + gds, tds + tds
    assert isinstance(gcat, gdata.ConcatDataset) and gcat.cumulative_sizes == tcat.cumulative_sizes
    for i in (0, 3, 4, 7, -1, -8):
        assert_same(gcat[i], tcat[i])
    assert_same(gdata.Subset(gds, [2, 0])[1], tdata.Subset(tds, [2, 0])[1])
    gx, tx = glassgrad.arange(4), torch.arange(4)
    assert_same(gdata.StackDataset(gds, gx)[2], tdata.StackDataset(tds, tx)[2])
    assert_same(gdata.StackDataset(a=gds, b=gx)[1], tdata.StackDataset(a=tds, b=tx)[1])


def test_digits_split_shapes_and_values():
    from sklearn.datasets import load_digits as sk_load_digits

    sk = sk_load_digits()
    train, test = gdata.datasets.load_digits("train"), gdata.datasets.Digits(train=False)
    every = gdata.datasets.load_digits("all")
    assert (len(train), len(test), len(every)) == (1437, 360, 1797)
    for ds in (train, test, every):
        assert tuple(ds.data.shape[1:]) == (1, 8, 8) and ds.data.dtype == glassgrad.float32
        assert ds.targets.dtype == glassgrad.int64
        assert 0.0 <= ds.data.min().item() and ds.data.max().item() == 1.0
    np.testing.assert_array_equal(every.data.numpy()[:, 0], (sk.images / 16).astype(np.float32))
    np.testing.assert_array_equal(every.targets.numpy(), sk.target)
    # the split is a partition, stratified, and fixed
    from glassgrad.utils.data.datasets import _digits_raw, _digits_split

    tr, te = _digits_split(_digits_raw()[1])
    assert len(np.intersect1d(tr, te)) == 0 and len(np.union1d(tr, te)) == 1797
    np.testing.assert_array_equal(test.targets.numpy(), sk.target[te])
    share = np.bincount(test.targets.numpy(), minlength=10) / np.bincount(sk.target)
    assert np.all(np.abs(share - 360 / 1797) < 1 / 170)
    again = gdata.datasets.load_digits("test")
    np.testing.assert_array_equal(again.data.numpy(), test.data.numpy())
    images, _labels = gdata.datasets.load_digits("test", scale="tanh", return_X_y=True)
    np.testing.assert_allclose(images.numpy(), test.data.numpy() * 2 - 1, atol=1e-6)
    assert images.min().item() == -1.0
    x, y = next(iter(gdata.DataLoader(train, batch_size=64, shuffle=True)))
    assert tuple(x.shape) == (64, 1, 8, 8) and tuple(y.shape) == (64,)
    with pytest.raises(ValueError, match="split"):
        gdata.datasets.load_digits("valid")


def test_digits_without_sklearn_names_the_extra(monkeypatch):
    import sys

    from glassgrad.utils.data import datasets

    datasets._digits_raw.cache_clear()
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(ImportError, match=r"glassgrad\[examples\]"):
        datasets.load_digits()
    monkeypatch.undo()
    datasets._digits_raw.cache_clear()
    assert len(datasets.load_digits("test")) == 360


def _write_idx(path, arr, code, compress=False):
    import gzip

    header = bytes([0, 0, code, arr.ndim]) + np.asarray(arr.shape, ">u4").tobytes()
    big = {0x08: "u1", 0x09: "i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}[code]
    raw = header + arr.astype(big).tobytes()
    with open(path, "wb") as f:
        f.write(gzip.compress(raw) if compress else raw)


@pytest.mark.parametrize("compress", [False, True])
def test_idx_reader_and_mnist(tmp_path, compress):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (5, 4, 3), dtype=np.uint8)
    labels = rng.integers(0, 10, 5).astype(np.uint8)
    test_images = rng.integers(0, 256, (2, 4, 3), dtype=np.uint8)
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    gz = ".gz" if compress else ""
    _write_idx(raw / f"train-images-idx3-ubyte{gz}", images, 0x08, compress)
    _write_idx(raw / f"train-labels-idx1-ubyte{gz}", labels, 0x08, compress)
    _write_idx(raw / f"t10k-images-idx3-ubyte{gz}", test_images, 0x08, compress)
    _write_idx(raw / f"t10k-labels-idx1-ubyte{gz}", labels[:2], 0x08, compress)
    read = gdata.datasets.read_idx(raw / f"train-images-idx3-ubyte{gz}")
    assert read.dtype == glassgrad.uint8
    np.testing.assert_array_equal(read.numpy(), images)
    train = gdata.datasets.MNIST(tmp_path, train=True)
    assert tuple(train.data.shape) == (5, 1, 4, 3) and train.data.dtype == glassgrad.float32
    np.testing.assert_allclose(train.data.numpy()[:, 0], images / np.float32(255), rtol=1e-6)
    np.testing.assert_array_equal(train.targets.numpy(), labels.astype(np.int64))
    assert train.targets.dtype == glassgrad.int64
    test = gdata.datasets.IDXDataset(raw, split="test", scale="tanh")
    np.testing.assert_allclose(test.data.numpy()[:, 0], test_images / np.float32(127.5) - 1,
                               atol=1e-6)
    raw_bytes = gdata.datasets.MNIST(tmp_path, train=False, scale=None)
    np.testing.assert_array_equal(raw_bytes.data.numpy()[:, 0], test_images)
    for code, dtype in ((0x0B, np.int16), (0x0C, np.int32), (0x0D, np.float32), (0x0E, np.float64),
                        (0x09, np.int8)):
        arr = rng.standard_normal((2, 3)).__mul__(50).astype(dtype)
        _write_idx(tmp_path / "x.idx", arr, code, compress)
        back = gdata.datasets.read_idx(str(tmp_path / "x.idx"))
        assert back.numpy().dtype == np.dtype(dtype)
        np.testing.assert_array_equal(back.numpy(), arr)


def test_idx_errors(tmp_path):
    bad = tmp_path / "bad"
    bad.write_bytes(b"\x08\x03\x00\x00" + b"\x00" * 20)
    with pytest.raises(ValueError, match="not an IDX file: bad magic number"):
        gdata.datasets.read_idx(bad)
    bad.write_bytes(bytes([0, 0, 0x07, 1]) + np.asarray([2], ">u4").tobytes() + b"ab")
    with pytest.raises(ValueError, match="unknown IDX type code 0x07"):
        gdata.datasets.read_idx(bad)
    bad.write_bytes(bytes([0, 0, 0x08, 1]) + np.asarray([5], ">u4").tobytes() + b"ab")
    with pytest.raises(ValueError, match="holds 2 bytes of data"):
        gdata.datasets.read_idx(bad)
    with pytest.raises(FileNotFoundError, match="never downloads"):
        gdata.datasets.MNIST(tmp_path)
    with pytest.raises(RuntimeError, match="never downloads"):
        gdata.datasets.MNIST(tmp_path, download=True)
    _write_idx(tmp_path / "train-images-idx3-ubyte", np.zeros((3, 2, 2), np.uint8), 0x08)
    _write_idx(tmp_path / "train-labels-idx1-ubyte", np.zeros(4, np.uint8), 0x08)
    with pytest.raises(ValueError, match="expected images"):
        gdata.datasets.IDXDataset(tmp_path)
