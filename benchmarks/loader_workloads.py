"""``make bench`` rows for ``DataLoader`` worker processes (issue 22): one epoch of training an
MLP on a dataset whose samples are expensive to make (an augmentation in NumPy, the same work on
both libraries), with ``num_workers=0`` and with 2 persistent workers that load the next batches
while the main process runs the training step.

The augmentation is seeded by the sample's index (``np.random.default_rng(index)``), not by the
worker's streams, so both libraries and both worker counts train on the same numbers and the
epoch losses can be compared.
"""

from __future__ import annotations

import numpy as np

SAMPLES, BATCH, SIDE = 192, 32, 28
ROUNDS = 6  # blur-and-jitter rounds per sample: ~1 ms of NumPy work each sample


class _Augmented:
    """Digit-like images, each blurred, shifted and noised ``ROUNDS`` times when fetched."""

    def __init__(self, lib) -> None:
        rng = np.random.default_rng(0)
        self.lib = lib
        self.images = rng.uniform(0.0, 1.0, size=(SAMPLES, SIDE, SIDE)).astype(np.float32)
        self.labels = rng.integers(0, 10, size=SAMPLES)

    def __len__(self) -> int:
        return SAMPLES

    def __getitem__(self, index: int):
        rng = np.random.default_rng(index)
        x = self.images[index]
        for _ in range(ROUNDS):
            spectrum = np.fft.rfft2(x)
            x = np.fft.irfft2(spectrum * np.exp(-rng.uniform(0.01, 0.05)
                                                * np.arange(spectrum.shape[1])), s=x.shape)
            x = np.roll(x, tuple(rng.integers(-2, 3, size=2)), axis=(0, 1))
            x = (x + rng.normal(0.0, 0.01, size=x.shape)).astype(np.float32)
        return self.lib.from_numpy(x.reshape(-1)), int(self.labels[index])


def _epoch(lib, workers: int):
    from benchmarks.workloads import init_from_numpy

    nn = lib.nn
    model = nn.Sequential(nn.Linear(SIDE * SIDE, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    init_from_numpy(lib, model, seed=22)
    opt = lib.optim.SGD(model.parameters(), lr=0.05)
    extra = {"persistent_workers": True} if workers else {}
    loader = lib.utils.data.DataLoader(_Augmented(lib), batch_size=BATCH, num_workers=workers,
                                       **extra)

    def step():
        total = 0.0
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        return total / len(loader)

    return step


def loader_0(lib):
    """An epoch with the samples made in the training process."""
    return _epoch(lib, 0)


def loader_2(lib):
    """An epoch with 2 worker processes making the samples."""
    return _epoch(lib, 2)
