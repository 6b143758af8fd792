"""``glassgrad.utils.tensorboard`` (``torch.utils.tensorboard``): ``SummaryWriter`` writes real
TensorBoard event files through the tensorboardX package (the optional extra ``tensorboard``).

Importing this module without tensorboardX raises ImportError naming the extra, as
``torch.utils.tensorboard`` raises ImportError without the tensorboard package.
"""

try:
    import tensorboardX  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised with tensorboardX hidden
    raise ImportError(
        "glassgrad.utils.tensorboard needs the tensorboardX package: pip install "
        "glassgrad[tensorboard] (or pip install tensorboardX)"
    ) from exc

from .writer import SummaryWriter  # noqa: E402,F401
