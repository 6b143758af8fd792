"""The ``differentiable=True`` updates: every optimizer's step written in glassgrad Tensor ops, so
the update is recorded in the graph and a meta-gradient flows from the parameters after ``step()``
back to the parameters, gradients and state before it and to Tensor hyperparameters.

NOTE [Differentiable updates]: these follow PyTorch's for-loop ("single tensor") kernels with
``differentiable=True`` op for op, in place on the parameters and state as PyTorch's are, so the
meta-gradients are PyTorch's: where PyTorch detaches (SGD's first momentum buffer is
``grad.detach().clone()``; ASGD reads ``eta`` with ``item()``) the gradient stops here too, and
where PyTorch saves a buffer that a later step changes in place, backward through both steps raises
PyTorch's "modified by an inplace operation" error here as well. The clones below are the ones
that keep a saved tensor from being overwritten within a step. The array kernels in each
optimizer's file stay the fast path; a group with ``differentiable=False`` costs one flag test.
"""

from __future__ import annotations

from .. import _factories
from ..ops.shape import cat
from ..tensor import Tensor
from .optimizer import _step_tensor, _zeros_like

__all__: list[str] = []


def _hp(x):
    """A hyperparameter as PyTorch's ``_to_scalar`` leaves it: a Number, or a 0-d Tensor."""
    return x.squeeze() if isinstance(x, Tensor) and x.dim() != 0 else x


def _add_scaled_(x: Tensor, y: Tensor, a) -> Tensor:
    """``x += a * y`` in place; a Tensor ``a`` is recorded (PyTorch's ``addcmul_(y, a)`` form)."""
    if isinstance(a, Tensor):
        return x.addcmul_(y, a)
    return x.add_(y, alpha=a)


def _addcdiv_scaled_(x: Tensor, y: Tensor, z: Tensor, a) -> Tensor:
    """``x += a * y / z`` in place, ``a`` a Number or a recorded 0-d Tensor."""
    if isinstance(a, Tensor):
        return x.add_(y / z * a)
    return x.addcdiv_(y, z, value=a)


def _lerp_(x: Tensor, end: Tensor, weight) -> Tensor:
    """``x.lerp_(end, weight)``; with a Tensor ``weight`` the lerp runs on a clone of ``x``.

    NOTE: Tensor.lerp_ saves ``x`` itself when only its arguments require grad, then overwrites
    it, so backward would raise the in-place error; lerp's gradient needs the old ``x``."""
    if isinstance(weight, Tensor):
        return x.copy_(x.clone().lerp(end, weight))
    return x.lerp_(end, weight)


def _with_weight_decay(grad: Tensor, p: Tensor, weight_decay) -> Tensor:
    """``grad + weight_decay * p``; a Tensor ``weight_decay`` multiplies a clone of ``p``, which
    the update then changes in place."""
    if isinstance(weight_decay, Tensor):
        return grad.addcmul(p.clone(), weight_decay)
    return grad.add(p, alpha=weight_decay)


def _decayed(grad: Tensor, p: Tensor, lr, weight_decay, decoupled: bool) -> Tensor:
    """Weight decay of Adam, NAdam, RAdam: decoupled, ``p`` shrinks by ``1 - lr * weight_decay``
    in place and ``grad`` is returned as is; else ``grad + weight_decay * p``."""
    if weight_decay == 0:
        return grad
    if decoupled:
        p.mul_(1 - lr * weight_decay)
        return grad
    return _with_weight_decay(grad, p, weight_decay)


def _moments_(exp_avg: Tensor, exp_avg_sq: Tensor, grad: Tensor, beta1, beta2) -> None:
    """Adam's moments in place; a Tensor ``beta2`` takes PyTorch's ``lerp_(grad**2)`` form."""
    _lerp_(exp_avg, grad, 1 - beta1)
    if isinstance(beta2, Tensor):
        _lerp_(exp_avg_sq, grad.square(), 1 - beta2)
    else:
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)


def _params_with_grad(opt, group, name: str):
    """``(p, grad, state)`` for every parameter of ``group`` with a gradient, the gradient negated
    under ``maximize``; RuntimeError for a sparse one, as PyTorch."""
    for p in group["params"]:
        grad = p._grad
        if grad is None:
            continue
        if grad.is_sparse:
            raise RuntimeError(f"{name} does not support sparse gradients")
        yield p, (-grad if group["maximize"] else grad), opt.state[p]


def _init(state: dict, **buffers) -> dict:
    """Fill an empty per-parameter state: ``step`` first, then ``buffers`` (callables) in order."""
    if len(state) == 0:
        state["step"] = _step_tensor()
        for key, make in buffers.items():
            state[key] = make()
    return state


def _check_foreach(group) -> None:
    if group["foreach"]:
        raise AssertionError(
            "_foreach ops don't support autograd\nglassgrad: differentiable=True runs the "
            "for-loop update; leave foreach as None or False."
        )


