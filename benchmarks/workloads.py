"""The eight workloads of ``make bench`` (issue 7), each written once against a module ``lib``
(glassgrad or torch): ``make(lib) -> step``, where ``step()`` runs one iteration and returns its
loss as a float.

Weights and inputs come from NumPy (``np.random.default_rng(seed)``), never from either library's
generator, so both libraries start from identical numbers; ``run.py`` compares the losses of the
first iterations before it times anything. Everything is float32.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from benchmarks.loader_workloads import loader_0, loader_2

_EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


def _example(name: str):
    """An example script as a module (the article's code, shared with ``examples/``)."""
    if _EXAMPLES not in sys.path:
        sys.path.insert(0, _EXAMPLES)
    return __import__(name)


def init_from_numpy(lib, module, seed: int) -> None:
    """Fill every parameter of ``module`` from ``U(-b, b)``, ``b = 1/sqrt(fan_in)``, in
    registration order (PyTorch's default Linear/Conv/LSTM scale), identically on both libraries."""
    rng = np.random.default_rng(seed)
    bound = 1.0
    with lib.no_grad():
        for _, p in module.named_parameters():
            shape = tuple(p.shape)
            if len(shape) >= 2:
                bound = 1.0 / math.sqrt(int(np.prod(shape[1:])))
            values = rng.uniform(-bound, bound, size=shape).astype(np.float32)
            p.copy_(lib.from_numpy(values))


def _array(lib, rng, shape, low=-1.0, high=1.0):
    return lib.from_numpy(rng.uniform(low, high, size=shape).astype(np.float32))


def op_chain(lib, rounds: int = 200):
    """1,000 scalar ops (tanh, exp, pow, mul, add) x 200, forward + backward: per-op overhead."""
    x = lib.tensor(0.3, dtype=lib.float32, requires_grad=True)

    def step():
        y = x
        for _ in range(rounds):
            y = y.tanh().exp() ** 2 * 0.25 + 0.1
        y.backward()
        x.grad = None
        return y.item()

    return step


def cube_second_derivative(lib):
    """``d/dx x**3`` with ``create_graph=True``, then ``d2/dx2`` of it."""
    x = lib.tensor(1.5, dtype=lib.float32, requires_grad=True)

    def step():
        (g,) = lib.autograd.grad(x**3, x, create_graph=True)
        (g2,) = lib.autograd.grad(g, x)
        return g2.item()

    return step


def mlp_step(lib, batch: int = 128, hidden: int = 256):
    """MLP 784-256-256-10 with ReLU, cross-entropy, one SGD step (``hidden`` other than 256:
    row 11's sizes, benchmarks/scaling_workloads.py)."""
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                          nn.Linear(hidden, 10))
    init_from_numpy(lib, model, 0)
    rng = np.random.default_rng(1)
    x = _array(lib, rng, (batch, 784), 0.0, 1.0)
    y = lib.from_numpy(rng.integers(0, 10, size=batch).astype(np.int64))
    opt = lib.optim.SGD(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def cnn_step(lib, batch: int = 64):
    """64x1x28x28: conv(1->16, 3x3, pad 1)-relu-maxpool2-conv(16->32)-relu-maxpool2-linear(1568->10),
    cross-entropy, one SGD step."""
    nn = lib.nn
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(1568, 10),
    )
    init_from_numpy(lib, model, 0)
    rng = np.random.default_rng(1)
    x = _array(lib, rng, (batch, 1, 28, 28), 0.0, 1.0)
    y = lib.from_numpy(rng.integers(0, 10, size=batch).astype(np.int64))
    opt = lib.optim.SGD(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def lstm_fwd_bwd(lib, steps: int = 50, batch: int = 32, features: int = 64, hidden: int = 128):
    """nn.LSTM(64, 128) over T=50, batch 32: forward + backward of the summed outputs."""
    lstm = lib.nn.LSTM(features, hidden)
    init_from_numpy(lib, lstm, 0)
    x = _array(lib, np.random.default_rng(1), (steps, batch, features))

    def step():
        out, _ = lstm(x)
        loss = out.sum()
        loss.backward()
        for p in lstm.parameters():
            p.grad = None
        return loss.item()

    return step


def wgan_gp_step(lib, batch: int = 64):
    """WGAN-GP critic step: MLP 784-256-256-1 (LeakyReLU 0.2), the article's gradient penalty
    (``autograd.grad(create_graph=True)``, from examples/gan.py), Adam."""
    nn = lib.nn
    critic = nn.Sequential(nn.Linear(784, 256), nn.LeakyReLU(0.2), nn.Linear(256, 256),
                           nn.LeakyReLU(0.2), nn.Linear(256, 1))
    init_from_numpy(lib, critic, 0)
    rng = np.random.default_rng(1)
    real = _array(lib, rng, (batch, 784))
    fake = _array(lib, rng, (batch, 784))
    epsilon = _array(lib, rng, (batch, 1), 0.0, 1.0)
    opt = lib.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.5, 0.9))
    gradient_penalty = _example("gan").gradient_penalty

    def step():
        penalty = gradient_penalty(lib, critic, real, fake, epsilon)
        loss = critic(fake).mean() - critic(real).mean() + penalty * 10.0
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    return step


