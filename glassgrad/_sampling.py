"""ATen's CPU transforms from mt19937 words to samples (NOTE [Torch's stream] in _generator.py).

Every sampler is a method of the generator's engine, ``(size, dtype, *params) -> array``, drawn
in torch's element order (memory order of a contiguous tensor). Which paths are bit-exact:

- ``uniform`` (rand, uniform_): float32/16 take the low 24 (11, 8) bits of one word, float64 53
  bits of ``random64()``; ``x * (to - from) + from`` is one fused multiply-add, as torch's
  compiled kernel does it. Exact.
- ``integers``/``random`` (randint, random_), ``permutation`` (randperm), ``bernoulli`` with a
  number or a tensor ``p``: ATen's integer arithmetic. Exact.
- ``normal`` (randn, normal_): torch's Box-Muller, in blocks of 16 for 16 or more contiguous
  elements, else the serial sampler with its cached second value. float64 and the scalar float32
  kernel use libm's log/cos/sin, computed here in extended precision and rounded once: exact
  wherever libm's result is correctly rounded (0 differences in 10**6 float32 draws, see the
  tests). A float32 kernel built for AVX2 (a CPU without AVX-512) uses avx_mathfun polynomials
  instead; ``_avx_mathfun.py`` follows them (the capability is chosen as ATen chooses it).
  float16/bfloat16 blocks are float32 blocks (their own uniforms, no n drawn first) cast down.
- ``exponential``/``geometric``/``log_normal``/``cauchy``: ATen's serial double transforms.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

_LOW24 = np.uint64(2**24 - 1)
_LOW53 = np.uint64(2**53 - 1)
_STEP24 = np.float32(2.0**-24)
_WIDE = (np.dtype(np.float32), np.dtype(np.float64))
_HALVES = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))
_SPLIT = 134217729.0  # 2**27 + 1, Dekker's splitter for float64


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _round_to_odd_sum(a, b):
    """``a + b`` rounded to odd (an inexact sum gets an odd last bit): summing it once more to
    a narrower precision then rounds correctly (Boldo and Melquiond)."""
    s, t = _two_sum(a, b)
    bits = s.view(np.int64)
    fix = (t != 0) & ((bits & 1) == 0)
    if fix.any():
        step = np.where((t > 0) == (s > 0), 1, -1)
        bits = bits + np.where(fix, step, 0)
        s = bits.view(np.float64)
    return s


_MID32 = np.int64(1 << 28)  # a float64 halfway between two float32s ends in these 29 bits
_LOW29 = np.int64((1 << 29) - 1)


def _fma(a, b, c, dtype):
    """``a * b + c`` rounded once, as a C compiler contracts it on an FMA machine; arrays of
    float32 or float64 ``dtype``, ``b`` and ``c`` arrays or numbers."""
    dtype = np.dtype(dtype)
    if np.ndim(b) == 0 and np.ndim(c) == 0 and (b == 1 or c == 0):
        # one rounding anyway (and + 0.0 turns a -0.0 product into +0.0, as the fma does)
        return np.asarray(a, dtype) * dtype.type(b) + dtype.type(c)
    if dtype == np.float32:
        # the float32 product is exact in float64; the float64 sum rounds once more, which
        # only matters when it lands inexactly on a float32 midpoint: those get rounded to odd
        a, b, c = (np.asarray(v, np.float32) for v in (a, b, c))
        s = np.multiply(a, b, dtype=np.float64)
        s += c
        mid = (s.view(np.int64) & _LOW29) == _MID32
        if mid.any():
            shape = s.shape
            a, b, c = (np.broadcast_to(v, shape)[mid].astype(np.float64) for v in (a, b, c))
            s[mid] = _round_to_odd_sum(a * b, c)
        return s.astype(np.float32)
    a = np.asarray(a, np.float64)
    b, c = np.float64(b), np.broadcast_to(np.float64(c), a.shape)
    p = a * b
    t = a * _SPLIT
    ah = t - (t - a)
    al = a - ah
    t = b * _SPLIT
    bh = t - (t - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    th, tl = _two_sum(c, p)
    return th + _round_to_odd_sum(tl, e)


_MATH = {np.log: math.log, np.log1p: math.log1p, np.cos: math.cos, np.sin: math.sin,
         np.tan: math.tan, np.exp: math.exp}


def _madd(a, b, c, dtype):
    """``a * b + c`` as torch's kernels compute it: fused where ATen's kernels are built with FMA
    (the AVX2 and AVX512 capabilities), two roundings in its baseline (default) build."""
    from ._avx_mathfun import cpu_capability

    if (b == 1 and c == 0) or cpu_capability() != "default":
        return _fma(a, b, c, dtype)
    dtype = np.dtype(dtype)
    return (np.asarray(a, dtype) * dtype.type(b) + dtype.type(c)).astype(dtype, copy=False)


def _libm(fn, x, dtype):
    """libm's ``fn`` on ``x`` of ``dtype``, what torch's C++ calls. float64: libm itself through
    ``math`` (NumPy's own SIMD log/exp/tan differ from libm in the last bit for 0.3% to 7% of
    inputs, measured); float32: the float64 value rounded once, libm's ``logf``/``cosf`` value
    wherever that rounds correctly."""
    x = np.asarray(x)
    if dtype == np.float32:
        return fn(x.astype(np.float64)).astype(np.float32)
    return np.asarray(np.frompyfunc(_MATH[fn], 1, 1)(x), dtype=np.float64)


_DIGITS = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}


def _digits(dtype) -> int:
    """``std::numeric_limits<T>::digits``: the mantissa bits a uniform of ``dtype`` takes."""
    return _DIGITS[np.dtype(dtype).name]


def _update_from_to(low: int, high: int, dtype) -> tuple[int, int]:
    """ATen's update_from/update_to: a float dtype's [from, to) moved inwards to values whose
    cast stays inside it (randint(0, 5000, dtype=float16) draws below 4996, as torch does)."""
    def cast(v: int) -> int:
        return int(np.array(float(v)).astype(dtype))

    if cast(low + 1) < low:
        low = cast(low + 1) + (1 << (abs(low + 1).bit_length() - 1 - _digits(dtype) + 1))
    if cast(high - 1) >= high:
        high = cast(high - 1) - (1 << (abs(high - 1).bit_length() - 1 - _digits(dtype) + 1))
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than 'to' casted "
                           f"to dtype, but got from={low} >= to={high}\nglassgrad: widen the "
                           f"range; {dtype} cannot hold integers this close together.")
    return low, high


class Samplers:
    """Mixed into the generator's engine: torch's samplers over its ``words``/``words64``."""

    __slots__ = ()

    def _unit(self, n: int, dtype):
        """``n`` of ``uniform_real_distribution<dtype>(0, 1)``: [0, 1) in ``dtype``'s
        accumulation type, from 24 bits of a word for float32 and the 16-bit floats (measured:
        their digits are float's), 53 bits of random64 for float64."""
        if dtype == np.float64:
            return (self.words64(n) & _LOW53).astype(np.float64) * 2.0**-53
        return (self.words(n) & _LOW24).astype(np.float32) * _STEP24

    def uniform(self, size, dtype, low=0.0, high=1.0):
        """``uniform_(from, to)``: from and to cast to ``dtype`` (float for the 16-bit types),
        ``x * (to - from) + from``; a 16-bit result that rounds up to ``to`` becomes ``from``
        (measured on torch 2.13)."""
        dtype = np.dtype(dtype)
        n = math.prod(size)
        if low == 0 and high == 1 and dtype in _WIDE:  # rand(): the hot path, no arithmetic
            return self._unit(n, dtype).reshape(size)
        acc = np.float64 if dtype == np.float64 else np.float32
        short = dtype.itemsize == 2
        lo, hi = (acc(low), acc(high)) if short else (acc(dtype.type(low)), acc(dtype.type(high)))
        x = self._unit(n, dtype)
        if lo != 0 or hi != 1:
            x = _madd(x, acc(hi - lo), lo, acc)
        out = x.astype(dtype, copy=False).reshape(size)
        if short:
            out[out >= dtype.type(high)] = dtype.type(low)
        return out

    def normal(self, size, dtype, mean=0.0, std=1.0, contiguous=True):
        """``normal_(mean, std)``: ATen's ``normal_kernel``."""
        dtype = np.dtype(dtype)
        n = math.prod(size)
        if n >= 16 and contiguous and (dtype in _WIDE or dtype in _HALVES):
            return _normal_fill(self, n, dtype, mean, std).reshape(size)
        return self._serial_normal(n, mean, std).astype(dtype).reshape(size)

    def _serial_normal(self, n: int, mean, std):
        """``n`` of ``at::normal_distribution<double>``: Box-Muller on two random64 uniforms;
        the sin value waits in the generator for the next call."""
        out = np.empty(n, np.float64)
        i = 0
        if n and self.next_double_normal is not None:
            out[0] = self.next_double_normal
            self.next_double_normal = None
            i = 1
        pairs = (n - i + 1) // 2
        if pairs:  # Python floats: math is libm, and under 16 values NumPy's overhead dominates
            w = self.bits.random_raw(4 * pairs).tolist()
            u = [((hi << 32 | lo) & 0x1FFFFFFFFFFFFF) * 2.0**-53 for hi, lo in zip(w[0::2], w[1::2])]
            both = []
            for u1, u2 in zip(u[0::2], u[1::2]):
                r = math.sqrt(-2.0 * math.log1p(-u2))
                theta = 2.0 * math.pi * u1
                both += (r * math.cos(theta), r * math.sin(theta))
            out[i:] = both[:n - i]
            if (n - i) % 2:
                self.next_double_normal = both[-1]
        return _madd(out, std, mean, np.float64)

    def integers(self, size, dtype, low, high):
        """``random_(from, to)`` and ``randint``: ``word % (to - from) + from``, the word from
        random64 once the range reaches 2**28 (measured on torch 2.13, any dtype)."""
        dtype = np.dtype(dtype)
        n = int(np.prod(size))
        if dtype.kind == "f" or dtype.name == "bfloat16":
            low, high = _update_from_to(int(low), int(high), dtype)
        span = int(high) - int(low)
        w = self.words64(n) if span >= 2**28 else self.words(n)
        v = (w % np.uint64(span) + np.uint64(int(low) % 2**64)).view(np.int64)
        return v.astype(dtype).reshape(size)

    def random(self, size, dtype):
        """``random_()``: [0, 2**digits] for floats, [0, max] for integers, 0/1 for bool."""
        dtype = np.dtype(dtype)
        n = int(np.prod(size))
        if dtype == np.bool_:
            return (self.words(n) & np.uint64(1)).astype(np.bool_).reshape(size)
        if dtype.kind == "f" or dtype.name == "bfloat16":
            mod = 2 ** _digits(dtype) + 1
        else:
            mod = int(np.iinfo(dtype).max) + 1
        w = self.words64(n) if dtype in (np.float64, np.int64) else self.words(n)
        return (w % np.uint64(mod)).astype(dtype).reshape(size)

    def bernoulli(self, size, dtype, p=0.5):
        """``bernoulli_(p)``: a float64 uniform below ``p`` for a number or a float64 ``p``
        array, a float32 uniform for a float32 (or 16-bit) ``p`` array (ATen's CPU kernels)."""
        n = int(np.prod(size))
        if isinstance(p, np.ndarray) and p.dtype != np.float64:
            u = self._unit(n, np.float32).reshape(size)
            p = p.astype(np.float32)
        else:
            u = self._unit(n, np.float64).reshape(size)
        return (u < p).astype(dtype)

    def exponential(self, size, dtype, lambd=1.0):
        """``exponential_``: ``-1 / lambd * log1p(-u)``, u a float64 uniform."""
        u = self._unit(int(np.prod(size)), np.float64)
        return ((-1.0 / lambd) * _libm(np.log1p, -u, np.float64)).astype(dtype).reshape(size)

    def geometric(self, size, dtype, p):
        """``geometric_``: ``ceil(log(u) / log1p(-p))``, u a float64 uniform."""
        u = self._unit(int(np.prod(size)), np.float64)
        den = math.log1p(-p)
        return np.ceil(_libm(np.log, u, np.float64) / den).astype(dtype).reshape(size)

    def log_normal(self, size, dtype, mean=1.0, std=2.0):
        """``log_normal_``: exp of the serial normal sampler."""
        x = self._serial_normal(int(np.prod(size)), mean, std)
        return _libm(np.exp, x, np.float64).astype(dtype).reshape(size)

    def cauchy(self, size, dtype, median=0.0, sigma=1.0):
        """``cauchy_``: ``median + sigma * tan(pi * (u - 0.5))``, u a float64 uniform."""
        u = self._unit(int(np.prod(size)), np.float64)
        t = _libm(np.tan, np.pi * (u - 0.5), np.float64)
        return _madd(t, sigma, median, np.float64).astype(dtype).reshape(size)

    def poisson(self, rates):
        """``torch.poisson``: ATen's ``sample_poisson`` per rate, in order: products of float64
        uniforms under rate 10, Hoermann's transformed rejection from 10 on."""
        flat = np.asarray(rates, np.float64).reshape(-1).tolist()
        out = [self._poisson_one(lam) for lam in flat]
        return np.asarray(out, np.float64).astype(rates.dtype).reshape(rates.shape)

    def _poisson_one(self, lam: float) -> int:
        def uniform():
            hi, lo = self.bits.random_raw(2).tolist()
            return ((hi << 32 | lo) & 0x1FFFFFFFFFFFFF) * 2.0**-53

        if lam >= 10:
            slam, loglam = math.sqrt(lam), math.log(lam)
            b = 0.931 + 2.53 * slam
            a = -0.059 + 0.02483 * b
            invalpha = 1.1239 + 1.1328 / (b - 3.4)
            vr = 0.9277 - 3.6224 / (b - 2)
            while True:
                u = uniform() - 0.5
                v = uniform()
                us = 0.5 - abs(u)
                k = math.floor((2 * a / us + b) * u + lam + 0.43)
                if us >= 0.07 and v <= vr:
                    return k
                if k < 0 or (us < 0.013 and v > us):
                    continue
                if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                        <= -lam + k * loglam - math.lgamma(k + 1.0)):
                    return k
        if lam == 0:
            return 0
        enlam, x, prod = math.exp(-lam), 0, 1.0
        while True:
            prod *= uniform()
            if prod <= enlam:
                return x
            x += 1

    def permutation(self, n: int, dtype):
        """``randperm(n)``: ATen's Fisher-Yates with ``random() % (n - i)`` (an inside-out
        shuffle on random64 from n = 2**32 / 20 on)."""
        if n < 0xFFFFFFFF // 20:
            words = self.words(max(n - 1, 0)).tolist()
            perm = list(range(n))
            for i, w in enumerate(words):
                z = w % (n - i) + i
                perm[i], perm[z] = perm[z], perm[i]
        else:  # pragma: no cover - 214 million elements
            words = self.words64(n).tolist()
            perm = [0] * n
            for i, w in enumerate(words):
                z = w % (i + 1)
                perm[i] = perm[z]
                perm[z] = i
        return np.asarray(perm, dtype=dtype)

    def multinomial(self, probs, num_samples: int, replacement: bool):
        """``multinomial`` with replacement (ATen's inverse CDF by binary search on the row's
        normalized cumulative sums) or without (the Gumbel top-k on ``exponential_``)."""
        rows = probs.reshape(-1, probs.shape[-1])
        if not replacement or num_samples == 1:
            q = self.exponential(rows.shape, rows.dtype)
            with np.errstate(divide="ignore", invalid="ignore"):
                keys = rows / q
            # NOTE: a stable sort of -keys is torch's topk order, ties to the lower index
            out = np.argsort(-keys, axis=-1, kind="stable")[:, :num_samples]
            return out.reshape(probs.shape[:-1] + (num_samples,))
        acc = rows.dtype.type
        out = np.empty((rows.shape[0], num_samples), np.int64)
        for i, row in enumerate(rows):
            cum = np.cumsum(row, dtype=rows.dtype)
            total = cum[-1]
            if total > 0:
                cum = cum / acc(total)
            cum[-1] = 1
            u = self._unit(num_samples, np.float64)
            out[i] = np.searchsorted(cum.astype(np.float64), u, side="left")
        return out.reshape(probs.shape[:-1] + (num_samples,))