def _check_step(state: dict) -> None:
    if state["step"].requires_grad:
        raise RuntimeError("`requires_grad` is not supported for `step` in differentiable mode")


def sgd(opt, group) -> None:
    lr, weight_decay, momentum = _hp(group["lr"]), group["weight_decay"], group["momentum"]
    dampening, nesterov = group["dampening"], group["nesterov"]
    for p, grad, state in _params_with_grad(opt, group, "SGD"):
        if weight_decay != 0:
            grad = _with_weight_decay(grad, p, weight_decay)
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = grad.detach().clone()
                state["momentum_buffer"] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = _add_scaled_(grad.clone(), buf, momentum) if nesterov else buf
        _add_scaled_(p, grad, -lr)


def adam(opt, group) -> None:
    _check_foreach(group)
    lr, eps, amsgrad = _hp(group["lr"]), group["eps"], group["amsgrad"]
    beta1, beta2 = (_hp(b) for b in group["betas"])
    weight_decay = group["weight_decay"]
    for p, grad, state in _params_with_grad(opt, group, "Adam"):
        extra = {"max_exp_avg_sq": lambda: _zeros_like(p)} if amsgrad else {}
        _init(state, exp_avg=lambda: _zeros_like(p), exp_avg_sq=lambda: _zeros_like(p), **extra)
        _check_step(state)
        step_t, exp_avg, exp_avg_sq = state["step"], state["exp_avg"], state["exp_avg_sq"]
        step_t.add_(1)
        grad = _decayed(grad, p, lr, weight_decay, group["decoupled_weight_decay"])
        _moments_(exp_avg, exp_avg_sq, grad, beta1, beta2)
        bias_correction1 = 1 - beta1 ** step_t.clone()
        bias_correction2 = 1 - beta2 ** step_t.clone()
        step_size_neg = -(lr / bias_correction1)
        scale = bias_correction2.sqrt() * step_size_neg
        if amsgrad:
            max_exp_avg_sq = state["max_exp_avg_sq"]
            max_exp_avg_sq.copy_(max_exp_avg_sq.clone().maximum(exp_avg_sq))
            exp_avg_sq = max_exp_avg_sq
        denom = (exp_avg_sq.sqrt() / scale).add_(eps / step_size_neg)
        p.addcdiv_(exp_avg.clone(), denom)


