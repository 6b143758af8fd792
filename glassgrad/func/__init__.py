"""``glassgrad.func``: composable function transforms (``torch.func``).

``vmap`` vectorises a function over a batch dim; ``grad``, ``grad_and_value``, ``vjp``, ``jvp``,
``jacrev``, ``jacfwd`` and ``hessian`` differentiate functions; ``functional_call`` runs a module
with other parameters. They compose: ``vmap(grad(f))``, ``jacrev(jacrev(f))``, ``grad(grad(f))``.
"""

from ._forward import linearize  # noqa: F401
from .functional_call import functional_call, stack_module_state  # noqa: F401
from .transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp  # noqa: F401
from .vmap import vmap  # noqa: F401
