"""PyTorch's CPU random generator (``torch.Generator``): the same seed gives torch's numbers.

NOTE [Torch's stream] torch's CPU generator (ATen's ``CPUGeneratorImpl``) is a 32-bit mt19937
seeded with the low 32 bits of the seed (Matsumoto-Nishimura ``init_genrand``), which is NumPy's
``MT19937._legacy_seeding``; ``random_raw(n)`` then yields torch's 32-bit words in torch's order.
``random()`` is one word, ``random64()`` is ``(w1 << 32) | w2`` of the next two. The transforms
from words to samples (``_sampling.py``) are ATen's. The serial normal sampler caches the second
Box-Muller value in the generator (``next_double_normal_sample``); it belongs to the state.
"""

from __future__ import annotations

import struct

import numpy as np

from ._sampling import Samplers
from .backend import device as _device

_DEFAULT_SEED = 67280421310721  # ATen's default_rng_seed_val
_N = 624  # MERSENNE_STATE_N
_32 = np.uint64(32)
# CPUGeneratorImplState: the_initial_seed (u64), left (i32), seeded (i32), next (u64),
# state[624] (u64), normal_x, normal_y, normal_rho (f64), normal_is_valid (i32, padded to 8),
# next_float_normal_sample (f32), is_next_float_normal_sample_valid (bool, padded to 4)
_HEAD = struct.Struct("<QiiQ")
_TAIL = struct.Struct("<dddi4xf?3x")
_STATE_SIZE = _HEAD.size + 8 * _N + _TAIL.size  # 5056, torch's sizeof(CPUGeneratorImplState)