def adagrad(opt, group) -> None:
    _check_foreach(group)
    lr, weight_decay, lr_decay, eps = _hp(group["lr"]), group["weight_decay"], \
        group["lr_decay"], group["eps"]
    for p, grad, state in _params_with_grad(opt, group, "Adagrad"):
        step_t, state_sum = state["step"], state["sum"]
        step = step_t.add_(1).item()
        if weight_decay != 0:
            grad = _with_weight_decay(grad, p, weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        state_sum.addcmul_(grad, grad, value=1)
        _addcdiv_scaled_(p, grad, state_sum.sqrt() + eps, -clr)


def rmsprop(opt, group) -> None:
    _check_foreach(group)
    lr, alpha, eps = _hp(group["lr"]), group["alpha"], group["eps"]
    weight_decay, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
    for p, grad, state in _params_with_grad(opt, group, "RMSprop"):
        extra = {"momentum_buffer": lambda: _zeros_like(p)} if momentum > 0 else {}
        if centered:
            extra["grad_avg"] = lambda: _zeros_like(p)
        _init(state, square_avg=lambda: _zeros_like(p), **extra)
        square_avg = state["square_avg"]
        state["step"].add_(1)
        if weight_decay != 0:
            grad = _with_weight_decay(grad, p, weight_decay)
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if centered:
            grad_avg = state["grad_avg"]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add(eps)
        if momentum > 0:
            buf = state["momentum_buffer"]
            buf.mul_(momentum).addcdiv_(grad, avg)
            _add_scaled_(p, buf, -lr)
        else:
            _addcdiv_scaled_(p, grad, avg, -lr)


def adadelta(opt, group) -> None:
    _check_foreach(group)
    lr, rho, eps, weight_decay = _hp(group["lr"]), group["rho"], group["eps"], \
        group["weight_decay"]
    for p, grad, state in _params_with_grad(opt, group, "Adadelta"):
        _init(state, square_avg=lambda: _zeros_like(p), acc_delta=lambda: _zeros_like(p))
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        state["step"].add_(1)
        if weight_decay != 0:
            grad = _with_weight_decay(grad, p, weight_decay)
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_().clone()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        _add_scaled_(p, delta, -lr)


def adamax(opt, group) -> None:
    _check_foreach(group)
    lr, eps, weight_decay = _hp(group["lr"]), group["eps"], group["weight_decay"]
    beta1, beta2 = group["betas"]
    for p, grad, state in _params_with_grad(opt, group, "Adamax"):
        _init(state, exp_avg=lambda: _zeros_like(p), exp_inf=lambda: _zeros_like(p))
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        step = state["step"].add_(1).item()
        if weight_decay != 0:
            grad = _with_weight_decay(grad, p, weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        # NOTE: amax over a stacked pair, not maximum(out=): PyTorch's differentiable form, which
        # splits the gradient evenly between ties
        norm_buf = cat([exp_inf.mul_(beta2).unsqueeze(0), grad.abs().add_(eps).unsqueeze(0)], 0)
        exp_inf.copy_(norm_buf.amax(0))
        _addcdiv_scaled_(p, exp_avg, exp_inf, -lr / (1 - beta1**step))


def nadam(opt, group) -> None:
    _check_foreach(group)
    lr, eps, weight_decay = _hp(group["lr"]), group["eps"], group["weight_decay"]
    beta1, beta2 = group["betas"]
    momentum_decay = group["momentum_decay"]
    for p, grad, state in _params_with_grad(opt, group, "NAdam"):
        _init(state, mu_product=lambda: _step_tensor(1.0), exp_avg=lambda: _zeros_like(p),
              exp_avg_sq=lambda: _zeros_like(p))
        mu_product, exp_avg, exp_avg_sq = state["mu_product"], state["exp_avg"], state["exp_avg_sq"]
        step = state["step"].add_(1).item()
        bias_correction2 = 1 - beta2**step
        grad = _decayed(grad, p, lr, weight_decay, group["decoupled_weight_decay"])
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product.mul_(mu)
        _moments_(exp_avg, exp_avg_sq, grad, beta1, beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt().add(eps)
        mu_product_next = mu_product * mu_next
        p.addcdiv_(grad * (-lr * (1.0 - mu) / (1.0 - mu_product)), denom)
        p.addcdiv_(exp_avg * (-lr * mu_next / (1.0 - mu_product_next)), denom)


def radam(opt, group) -> None:
    _check_foreach(group)
    lr, eps, weight_decay = _hp(group["lr"]), group["eps"], group["weight_decay"]
    beta1, beta2 = group["betas"]
    for p, grad, state in _params_with_grad(opt, group, "RAdam"):
        _init(state, exp_avg=lambda: _zeros_like(p), exp_avg_sq=lambda: _zeros_like(p))
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        step = state["step"].add_(1).item()
        grad = _decayed(grad, p, lr, weight_decay, group["decoupled_weight_decay"])
        _moments_(exp_avg, exp_avg_sq, grad, beta1, beta2)
        bias_correction2 = 1 - beta2**step
        update = exp_avg / (1 - beta1**step) * lr
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            update = update * ((bias_correction2**0.5) / exp_avg_sq.sqrt().add(eps)) * rect
        p.add_(update, alpha=-1.0)


def asgd(opt, group) -> None:
    _check_foreach(group)
    lr, lambd, alpha, t0 = _hp(group["lr"]), group["lambd"], group["alpha"], group["t0"]
    weight_decay = group["weight_decay"]
    for p, grad, state in _params_with_grad(opt, group, "ASGD"):
        _init(state, eta=lambda: _step_tensor(float(lr)), mu=lambda: _step_tensor(1.0),
              ax=lambda: _zeros_like(p))
        eta, mu, ax = state["eta"], state["mu"], state["ax"]
        step = state["step"].add_(1).item()
        if weight_decay != 0:
            grad = _with_weight_decay(grad, p, weight_decay)
        eta_value = eta.item()
        p.mul_(1 - lambd * eta_value)
        p.add_(grad, alpha=-eta_value)
        if mu.item() != 1:
            ax.add_(p.sub(ax).mul_(mu))
        else:
            ax.copy_(p)
        eta.copy_(_factories.as_tensor(lr / ((1 + lambd * lr * step) ** alpha), dtype=eta.dtype))
        mu.copy_(_factories.as_tensor(1 / max(1, step - t0), dtype=mu.dtype))


def rprop(opt, group) -> None:
    _check_foreach(group)
    etaminus, etaplus = group["etas"]
    step_size_min, step_size_max = group["step_sizes"]
    for p, grad, state in _params_with_grad(opt, group, "Rprop"):
        _init(state, prev=lambda: _zeros_like(p),
              step_size=lambda: _factories.full_like(grad, float(group["lr"])).detach())
        prev, step_size = state["prev"], state["step_size"]
        state["step"].add_(1)
        sign = grad.mul(prev.clone()).sign()
        sign[sign.gt(0)] = etaplus
        sign[sign.lt(0)] = etaminus
        sign[sign.eq(0)] = 1
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)
        grad = grad.clone()
        grad[sign.eq(etaminus)] = 0
        p.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
