"""``glassgrad.nn.modules``: every layer class (``torch.nn.modules``). Re-exports only."""

import importlib as _importlib
import sys as _sys

from .. import module  # torch.nn.modules.module, also in sys.modules below
from ..module import Module
from .activation import (  # noqa: F401
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from .container import (  # noqa: F401
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d  # noqa: F401
from .dropout import AlphaDropout, FeatureAlphaDropout  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401
from .linear import Bilinear, Identity, Linear  # noqa: F401
from .loss import (  # noqa: F401
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MarginRankingLoss,
    MSELoss,
    NLLLoss,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
)
from .normalization import (  # noqa: F401
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    LayerNorm,
    RMSNorm,
)
from .sparse import Embedding  # noqa: F401

# NOTE: the convolution/pooling and recurrent/attention families are written separately; each is
# picked up once its file exists. Only a missing file is tolerated, never an error inside one.
for _name in ("conv", "pooling", "rnn", "attention", "padding", "distance", "pixelshuffle",
              "channelshuffle"):
    try:
        _mod = _importlib.import_module(f"{__name__}.{_name}")
    except ModuleNotFoundError as _e:
        if _e.name != f"{__name__}.{_name}":
            raise
        continue
    _public = getattr(_mod, "__all__", None) or [
        n for n, v in vars(_mod).items()
        if isinstance(v, type) and issubclass(v, Module) and v.__module__ == _mod.__name__
        and not n.startswith("_")
    ]
    for _attr in _public:
        globals()[_attr] = getattr(_mod, _attr)
del _importlib

# NOTE: torch.nn.modules.<file> paths where glassgrad writes the classes in another file (programs
# name them, e.g. torch.nn.modules.batchnorm._BatchNorm, and checkpoints' allow-lists do);
# torch.nn.modules.module is glassgrad.nn.module itself.
from . import batchnorm, fold, instancenorm, upsampling, utils  # noqa: F401
from .transformer import (  # noqa: F401
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

# issue 16, lane module
from . import lazy  # noqa: F401 - torch.nn.modules.lazy
from .container import Container  # noqa: F401
from .instancenorm import InstanceNorm3d  # noqa: F401
from .lazy_layers import (  # noqa: F401
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
    LazyLinear,
)
from .sync_batchnorm import SyncBatchNorm  # noqa: F401

# NOTE: torch.nn.modules.<file> paths of the lazy classes (programs and allow-lists name them)
for _file, _names in {"linear": ("LazyLinear",), "batchnorm": ("LazyBatchNorm1d",
                      "LazyBatchNorm2d", "LazyBatchNorm3d", "SyncBatchNorm"),
                      "instancenorm": ("LazyInstanceNorm1d", "LazyInstanceNorm2d",
                                       "LazyInstanceNorm3d"),
                      "conv": ("LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
                               "LazyConvTranspose2d", "LazyConvTranspose3d")}.items():
    for _name in _names:
        setattr(_sys.modules[f"{__name__}.{_file}"], _name, globals()[_name])
# issue 16, lane pool
from .pooling_extra import (  # noqa: F401
    AdaptiveMaxPool3d,
    FractionalMaxPool2d,
    FractionalMaxPool3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
)
from .activation import Softmax2d  # noqa: F401
from .lrn import CrossMapLRN2d, LocalResponseNorm  # noqa: F401
from .normalization import InstanceNorm3d  # noqa: F401
# issue 16, lane loss
from .activation_rrelu import RReLU  # noqa: F401
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: F401
from . import linear_cross_entropy_options  # noqa: F401
from .linear_cross_entropy import LinearCrossEntropyLoss, LinearCrossEntropyOptions  # noqa: F401
from .loss_margin import (  # noqa: F401
    CosineEmbeddingLoss,
    CTCLoss,
    GaussianNLLLoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    NLLLoss2d,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from . import activation as _activation, loss as _loss, loss_margin as _loss_margin

# NOTE: torch.nn.modules.loss.CTCLoss, .activation.RReLU: the paths torch has, to the same classes
_activation.RReLU = RReLU
_loss.LinearCrossEntropyLoss = LinearCrossEntropyLoss
for _attr in _loss_margin.__all__:
    setattr(_loss, _attr, getattr(_loss_margin, _attr))
del _activation, _loss, _loss_margin
# issue 16, lane embed
from .embedding_bag import EmbeddingBag  # noqa: E402,F401
sparse.EmbeddingBag = EmbeddingBag  # torch's path: torch.nn.modules.sparse.EmbeddingBag

_sys.modules[f"{__name__}.module"] = module
del _sys

# the layer classes only: a star import must not bind this package's `utils` over nn.utils
__all__ = [n for n, v in globals().items() if isinstance(v, type) and not n.startswith("_")]
