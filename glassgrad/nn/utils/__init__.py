"""``glassgrad.nn.utils``: gradient clipping and parameter/vector conversion (``torch.nn.utils``)."""

from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, get_total_norm  # noqa: F401
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401

try:  # the recurrent family's helpers (pack_padded_sequence, ...), once that file exists
    from . import rnn  # noqa: F401
except ModuleNotFoundError as _e:
    if _e.name != __name__ + ".rnn":
        raise

# issue 16, lane utils
from . import (  # noqa: F401, E402
    fusion,
    init,
    memory_format,
    parametrizations,
    parametrize,
    prune,
    stateless,
)
from .clip_grad import clip_grads_with_norm_  # noqa: F401, E402
from .fusion import (  # noqa: F401, E402
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from .init import skip_init  # noqa: F401, E402
from .memory_format import (  # noqa: F401, E402
    convert_conv2d_weight_memory_format,
    convert_conv3d_weight_memory_format,
)
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401, E402
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401, E402
