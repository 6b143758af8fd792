"""``torch.nn.modules.fold``: ``Fold`` and ``Unfold``, written in ``conv.py`` beside the
convolutions they share a window view with. Re-exports only."""

from .conv import Fold, Unfold  # noqa: F401
