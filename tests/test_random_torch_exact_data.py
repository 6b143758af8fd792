"""Same seed, same data order as torch: the samplers of ``utils.data``, ``random_split`` and a
shuffling ``DataLoader`` (its base seed, its worker's stream), compared exactly."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad


def same(fn, seed=0):
    torch.manual_seed(seed)
    glassgrad.manual_seed(seed)
    t, g = fn(torch), fn(glassgrad)
    assert t == g
    assert np.array_equal(torch.rand(3).numpy(), glassgrad.rand(3).numpy())
    return t


@pytest.mark.parametrize("kwargs", [{}, {"replacement": True}, {"num_samples": 25},
                                    {"replacement": True, "num_samples": 70}])
def test_random_sampler(kwargs):
    def run(m):
        s = m.utils.data.RandomSampler(range(20), **kwargs)
        return [list(s), list(s)]  # each pass seeds a fresh generator from the default one

    same(run, seed=3)


def test_random_sampler_with_generator():
    def run(m):
        g = m.Generator().manual_seed(11)
        return list(m.utils.data.RandomSampler(range(30), generator=g)) + [g.initial_seed()]

    same(run)


def test_subset_and_weighted_samplers():
    def run(m):
        w = [0.1, 0.5, 2.0, 0.0, 1.0, 3.0]
        return [list(m.utils.data.SubsetRandomSampler([5, 7, 9, 11, 13])),
                list(m.utils.data.WeightedRandomSampler(w, 10)),
                list(m.utils.data.WeightedRandomSampler(w, 4, replacement=False)),
                list(m.utils.data.WeightedRandomSampler(m.tensor(w), 3))]

    same(run, seed=4)


def test_random_split():
    def run(m):
        parts = m.utils.data.random_split(range(20), [5, 15])
        fracs = m.utils.data.random_split(range(10), [0.3, 0.7],
                                          generator=m.Generator().manual_seed(2))
        return [list(p) for p in parts] + [list(p) for p in fracs]

    same(run, seed=5)


@pytest.mark.parametrize("num_workers,persistent", [(0, False), (1, False), (1, True), (3, False),
                                                    (3, True)])
def test_dataloader_shuffle_order_and_worker_stream(num_workers, persistent):
    """The batch order is torch's; with workers, the dataset's own draws come from the stream of
    the worker fetching the batch (batch k: worker k % N, seeded base_seed + k % N, as torch's
    workers), and the sampler's from the main one."""
    class Noisy:
        def __init__(self, m):
            self.m = m

        def __len__(self):
            return 12

        def __getitem__(self, i):
            return self.m.tensor([float(i), float(self.m.rand(1).item())])

    def run(m):
        loader = m.utils.data.DataLoader(Noisy(m), batch_size=5, shuffle=True,
                                         num_workers=num_workers, persistent_workers=persistent)
        out = [b.tolist() for b in loader]
        return out + [b.tolist() for b in loader]

    same(run, seed=6)


@pytest.mark.parametrize("persistent", [False, True])
def test_dataloader_workers_info_init_fn_and_streams(persistent):
    """Augmentations drawn in the dataset with num_workers=2: each batch's draws, its
    get_worker_info() (id, num_workers, seed) and the effect of worker_init_fn's draw are
    torch's, over two passes."""
    class Noisy:
        def __init__(self, m):
            self.m = m

        def __len__(self):
            return 11

        def __getitem__(self, i):
            info = self.m.utils.data.get_worker_info()
            return (self.m.tensor([float(info.id), float(info.num_workers),
                                   float(self.m.randn(1).item())]), info.seed)

    def run(m):
        def init(wid):
            m.rand(wid + 1)  # a draw on worker wid's stream

        loader = m.utils.data.DataLoader(Noisy(m), batch_size=3, shuffle=True, num_workers=2,
                                         worker_init_fn=init, persistent_workers=persistent)
        return [[x.tolist(), seed.tolist()] for _ in range(2) for x, seed in loader]

    same(run, seed=9)


def test_dataloader_with_generator_leaves_the_default_stream():
    def run(m):
        g = m.Generator().manual_seed(8)
        loader = m.utils.data.DataLoader(m.utils.data.TensorDataset(m.arange(10)), batch_size=3,
                                         shuffle=True, generator=g)
        return [b[0].tolist() for b in loader]

    same(run, seed=7)