def _normal_fill(eng, n: int, dtype, mean, std):
    """ATen's ``normal_fill``: n uniforms, Box-Muller on blocks of 16 (u1 = 1 - data[j], u2 =
    data[j + 8]); a partial last block is redrawn on the last 16 elements."""
    if dtype in _HALVES:  # NOTE: ATen's 16-bit path: float32 blocks of 16, cast at the end,
        f32 = np.dtype(np.float32)  # and only the blocks' uniforms are drawn (no n first)
        full = n - n % 16
        data = np.empty(n, f32)
        data[:full] = _box_muller_16(eng._unit(full, f32).reshape(-1, 16), f32, mean,
                                     std).reshape(-1)
        if n % 16:
            data[n - 16:] = _box_muller_16(eng._unit(16, f32).reshape(1, 16), f32, mean,
                                           std).reshape(-1)
        return data.astype(dtype)
    data = eng._unit(n, dtype).astype(dtype, copy=False)
    tail = eng._unit(16, dtype).astype(dtype, copy=False) if n % 16 else None
    full = n - n % 16
    data[:full] = _box_muller_16(data[:full].reshape(-1, 16), dtype, mean, std).reshape(-1)
    if tail is not None:
        data[n - 16:] = _box_muller_16(tail.reshape(1, 16), dtype, mean, std).reshape(-1)
    return data


def _box_muller_16(blocks, dtype, mean, std):
    from ._avx_mathfun import cpu_capability

    if dtype == np.float32 and cpu_capability() != "default":
        from ._avx_mathfun import box_muller_16_avx2

        return box_muller_16_avx2(blocks, mean, std)
    one = dtype.type(1)
    u1, u2 = one - blocks[:, :8], blocks[:, 8:]
    radius = np.sqrt(dtype.type(-2) * _libm(np.log, u1, dtype))
    theta = (2.0 * np.pi * u2.astype(np.float64)).astype(dtype)
    out = np.empty_like(blocks)
    # NOTE: fused even in ATen's default build (measured with ATEN_CPU_CAPABILITY=default)
    out[:, :8] = _fma(radius * _libm(np.cos, theta, dtype), std, mean, dtype)
    out[:, 8:] = _fma(radius * _libm(np.sin, theta, dtype), std, mean, dtype)
    return out
