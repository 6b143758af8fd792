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
# issue 15, lane dist
from . import distributions  # noqa: E402
from .distributions._samplers import (_sample_dirichlet, _standard_gamma,  # noqa: E402,F401
                                      _standard_gamma_grad, binomial)

# issue 15, lane linalg
from . import linalg  # noqa: E402,F401
from ._linalg_top import (  # noqa: E402,F401
    addbmm, addmv, addmv_, addr, chain_matmul, cholesky, cholesky_inverse, cholesky_solve, det, dist, eig,
    frobenius_norm, inverse, logdet, lstsq, lu, lu_solve, matrix_power, matrix_rank,
    norm_except_dim, nuclear_norm, orgqr, pinverse, qr, slogdet, solve, svd, symeig,
    triangular_solve, vander,
)
from .linalg import matrix_exp  # noqa: E402,F401
from ._linalg_lowrank import lobpcg, pca_lowrank, svd_lowrank  # noqa: E402,F401
from .linalg._factor import geqrf, lu_unpack, ormqr  # noqa: E402,F401
from . import _tensor_methods_linalg  # noqa: E402,F401
# issue 15, lane cfft
from .dtypes import cdouble, cfloat, complex64, complex128  # noqa: E402,F401
from . import _tensor_methods_complex  # noqa: E402,F401
from . import fft  # noqa: E402,F401
from .ops import _complex_refusals  # noqa: E402,F401 - NOTE [Complex refusals]
from ._stft import istft, stft  # noqa: E402,F401
from ._windows import (  # noqa: E402,F401
    bartlett_window, blackman_window, hamming_window, hann_window, kaiser_window,
)
from .ops.complex_ops import (  # noqa: E402,F401
    angle, complex, conj, conj_physical, conj_physical_, imag, is_complex, is_conj, is_neg, polar,
    real, resolve_conj, resolve_neg, sgn, view_as_complex, view_as_complex_copy, view_as_real,
    view_as_real_copy,
)
# issue 15, lane special
from . import special  # noqa: E402,F401 - torch.special
from . import _tensor_methods_special  # noqa: E402,F401
from .ops.bessel_ops import i0  # noqa: E402,F401
from .ops.gamma_ops import digamma, igamma, igammac, lgamma, mvlgamma, polygamma  # noqa: E402,F401
from .ops.special_misc import exp2, sinc  # noqa: E402,F401
from .ops.binary_math import (  # noqa: E402,F401
    copysign, deg2rad, float_power, fmax, fmin, frexp, heaviside, hypot, ldexp, logaddexp,
    logaddexp2, nan_to_num, nextafter, positive, rad2deg,
)
from ._integer_math import gcd, lcm  # noqa: E402,F401
from ._tensor_methods_special import (  # noqa: E402,F401 - torch's top-level in-place forms
    deg2rad_, erfc_, exp2_, gcd_, i0_, lcm_, ldexp_, logit_, nan_to_num_, rad2deg_, sinc_, xlogy_,
)
# issue 15, lane agrad
from . import _arg_alias  # noqa: E402 - axis=/keepdims= as torch's aliases (NOTE [Alias code])
# issue 15, lane ops
from . import _tensor_methods_ops  # noqa: E402,F401 - the lane's Tensor methods
from ._ops_variants import COPY_FUNCTIONS as _COPIES, INPLACE_FUNCTIONS as _INPLACES  # noqa: E402
from ._ops_variants import detach  # noqa: E402,F401
from ._ops_construct import (  # noqa: E402,F401
    block_diag, broadcast_shapes, can_cast, cartesian_prod, combinations, diagflat, dsplit, fill,
    hsplit, is_same_size, is_signed, kron, meshgrid, nonzero_static, ravel, rsub,
    scalar_tensor, tril_indices, triu_indices, unravel_index, vsplit,
)
from ._dtype_info import finfo, iinfo  # noqa: E402,F401
from ._ops_scatter import (  # noqa: E402,F401
    diagonal_scatter, index_reduce, put, scatter_reduce, select_scatter, slice_scatter,
)
from ._ops_hist import bincount, histc, histogram, histogramdd  # noqa: E402,F401
from ._ops_numeric import (  # noqa: E402,F401
    cdist, corrcoef, cov, cumulative_trapezoid, gradient, pdist, renorm, trapezoid, trapz,
)
from ._ops_stats import (  # noqa: E402,F401
    cummax, cummin, median, mode, nanmean, nanmedian, nanquantile, quantile,
)
from ._ops_construct import range_ as range  # noqa: E402,F401,A004 - torch.range (deprecated)

