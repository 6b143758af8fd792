"""glassgrad: define-by-run autograd on NumPy with PyTorch's API and a glass-box graph.

``import glassgrad as torch`` runs PyTorch autograd code. This module only re-exports.
"""

from . import dtypes  # noqa: F401
from .tensor import Tensor, Size  # noqa: F401
from .ops import primitive as _primitive

_primitive.Tensor = Tensor

from . import _tensor_methods  # noqa: E402,F401
from .dtypes import (  # noqa: E402,F401
    bfloat16, bool, double, dtype, float, float16, float32, float64, get_default_dtype, half,
    int, int8, int16, int32, int64, long, promote_types, result_type, set_default_dtype, short,
    uint8,
)
from .backend import device  # noqa: E402,F401
from ._factories import (  # noqa: E402,F401
    Generator, arange, as_tensor, bernoulli, default_generator, empty, empty_like, eye,
    from_numpy, full, full_like, get_rng_state, initial_seed, linspace, logspace, manual_seed,
    multinomial, normal, ones, ones_like, rand, rand_like, randint, randint_like, randn,
    randn_like, randperm, seed, set_rng_state, tensor, zeros, zeros_like,
)
from .autograd.grad_mode import (  # noqa: E402,F401
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled,
)
from .ops.elementwise import (  # noqa: E402,F401
    abs, absolute, acos, add, addcdiv, addcmul, arccos, arcsin, arctan, arctan2, asin, atan,
    atan2, ceil, clamp, clamp_max, clamp_min, clip, clone, cos, cosh, div, divide, erf, exp, expm1,
    fix, floor, floor_divide, fmod, frac, lerp, log, log1p, log2, log10, maximum, minimum, mul,
    multiply, neg, negative, pow, reciprocal, relu, remainder, round, rsqrt, sigmoid, sign, sin,
    sinh, sqrt, square, sub, subtract, tan, tanh, true_divide, trunc, where,
)
from .ops.special_ops import (  # noqa: E402,F401
    acosh, arccosh, arcsinh, arctanh, asinh, atanh, erfc, erfinv, logit, xlogy,
)
from .ops.reduction import (  # noqa: E402,F401
    all, amax, amin, any, argmax, argmin, cumprod, cumsum, logsumexp, max, mean, min, nansum,
    norm, prod, std, std_mean, sum, var, var_mean,
)
from .ops.shape import (  # noqa: E402,F401
    broadcast_to, cat, chunk, concat, concatenate, flatten, flip, fliplr, flipud,
    hstack, movedim, moveaxis, narrow, permute, reshape, roll, split,
    squeeze, stack, swapaxes, swapdims, t, tile, transpose, unbind, unflatten, unsqueeze, vstack,
    split_with_sizes, unsafe_chunk, unsafe_split, unsafe_split_with_sizes,
)
from .ops.indexing import (  # noqa: E402,F401
    gather, index_add, index_put, index_select, masked_fill, masked_select, nonzero, scatter,
    scatter_add, select, take,
)
from .ops.linalg import bmm, dot, ger, inner, matmul, mm, mv, outer, vdot  # noqa: E402,F401
from .ops.reduction import aminmax, logcumsumexp  # noqa: E402,F401
from .ops.shape import (  # noqa: E402,F401
    adjoint, atleast_1d, atleast_2d, atleast_3d, broadcast_tensors, column_stack, diag,
    diag_embed, diagonal, diff, dstack, repeat_interleave, rot90, row_stack, tensor_split, tril,
    triu,
)
from .ops.linalg import addmm, baddbmm, cross, einsum, tensordot, trace  # noqa: E402,F401
from .ops.indexing import (  # noqa: E402,F401
    argwhere, index_copy, index_fill, masked_scatter, take_along_dim,
)
from .comparison import (  # noqa: E402,F401
    bucketize, count_nonzero, isin, isreal, kthvalue, msort, searchsorted, signbit,
    unique_consecutive,
)
from .comparison import (  # noqa: E402,F401
    allclose, argsort, bitwise_and, bitwise_left_shift, bitwise_not, bitwise_or,
    bitwise_right_shift, bitwise_xor, eq, equal, ge, greater,
    greater_equal, gt, isclose, isfinite, isinf, isnan, isneginf, isposinf, le, less, less_equal,
    logical_and, logical_not, logical_or, logical_xor, lt, ne, not_equal, sort, topk, unique,
)
from . import autograd  # noqa: E402,F401
from .autograd.anomaly import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: E402,F401
from .functional import log_softmax, softmax  # noqa: E402,F401
from . import nn  # noqa: E402,F401
from .nn.functional import cosine_similarity, pairwise_distance  # noqa: E402,F401
from .nn._functional_conv import (  # noqa: E402,F401 - torch.conv2d etc. exist at top level
    adaptive_avg_pool1d, adaptive_max_pool1d, avg_pool1d, conv1d, conv2d, conv3d,
    conv_transpose1d, conv_transpose2d, conv_transpose3d, max_pool1d, max_pool1d_with_indices,
    max_pool2d, max_pool3d,
)
from . import utils  # noqa: E402,F401
from .serialization import load, save  # noqa: E402,F401
from . import optim  # noqa: E402,F401
from . import func  # noqa: E402,F401
from . import memory  # noqa: E402,F401
from .memory import (  # noqa: E402,F401 - glassgrad's CPU counters; torch has them under cuda
    max_memory_allocated, memory_allocated, memory_stats, memory_summary, reset_peak_memory_stats,
)
from . import amp, cuda  # noqa: E402,F401
from .amp.autocast import (  # noqa: E402,F401
    autocast, autocast_decrement_nesting, autocast_increment_nesting, clear_autocast_cache,
    get_autocast_dtype, is_autocast_cache_enabled, is_autocast_enabled,
    set_autocast_cache_enabled, set_autocast_dtype, set_autocast_enabled,
)


