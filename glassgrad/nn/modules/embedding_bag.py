"""``EmbeddingBag``: sums, means or maxima of bags of embedding rows (``torch.nn.EmbeddingBag``;
issue 16, lane embed)."""

from __future__ import annotations

from ... import dtypes
from ..._factories import empty
from .. import init
from .._functional_embedding_bag import embedding_bag
from ..module import Module
from ..parameter import Parameter
from .sparse import Embedding

__all__ = ["EmbeddingBag"]


class EmbeddingBag(Module):
    """``weight (num_embeddings, embedding_dim)`` ~ N(0, 1), reduced per bag by ``mode``
    (``'sum'``, ``'mean'``, ``'max'``) without building the ``(N, dim)`` rows' tensor in torch;
    here the rows are gathered, then reduced (``torch.nn.EmbeddingBag``).

    ``forward(input, offsets=None, per_sample_weights=None) -> (B, embedding_dim)``: ``input``
    ``(B, N)`` or 1-D with ``offsets`` (see ``F.embedding_bag``). The ``padding_idx`` row starts
    at zero, is left out of every bag and gets no gradient. AssertionError for a ``padding_idx``
    outside ``[-num_embeddings, num_embeddings)`` or a ``_weight`` of the wrong shape.

    Example::

        >>> bag = glassgrad.nn.EmbeddingBag(10, 3, mode="sum")
        >>> bag(glassgrad.tensor([1, 2, 4, 5, 4, 3]), glassgrad.tensor([0, 3])).shape
        glassgrad.Size([2, 3])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight=None, include_last_offset: bool = False,
                 padding_idx: int | None = None, device=None, dtype=None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if padding_idx is not None:
            if padding_idx > 0:
                if padding_idx >= num_embeddings:
                    raise AssertionError("padding_idx must be within num_embeddings")
            elif padding_idx < 0:
                if padding_idx < -num_embeddings:
                    raise AssertionError("padding_idx must be within num_embeddings")
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        if _weight is None:
            dt = dtype if dtype is not None else dtypes.get_default_dtype()
            self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dt))
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError(
                    "Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    # NOTE: torch's EmbeddingBag is no Embedding (isinstance says False); the row reset is shared
    _fill_padding_idx_with_zero = Embedding._fill_padding_idx_with_zero

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def forward(self, input, offsets=None, per_sample_weights=None):
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.mode, self.sparse,
                             per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, max_norm=None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        mode: str = "mean", sparse: bool = False,
                        include_last_offset: bool = False, padding_idx=None) -> EmbeddingBag:
        """An EmbeddingBag whose weight is ``embeddings (num, dim)``; frozen unless
        ``freeze=False`` (``torch.nn.EmbeddingBag.from_pretrained``)."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, _weight=embeddings, max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
