"""``glassgrad.nn.functional``: stateless layer functions (``torch.nn.functional``). Re-exports.

Activations live in ``_functional_activation.py``, layers in ``_functional_layers.py``, losses in
``_functional_loss.py``; convolution and pooling in ``_functional_conv.py`` (their own family).
"""

from ..ops.elementwise import sigmoid, tanh  # noqa: F401
from ._functional_activation import *
from ._functional_activation import relu_, sigmoid_, tanh_  # noqa: F401
from ._functional_layers import *
from ._functional_dropout import *
from ._functional_alpha_dropout import *
from ._functional_loss import *
from ._functional_shuffle import *
from ._functional_unpool import *  # noqa: F403 - issue 15, lane tnn
from ._functional_loss_pairs import *  # noqa: F403 - issue 15, lane tnn

# NOTE: convolution and pooling functions (conv1d/2d, max_pool2d, ...) come from the conv family;
# the guard only tolerates that file not existing yet, never an error inside it.
try:
    from ._functional_conv import *
except ModuleNotFoundError as _e:
    if _e.name != __name__.rsplit(".", 1)[0] + "._functional_conv":
        raise

# issue 16, lane pool
from ._functional_pool_extra import *  # noqa: F403
from ._functional_fractional import *  # noqa: F403
from ._functional_norm import *  # noqa: F403
# issue 16, lane grid
from ._functional_grid import *  # noqa: F403
from ._functional_extra import *  # noqa: F403
from ._functional_names import *  # noqa: F403
# issue 16, lane loss
from ._functional_loss_margin import *  # noqa: F403
from ._functional_rrelu import *  # noqa: F403
from ._functional_ctc import *  # noqa: F403
from ._functional_linear_ce import *  # noqa: F403
# issue 16, lane embed
from ._functional_embedding_bag import embedding_bag  # noqa: E402,F401
# issue 16, lane nn
from . import grad  # noqa: E402,F401 - torch.nn.functional.grad is the torch.nn.grad module

_ATTENTION = ("scaled_dot_product_attention", "multi_head_attention_forward")


def __getattr__(name: str):
    # NOTE: the attention family defines these next to MultiheadAttention, which imports this
    # module; a lazy lookup avoids the import cycle.
    if name in _ATTENTION:
        from .modules import attention

        return getattr(attention, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