def is_tensor(obj) -> bool:
    """True for glassgrad Tensors (``torch.is_tensor``)."""
    return isinstance(obj, Tensor)


def is_floating_point(input) -> bool:
    return input.is_floating_point()


def numel(input) -> int:
    return input.numel()


# issue 14, lane rng
from . import random  # noqa: E402,F401 - torch.random: fork_rng, seeds, state
# issue 14, lane runtime
from . import accelerator, backends, mps, xpu  # noqa: E402,F401
from . import _dynamo, compiler  # noqa: E402,F401
from ._compile import compile  # noqa: E402,F401,A004 - torch.compile
from ._repr import set_printoptions  # noqa: E402,F401
from ._runtime import (  # noqa: E402,F401
    are_deterministic_algorithms_enabled, get_default_device, get_deterministic_debug_mode,
    get_float32_matmul_precision, get_num_interop_threads, get_num_threads, is_inference,
    is_deterministic_algorithms_warn_only_enabled, set_default_device,
    set_deterministic_debug_mode, set_float32_matmul_precision, set_num_interop_threads,
    set_num_threads, typename, use_deterministic_algorithms,
)
from ._legacy import (  # noqa: E402,F401
    BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor,
    IntTensor, LongTensor, ShortTensor,
)
from math import e, inf, nan, pi  # noqa: E402,F401 - torch.pi etc. are Python floats
newaxis = None
# issue 14, lane onnx
from . import onnx  # noqa: E402, F401 - torch.onnx.export
# issue 14, lane xformer
from .nn._functional_shuffle import (  # noqa: E402,F401 - torch.pixel_shuffle etc.
    channel_shuffle,
    native_channel_shuffle,
    pixel_shuffle,
    pixel_unshuffle,
)
# issue 14, lane optsparse
from ._layout import layout, sparse_coo, strided  # noqa: E402,F401
from . import sparse  # noqa: E402,F401
from .sparse import sparse_coo_tensor  # noqa: E402,F401
from .sparse import mm as spmm  # noqa: E402,F401

from ._factories import poisson  # noqa: E402,F401
# issue 14, review (lane newuser): names old programs probe
from . import version  # noqa: E402,F401 - torch.version.cuda is None on a CPU-only build
from ._legacy import set_default_tensor_type  # noqa: E402,F401
# issue 15, lane agrad
from . import _arg_alias  # noqa: E402 - axis=/keepdims= as torch's aliases (NOTE [Alias code])
from . import _arg_check  # noqa: E402 - non-Tensor arguments get PyTorch's TypeError

_arg_check.install(globals())
_arg_check.install(vars(nn.functional))
_arg_check.install_methods(Tensor)
_arg_alias.install(globals(), Tensor)

__version__ = version.__version__
from . import viz, viz_html  # noqa: E402,F401 - glassgrad.viz.make_dot after a plain import
