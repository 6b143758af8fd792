"""``torch.nn.AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al. (2016), a head
over the frequent classes plus one entry per tail cluster, each cluster a two-layer projection.
Composed of Linear, log_softmax, gather and index_add, so every derivative follows."""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...functional import log_softmax
from ...ops.joins import cat
from ...tensor import Tensor
from ..module import Module
from .container import ModuleList, Sequential
from .linear import Linear

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax (``torch.nn.AdaptiveLogSoftmaxWithLoss``): ``head`` is
    ``Linear(in_features, cutoffs[0] + n_clusters, bias=head_bias)``; cluster ``i`` is
    ``Sequential(Linear(in_features, in_features // div_value ** (i + 1)), Linear(.., size))``
    without biases. ``forward(input (N, in_features) or (in_features,), target (N,) or ())``
    returns ``(output, loss)``: each target's log-probability and the mean negative of them.
    ``log_prob`` gives all ``n_classes`` log-probabilities, ``predict`` the most likely class.
    ValueError for bad cutoffs; RuntimeError for mismatched shapes or targets out of range."""

    def __init__(self, in_features: int, n_classes: int, cutoffs, div_value: float = 4.0,
                 head_bias: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in "
                             "an increasing order, where each value is between 1 and n_classes-1")
        factory = {"device": device, "dtype": dtype}
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **factory),
                                        Linear(hidden, size, bias=False, **factory)))

    def reset_parameters(self) -> None:
        """Re-initialise the head and every cluster's projections as ``__init__`` does."""
        self.head.reset_parameters()
        for in_to_hidden, hidden_to_out in self.tail:
            in_to_hidden.reset_parameters()
            hidden_to_out.reset_parameters()

    def forward(self, input_, target_):
        _check_shapes(input_, target_)
        batched = target_.ndim > 0
        input = input_ if batched else input_.unsqueeze(0)
        t = target_._array.reshape(-1).astype(np.int64)
        gather = t.copy()
        used, rows_all, pieces = 0, [], []
        bounds = [0] + self.cutoffs
        for i, (low, high) in enumerate(zip(bounds, bounds[1:])):
            rows = np.nonzero((t >= low) & (t < high))[0]
            used += rows.size
            if i == 0 or rows.size == 0:
                continue
            gather[rows] = self.shortlist_size + i - 1
            logp = log_softmax(self.tail[i - 1](input[Tensor._make(rows)]), 1)
            pieces.append(logp.gather(1, Tensor._make((t[rows] - low)[:, None])).squeeze(1))
            rows_all.append(rows)
        if used != t.size:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values "
                               f"in range [{t.min()}, {t.max()}] were found. ")
        head_logprob = log_softmax(self.head(input), 1)
        output = head_logprob.gather(1, Tensor._make(gather[:, None])).squeeze(1)
        if pieces:
            output = output.index_add(0, Tensor._make(np.concatenate(rows_all)), cat(pieces))
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input, head_output):
        head_logprob = log_softmax(head_output, 1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i, cluster in enumerate(self.tail):
            parts.append(log_softmax(cluster(input), 1)
                         + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def log_prob(self, input):
        """Log-probabilities of all ``n_classes`` classes, ``(N, n_classes)`` (or unbatched)."""
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        out = self._full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input):
        """The most likely class of each row, ``(N,)`` int64: ``log_prob(input).argmax(1)``, with
        the tail clusters evaluated only for rows whose head prediction is a cluster."""
        head_output = self.head(input)
        output = head_output.argmax(1)
        outside = output._array >= self.shortlist_size
        if not outside.any():
            return output
        if outside.all():
            return self._full_log_prob(input, head_output).argmax(1)
        rows = Tensor._make(np.nonzero(outside)[0])
        best = self._full_log_prob(input[rows], head_output[rows]).argmax(1)
        return output.index_copy(0, rows, best)


def _check_shapes(input, target) -> None:
    if target.ndim == 1:
        if input.shape[0] != target.shape[0]:
            raise RuntimeError("Input and target should have the same size in the batch "
                               "dimension.")
        if input.ndim != 2:
            raise RuntimeError("1D target tensor expects 2D input tensors, but found inputs with "
                               f"size {input.shape}")
    elif target.ndim == 0:
        if input.ndim != 1:
            raise RuntimeError("0D target tensor expects 1D input tensors, but found inputs with "
                               f"size {input.shape}")
    else:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
