"""``torch.distributions.transforms``: every transform in one namespace."""

from ._transform_base import (CatTransform, ComposeTransform, CumulativeDistributionTransform,
                              IndependentTransform, ReshapeTransform, StackTransform, Transform,
                              _InverseTransform, identity_transform)
from ._transform_maps import (AbsTransform, AffineTransform, CorrCholeskyTransform, ExpTransform,
                              LowerCholeskyTransform, PositiveDefiniteTransform, PowerTransform,
                              SigmoidTransform, SoftmaxTransform, SoftplusTransform,
                              StickBreakingTransform, TanhTransform)

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform",
           "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform",
           "Transform", "identity_transform", "_InverseTransform"]
