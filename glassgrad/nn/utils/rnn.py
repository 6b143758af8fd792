"""Variable-length batches for recurrent layers (``torch.nn.utils.rnn``).

NOTE [Packed layout]: a ``PackedSequence`` stores the time steps of a batch one after another:
step ``t`` holds the first ``batch_sizes[t]`` sequences of the batch sorted by decreasing length,
so ``data`` is ``(sum(lengths), *)``. Every function here moves rows with one integer gather
(``source[index]``) computed in NumPy, so packing, padding and their gradients are one op each,
with no Python loop over time steps or elements.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ... import dtypes
from ...ops.indexing import getitem
from ...ops.shape import cat, reshape, transpose
from ...tensor import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]


def _long(arr) -> Tensor:
    return Tensor._make(np.ascontiguousarray(arr, dtype=np.int64))


def _ints(x) -> np.ndarray:
    """Lengths or indices (list, tuple, array, Tensor) as a 1-D int64 array."""
    if isinstance(x, Tensor):
        x = x._array
    return np.asarray(x).astype(np.int64, copy=False).reshape(-1)


def invert_permutation(permutation):
    """The inverse of an index permutation, or None for None (``torch.nn.utils.rnn``)."""
    if permutation is None:
        return None
    perm = _ints(permutation)
    out = np.empty_like(perm)
    out[perm] = np.arange(perm.size, dtype=np.int64)
    return _long(out)


_PackedSequenceBase = namedtuple(
    "PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"]
)


class PackedSequence(_PackedSequenceBase):
    """Packed time steps of a variable-length batch (``torch.nn.utils.rnn.PackedSequence``).

    ``data`` is ``(sum(lengths), *)``; ``batch_sizes`` (int64, ``(max_len,)``) counts the sequences
    still running at each step; ``sorted_indices`` maps sorted slots to batch positions (None when
    the batch was already sorted) and ``unsorted_indices`` is its inverse. Build one with
    ``pack_padded_sequence`` or ``pack_sequence``, never by hand.
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if not isinstance(batch_sizes, Tensor):
                batch_sizes = _long(batch_sizes)
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        if not (isinstance(data, (list, tuple)) and len(data) == 2):
            raise TypeError("PackedSequence: expected (data, batch_sizes) or data and batch_sizes")
        return super().__new__(cls, data[0], data[1], sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        """Convert ``data`` (dtype or device); the index tensors stay int64."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cuda(self, *args, **kwargs) -> PackedSequence:
        return self

    def cpu(self, *args, **kwargs) -> PackedSequence:
        return self

    def double(self) -> PackedSequence:
        return self.to(dtype=dtypes.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=dtypes.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=dtypes.float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=dtypes.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=dtypes.int32)

    def short(self) -> PackedSequence:
        return self.to(dtype=dtypes.int16)

    def char(self) -> PackedSequence:
        return self.to(dtype=dtypes.int8)

    def byte(self) -> PackedSequence:
        return self.to(dtype=dtypes.uint8)

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False

    def pin_memory(self) -> PackedSequence:
        """``data`` in pinned memory (``Tensor.pin_memory``); the index tensors as they are."""
        return type(self)(self.data.pin_memory(), self.batch_sizes, self.sorted_indices,
                          self.unsorted_indices)


def _batch_sizes(sorted_lengths: np.ndarray) -> np.ndarray:
    """``batch_sizes[t]`` = how many (decreasing) lengths exceed ``t``."""
    steps = np.arange(int(sorted_lengths[0]) if sorted_lengths.size else 0)
    return (sorted_lengths[None, :] > steps[:, None]).sum(1).astype(np.int64)


def _packed_positions(batch_sizes: np.ndarray):
    """For each packed row: its time step and its sorted slot (NOTE [Packed layout])."""
    steps = np.repeat(np.arange(batch_sizes.size), batch_sizes)
    offsets = np.concatenate(([0], np.cumsum(batch_sizes)[:-1]))
    slots = np.arange(steps.size) - offsets[steps]
    return steps, slots


def pack_padded_sequence(input, lengths, batch_first: bool = False, enforce_sorted: bool = True):
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` if batch_first) of sequences of the given
    ``lengths`` into a ``PackedSequence`` (``torch.nn.utils.rnn.pack_padded_sequence``).

    Differentiable w.r.t. ``input``. Raises RuntimeError when ``enforce_sorted`` and the lengths do
    not decrease, when a length is not positive, or when there is not one length per sequence.
    """
    lens = _ints(lengths)
    time_dim, batch_dim = (1, 0) if batch_first else (0, 1)
    if input.dim() < 2:
        raise RuntimeError(
            f"pack_padded_sequence: expected a padded batch of at least 2 dims, got {input.dim()}-D"
        )
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    n_steps, batch = input.shape[time_dim], input.shape[batch_dim]
    if lens.size != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {lens.size} "
            f"(batch_size={batch})"
        )
    if enforce_sorted:
        if np.any(lens[1:] > lens[:-1]):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                "to sidestep this requirement if you do not need ONNX exportability.\n"
                f"glassgrad: got lengths {lens.tolist()}."
            )
        order = np.arange(batch)
        sorted_indices = None
    else:
        order = np.argsort(-lens, kind="stable")
        sorted_indices = _long(order)
    sorted_lens = lens[order]
    if batch and sorted_lens[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' "
            "that is <= 0"
        )
    if batch and sorted_lens[0] > n_steps:
        raise RuntimeError(
            f"pack_padded_sequence: a length of {int(sorted_lens[0])} exceeds the padded length "
            f"{n_steps} of the input of shape {list(input.shape)}.\nglassgrad: check batch_first "
            "(the time dimension is dim 1 when batch_first=True, else dim 0)."
        )
    batch_sizes = _batch_sizes(sorted_lens)
    steps, slots = _packed_positions(batch_sizes)
    rows = order[slots]
    flat = steps * batch + rows if not batch_first else rows * n_steps + steps
    source = reshape(input, (n_steps * batch,) + tuple(input.shape[2:]))
    data = getitem(source, flat)
    return PackedSequence(data, _long(batch_sizes), sorted_indices, invert_permutation(sorted_indices))


