"""``torch.special``: special functions, elementwise, differentiable where PyTorch's are.

Re-exports only (NOTE: the kernels are scipy.special's, ops/_scipy_kernel.py): the gamma family
(ops/gamma_ops.py), Bessel functions (ops/bessel_ops.py, and _nondiff.py for those PyTorch does not
differentiate), the normal distribution's functions (ops/ndtr_ops.py), and PyTorch's aliases of
top-level ops (``expit`` is ``sigmoid``, ``psi`` is ``digamma``, ``gammaln`` is ``lgamma``).
"""

from __future__ import annotations

from ..ops.bessel_ops import i0, i0e, i1, i1e  # noqa: F401
from ..ops.elementwise import erf, expm1, log1p, round  # noqa: F401,A004
from ..ops.elementwise import sigmoid as expit  # noqa: F401
from ..ops.gamma_ops import digamma, polygamma, zeta  # noqa: F401
from ..ops.gamma_ops import digamma as psi  # noqa: F401
from ..ops.gamma_ops import gammainc, gammaincc  # noqa: F401
from ..ops.gamma_ops import lgamma as gammaln  # noqa: F401
from ..ops.gamma_ops import mvlgamma as _mvlgamma
from ..ops.ndtr_ops import erfcx, log_ndtr, ndtr, ndtri  # noqa: F401
from ..ops.special_misc import entr, exp2, sinc, xlog1py  # noqa: F401
from ..ops.special_ops import erfc, erfinv, logit, xlogy  # noqa: F401
from ..tensor import Tensor  # noqa: F401
from ._docs import common_args, multi_dim_common  # noqa: F401
from ._reductions import log_softmax, logsumexp, softmax  # noqa: F401

def multigammaln(input, p, *, out=None):
    """The multivariate log-gamma function of dimension ``p`` (``torch.special.multigammaln``,
    the same as ``torch.mvlgamma``)."""
    return _mvlgamma(input, p, out=out)

from .. import _arg_check  # noqa: E402

_arg_check.install(globals())
