"""Shared pieces of the examples: choosing the library, the bundled digits, output folders.

Every example is written as PyTorch code against a module called ``torch``. By default that module
is glassgrad; ``--backend torch`` runs the very same code on PyTorch for a side-by-side comparison.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import time

import numpy as np

THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` with "(default: X)" after each option's text, except for flags, options whose
    default is None (their text says what happens) and texts that already name their default."""

    def _get_help_string(self, action):
        text = action.help or ""
        if (action.default is None or action.nargs == 0 or "(default" in text
                or action.default is argparse.SUPPRESS):
            return text
        return super()._get_help_string(action)


def add_backend_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", default="glassgrad", choices=["glassgrad", "torch"],
                        help="library that runs the code; torch runs the same code on PyTorch, "
                        "on one thread")


def add_out_arg(parser: argparse.ArgumentParser, default: str, more: str = "") -> None:
    """``--out``; its default is filled in by ``resolve_out`` once the backend is known: torch
    writes to its own folder, so it never overwrites glassgrad's results."""
    parser.add_argument("--out", default=None,
                        help=f"output folder (default: {default}, {default}-torch with "
                        f"--backend torch{more})")


def resolve_out(args, default: str) -> str:
    """``args.out``, or ``default`` (``default + "-torch"`` on the torch backend) when not given."""
    if args.out is None:
        args.out = default + ("-torch" if args.backend == "torch" else "")
    return args.out


def load_backend(name: str):
    """The module that runs the examples' code. PyTorch is limited to one thread (as
    ``blas_threads`` does for NumPy) unless OPENBLAS/OMP/MKL_NUM_THREADS is set: the examples'
    tensors are small, and on a busy 2-core machine torch's second thread made it 15-25x slower."""
    module = importlib.import_module(name)
    if name == "torch" and not any(os.environ.get(k) for k in THREAD_VARS):
        module.set_num_threads(1)
    return module


def digits_arrays(split: str, scale: str = "unit"):
    """(images (N, 1, 8, 8) float32, labels (N,) int64) of the bundled digits as NumPy arrays."""
    from glassgrad.utils.data.datasets import load_digits

    images, labels = load_digits(split=split, scale=scale, return_X_y=True)
    return images.numpy(), labels.numpy()


def out_dir(path: str) -> str:
    os.makedirs(path, exist_ok=True)
    return path


def write_json(path: str, data: dict) -> None:
    with open(path, "w") as f:
        json.dump(data, f, indent=2, sort_keys=True)


class Timer:
    def __init__(self):
        self.start = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start


def seed_all(torch, seed: int) -> None:
    torch.manual_seed(seed)
    np.random.seed(seed)


def blas_threads(n: int = 1):
    """A context that caps NumPy's BLAS (and OpenMP) threads at ``n`` unless the user set
    OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / MKL_NUM_THREADS. The examples' matrices are small
    (64 x 256): on 2 cores, OpenBLAS's second thread costs more in synchronisation than it gives
    (a GAN step: 8 ms on one thread, 22-160 ms on two). Uses threadpoolctl (scikit-learn's
    dependency); without it, does nothing."""
    import contextlib

    if any(os.environ.get(k) for k in THREAD_VARS):
        return contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=n)