globals().update(_INPLACES)
globals().update(_COPIES)
# issue 15, lane surface
from . import _tensor_methods_storage  # noqa: E402,F401 - stride(), storage, set_, resize_
from ._tensor_methods_storage import resize_as_  # noqa: E402,F401
from ._memory_format import (  # noqa: E402,F401
    channels_last, channels_last_3d, contiguous_format, legacy_contiguous_format, memory_format,
    preserve_format,
)
from ._storage import TypedStorage, UntypedStorage, is_storage  # noqa: E402,F401
from . import cpu, futures  # noqa: E402,F401
from .futures import _BaseFuture as Future, fork, wait  # noqa: E402,F401
from .amp import GradScaler  # noqa: E402,F401
from ._runtime_surface import (  # noqa: E402,F401
    AcceleratorError, FatalError, OutOfMemoryError, classproperty, compiled_with_cxx11_abi,
    get_autocast_cpu_dtype, get_autocast_gpu_dtype, get_autocast_ipu_dtype,
    get_autocast_xla_dtype, get_device, get_device_module, get_file_path, has_lapack, has_mkl, has_openmp,
    has_spectral, init_num_threads, is_autocast_cpu_enabled, is_autocast_ipu_enabled,
    is_autocast_xla_enabled, is_distributed, is_warn_always_enabled, set_anomaly_enabled,
    set_autocast_cpu_dtype, set_autocast_cpu_enabled, set_autocast_gpu_dtype,
    set_autocast_ipu_dtype, set_autocast_ipu_enabled, set_autocast_xla_dtype,
    set_autocast_xla_enabled, set_flush_denormal, set_warn_always,
)
from ._layout import jagged  # noqa: E402,F401
from .sparse._mm_family import dsmm, hsmm, hspmm, saddmm, smm, sspaddmm  # noqa: E402,F401
from ._jit_types import (  # noqa: E402,F401
    AnyType, AwaitType, BoolType, ClassType, ComplexType, DeviceObjType, DictType, FloatType,
    FutureType, IntType, ListType, NoneType, NumberType, OptionalType, RRefType, StreamObjType,
    StringType, TensorType, TupleType, Type, UnionType, unify_type_list,
)
from ._schema import Argument, FunctionSchema, parse_schema  # noqa: E402,F401
from ._interchange import asarray, from_dlpack, from_file, frombuffer, to_dlpack  # noqa: E402,F401
from .ops.strided import (  # noqa: E402,F401
    as_strided, as_strided_, as_strided_copy, as_strided_scatter, empty_permuted, empty_strided,
)
# issue 15, lane tnn
from ._nn_top import *  # noqa: E402,F401,F403 - torch's top-level nn functions
from ._nn_top import _attach_methods as _tnn_methods  # noqa: E402
from .func import vmap  # noqa: E402,F401
from ._control_flow import cond  # noqa: E402,F401

_tnn_methods(Tensor)
# issue 16, lane grid
from .nn._functional_grid import (  # noqa: E402,F401 - torch's integer-mode grid functions
    affine_grid_generator, grid_sampler, grid_sampler_2d, grid_sampler_3d,
)
from .nn._functional_extra import conv_tbc  # noqa: E402,F401
# issue 16, lane loss
from .nn._functional_rrelu import rrelu_top as rrelu, rrelu_top_ as rrelu_  # noqa: E402,F401
from .nn._functional_ctc import ctc_loss_top as ctc_loss  # noqa: E402,F401

# issue 16, lane embed
from ._rnn_top import (  # noqa: E402,F401 - torch.lstm etc. on flat weights
    gru, gru_cell, lstm, lstm_cell, rnn_relu, rnn_relu_cell, rnn_tanh, rnn_tanh_cell,
)
from ._nn_top_embed import embedding_bag, embedding_renorm_  # noqa: E402,F401
# issue 15, lane agrad
from . import _tensor_methods_agrad  # noqa: E402,F401 - del t.grad, t.data's rules
from ._while_loop import slice_inverse, while_loop  # noqa: E402,F401
from ._qparams import choose_qparams_optimized  # noqa: E402,F401
# issue 16, lane nnrest
from ._nn_top_stats import batch_norm_update_stats  # noqa: E402,F401

# issue 17, lane dist
from . import distributed  # noqa: E402,F401 - torch.distributed on MPI
from . import _arg_check  # noqa: E402 - non-Tensor arguments get PyTorch's TypeError

_arg_check.install(globals())
_arg_check.install(vars(nn.functional))
_arg_check.install_methods(Tensor)
_arg_alias.install(globals(), Tensor)

__version__ = version.__version__
from . import viz, viz_html  # noqa: E402,F401 - glassgrad.viz.make_dot after a plain import