def pad_packed_sequence(sequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None):
    """Undo ``pack_padded_sequence``: returns ``(padded, lengths)`` with ``padded`` of shape
    ``(T, B, *)`` (``(B, T, *)`` if batch_first) in the original batch order and ``lengths`` an
    int64 tensor (``torch.nn.utils.rnn.pad_packed_sequence``).

    ``total_length`` pads to that many steps; ValueError if it is shorter than the longest sequence.
    """
    data = sequence.data
    batch_sizes = _ints(sequence.batch_sizes)
    max_len = batch_sizes.size
    if total_length is not None:
        if total_length < max_len:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in input, "
                f"but got total_length={total_length} and max sequence length being {max_len}"
            )
    else:
        total_length = max_len
    batch = int(batch_sizes[0]) if max_len else 0
    steps, slots = _packed_positions(batch_sizes)
    n_rows = steps.size
    index = np.full((total_length, batch), n_rows, dtype=np.int64)  # n_rows: the padding row
    index[steps, slots] = np.arange(n_rows)
    sorted_lens = (batch_sizes[None, :] > np.arange(batch)[:, None]).sum(1)
    lengths = sorted_lens
    if sequence.unsorted_indices is not None:
        unsorted = _ints(sequence.unsorted_indices)
        index = index[:, unsorted]
        lengths = sorted_lens[unsorted]
    if batch_first:
        index = index.T
    pad = Tensor._make(np.full((1,) + tuple(data.shape[1:]), padding_value, dtype=data._array.dtype))
    padded = getitem(cat([data, pad], 0), np.ascontiguousarray(index))
    return padded, _long(lengths)


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right"):
    """Stack tensors ``(L_i, *)`` into ``(max L, B, *)`` (``(B, max L, *)`` if batch_first), padding
    with ``padding_value`` on ``padding_side`` (``torch.nn.utils.rnn.pad_sequence``).

    Dtypes promote as in ``cat``; differentiable. Raises RuntimeError for an empty list, a bad
    ``padding_side`` or trailing shapes that differ.
    """
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    if not isinstance(sequences, Tensor) and not hasattr(sequences, "__iter__"):
        raise RuntimeError(
            "pad_sequence: Expected iterable for input sequences, but got arg of type: "
            f"{type(sequences)}")
    sequences = list(sequences.unbind(0) if isinstance(sequences, Tensor) else sequences)
    for i, s in enumerate(sequences):
        if not isinstance(s, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(s).__name__}")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    trailing = tuple(sequences[0].shape[1:])
    for i, s in enumerate(sequences):
        if tuple(s.shape[1:]) != trailing:
            raise RuntimeError(
                f"The size of tensor a ({trailing[0] if trailing else 0}) must match the size of "
                f"tensor b ({s.shape[1] if s.dim() > 1 else 0}) at non-singleton dimension 1\n"
                f"glassgrad: pad_sequence got sequence 0 of shape {list(sequences[0].shape)} and "
                f"sequence {i} of shape {list(s.shape)}; all must agree after dim 0."
            )
    lens = np.array([s.shape[0] for s in sequences], dtype=np.int64)
    max_len = int(lens.max())
    n_rows = int(lens.sum())
    starts = np.concatenate(([0], np.cumsum(lens)[:-1]))
    steps = np.arange(max_len)[:, None]
    if padding_side == "right":
        pos = steps
    else:
        pos = steps - (max_len - lens)[None, :]
    valid = (pos >= 0) & (pos < lens[None, :])
    index = np.where(valid, starts[None, :] + pos, n_rows)
    if batch_first:
        index = index.T
    source = cat(sequences, 0)
    pad = Tensor._make(np.full((1,) + trailing, padding_value, dtype=source._array.dtype))
    return getitem(cat([source, pad], 0), np.ascontiguousarray(index))


def unpad_sequence(padded_sequences, lengths, batch_first: bool = False) -> list:
    """Split a right-padded batch back into a list of tensors ``(L_i, *)``
    (``torch.nn.utils.rnn.unpad_sequence``)."""
    if not batch_first:
        padded_sequences = transpose(padded_sequences, 0, 1)
    return [padded_sequences[i, :n] for i, n in enumerate(_ints(lengths).tolist())]


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of tensors ``(L_i, *)`` (``torch.nn.utils.rnn.pack_sequence``); the lengths
    must decrease unless ``enforce_sorted=False``."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences) -> list:
    """The list of tensors ``(L_i, *)`` a ``PackedSequence`` holds, in the original order
    (``torch.nn.utils.rnn.unpack_sequence``)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