def maml_step(lib, tasks: int = 5):
    """Second-order MAML meta step (examples/maml.py): sinusoid MLP 1-40-40-1, 5 tasks, one inner
    step with ``create_graph=True`` through ``func.functional_call``, Adam on the meta-loss."""
    maml = _example("maml")
    model = maml.build_model(lib)
    init_from_numpy(lib, model, 0)
    batch = maml.sample_tasks(np.random.default_rng(1), tasks, k=10, query=10)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        return maml.meta_step_functional(lib, model, opt, batch, 0.01, 1, second_order=True)

    return step


def gan_step(lib, batch: int = 64, nz: int = 32):
    """The main job's step (examples/gan.py ``article_step``): one generator forward feeds the
    discriminator's loss (``backward(retain_graph=True)``) and the generator's; Adam on both."""
    gan = _example("gan")
    generator, discriminator = gan.build_models(lib, nz)
    init_from_numpy(lib, generator, 0)
    init_from_numpy(lib, discriminator, 1)
    images = _digits()
    rng = np.random.default_rng(2)
    real = lib.from_numpy(images[rng.choice(len(images), batch, replace=False)])
    z = _array(lib, rng, (batch, nz))
    opt_g = lib.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = lib.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))

    def step():
        d_loss, g_loss = gan.article_step(lib, generator, discriminator, opt_g, opt_d, real, z)
        return d_loss + g_loss

    return step


def _digits() -> np.ndarray:
    """The bundled 8x8 digits' training images as (N, 64) float32 in [-1, 1]."""
    images, _ = _example("_common").digits_arrays("train", "tanh")
    return np.ascontiguousarray(images.reshape(len(images), 64), dtype=np.float32)


@dataclass(frozen=True)
class Workload:
    title: str
    make: Callable
    inner: int  # iterations per timed sample
    ops: int = 0  # ops per iteration, for a per-op time (the chain)
    rtol: float = 1e-4  # first losses: glassgrad vs torch


WORKLOADS = {
    "chain": Workload("1 op overhead (1000-op chain)", op_chain, 1, ops=1000),
    "x3": Workload("2 x**3 second derivative", cube_second_derivative, 20),
    "mlp": Workload("3 MLP 784-256-256-10 SGD step", mlp_step, 5),
    "cnn": Workload("4 CNN step (64x1x28x28)", cnn_step, 1),
    "lstm": Workload("5 LSTM T=50 fwd+bwd", lstm_fwd_bwd, 1),
    "wgan_gp": Workload("6 WGAN-GP critic step", wgan_gp_step, 2, rtol=1e-3),
    "maml": Workload("7 MAML second-order meta step", maml_step, 2, rtol=1e-3),
    "gan": Workload("8 GAN step (digits, retain_graph)", gan_step, 2, rtol=1e-3),
    # issue 22: an epoch of 6 batches whose samples cost ~1 ms of NumPy each to make
    "loader0": Workload("14a DataLoader epoch, num_workers=0", loader_0, 1, rtol=1e-3),
    "loader2": Workload("14b DataLoader epoch, 2 workers", loader_2, 1, rtol=1e-3),
}
# issue 20, lane perf
from benchmarks.per_sample_workloads import per_sample_grads  # noqa: E402
from benchmarks.resnet_workloads import resnet_step  # noqa: E402
from benchmarks.scaling_workloads import scaling_rows  # noqa: E402
from benchmarks.transformer_workloads import transformer_lm_step  # noqa: E402

WORKLOADS["transformer"] = Workload("9 Transformer LM step (nanoGPT 4x128)", transformer_lm_step, 1)
WORKLOADS["resnet"] = Workload("10 ResNet-8 step (32x3x32x32)", resnet_step, 1)
WORKLOADS.update(scaling_rows(Workload, mlp_step))
WORKLOADS["per_sample"] = Workload("12 per-sample grads vmap(grad) b256", per_sample_grads, 1)
PERF_TARGETS = {"transformer": 1.0, "resnet": 1.2, "per_sample": 0.2,
                **{key: 1.0 for key in WORKLOADS if key.startswith("scale_")}}