def _to_uint64(seed) -> int:
    """torch's seed checks (Generator.manual_seed takes an int only; torch.manual_seed converts
    with int() first), then the seed as the uint64 torch stores."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}\n"
                           "glassgrad: pass an integer seed.")
    seed = int(seed)
    if not -(2**63) <= seed < 2**64:
        raise ValueError("Overflow when unpacking long long\nglassgrad: a seed lies in "
                         "[-0x8000_0000_0000_0000, 0xffff_ffff_ffff_ffff].")
    return seed & (2**64 - 1)


class _Engine(Samplers):
    """The mt19937 words (NumPy's C implementation) and the serial normal sampler's cache."""

    __slots__ = ("bits", "next_double_normal", "next_float_normal")

    def __init__(self, seed: int):
        self.bits = np.random.MT19937()
        self.bits._legacy_seeding(seed & 0xFFFFFFFF)
        self.next_double_normal = None
        self.next_float_normal = None

    def words(self, n: int) -> np.ndarray:
        """``n`` calls of torch's ``random()``: uint64 holding 32-bit words."""
        return self.bits.random_raw(n)

    def words64(self, n: int) -> np.ndarray:
        """``n`` calls of torch's ``random64()`` (uint64)."""
        w = self.bits.random_raw(2 * n)
        return (w[0::2] << _32) | w[1::2]


class Generator:
    """A random stream that gives PyTorch's CPU numbers (``torch.Generator``).

    ``Generator().manual_seed(s)`` then any sampler with ``generator=`` draws what torch draws
    after the same seed (see NOTE [Torch's stream]); ``get_state()`` is torch's 5056-byte
    ``ByteTensor`` layout, so a state saved by torch loads here and the other way round.
    Example: ``glassgrad.rand(2, generator=glassgrad.Generator().manual_seed(0))``.
    """

    def __init__(self, device="cpu"):
        self.device = _device(device)
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed) -> Generator:
        """Reseed (``torch.Generator.manual_seed``); returns the generator. Negative seeds wrap
        to uint64 as in torch; RuntimeError for a non-int, ValueError outside [-2**63, 2**64)."""
        self._seed = _to_uint64(seed)
        self._rng = _Engine(self._seed)
        return self

    def seed(self) -> int:
        """Reseed from the OS's entropy (``torch.Generator.seed``); returns the new seed."""
        s = int(np.random.SeedSequence().entropy % (2**64))
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed last set (``torch.Generator.initial_seed``)."""
        return self._seed

    def get_state(self) -> "Tensor":  # noqa: F821
        """The state as torch's ``uint8`` tensor of 5056 bytes (``torch.Generator.get_state``)."""
        from .tensor import Tensor

        eng = self._rng
        st = eng.bits.state["state"]
        key, pos = st["key"], int(st["pos"])
        left, nxt = _N + 1 - pos, pos
        if pos == _N:  # just seeded (torch says next 0) or 624 words drawn (next 624)
            fresh = np.random.MT19937()
            fresh._legacy_seeding(self._seed & 0xFFFFFFFF)
            if np.array_equal(fresh.state["state"]["key"], key):
                nxt = 0
        d, f = eng.next_double_normal, eng.next_float_normal
        raw = (_HEAD.pack(self._seed, left, 1, nxt) + key.astype("<u8").tobytes()
               + _TAIL.pack(0.0, 0.0 if d is None else d, 0.0, d is not None,
                            0.0 if f is None else f, f is not None))
        return Tensor._make(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, new_state) -> Generator:
        """Restore a state from ``get_state`` here or in torch (``torch.Generator.set_state``);
        returns the generator. TypeError for a non-uint8 tensor, RuntimeError for a size other
        than 5056 (torch 2.13 refuses the older 5048-byte layout too) or an invalid state."""
        from .tensor import Tensor

        arr = new_state._array if isinstance(new_state, Tensor) else None
        if arr is None or arr.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor\nglassgrad: pass the uint8 "
                            "tensor that get_state() (or torch's) returned.")
        raw = np.ascontiguousarray(arr).tobytes()
        if len(raw) != _STATE_SIZE:
            raise RuntimeError(
                f"Expected a CPUGeneratorImplState of size {_STATE_SIZE} but found the input RNG "
                f"state size to be {len(raw)}\nglassgrad: pass the tensor get_state() returned, "
                "unchanged.")
        seed, left, seeded, nxt = _HEAD.unpack_from(raw)
        key = np.frombuffer(raw, dtype="<u8", count=_N, offset=_HEAD.size)
        if not (seeded and 0 < left <= _N and nxt <= _N):
            raise RuntimeError("Invalid mt19937 state\nglassgrad: the state's counters are out "
                               "of range; pass a state that get_state() returned.")
        eng = _Engine(0)
        eng.bits.state = {"bit_generator": "MT19937",
                          "state": {"key": key.astype(np.uint32), "pos": _N + 1 - left}}
        _, y, _, valid, f, f_valid = _TAIL.unpack_from(raw, _HEAD.size + 8 * _N)
        eng.next_float_normal = f if f_valid else None
        eng.next_double_normal = y if valid else None
        self._seed, self._rng = seed, eng
        return self

    def clone_state(self) -> Generator:
        """A new generator in this one's state (``torch.Generator.clone_state``)."""
        return Generator(self.device).set_state(self.get_state())

    def get_offset(self) -> int:
        raise RuntimeError("CPU Generator does not use offset\nglassgrad: offsets belong to "
                           "torch's counter-based (Philox) generators; use get_state().")

    def set_offset(self, offset: int) -> None:
        raise RuntimeError("CPU Generator does not use offset\nglassgrad: offsets belong to "
                           "torch's counter-based (Philox) generators; use set_state().")

    def __reduce__(self):
        # copy.deepcopy and pickle keep the stream, as torch's Generator does
        return (Generator, (self.device,), self.get_state())

    def __setstate__(self, state) -> None:
        self.set_state(state)

    def __repr__(self) -> str:
        return f"<glassgrad.Generator object at {id(self):#x}>"


default_generator = Generator()
default_generator.seed()  # NOTE: as torch's: a fresh process starts from an entropy seed


def manual_seed(seed) -> Generator:
    """Seed the default generator (``torch.manual_seed``, which takes ``int(seed)``: 1.5, "1"
    and a one-element tensor too); returns it."""
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seed the default generator from the OS's entropy (``torch.seed``); returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The default generator's seed (``torch.initial_seed``)."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state, torch's 5056-byte layout (``torch.get_rng_state``)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restore the default generator's state (``torch.set_rng_state``)."""
    default_generator.set_state(new_state)


def _engine(generator) -> _Engine:
    return (generator or default_generator)._rng
