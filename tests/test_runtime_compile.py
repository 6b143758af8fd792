"""torch.compile, torch.compiler and torch._dynamo on both libraries: glassgrad runs the model
eagerly (the same numbers), returns what torch returns (an OptimizedModule with _orig_mod for a
module), checks the arguments as torch does and warns once."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad import _compile
from tests.oracle import copy_params
from tests.runtime_probe import same_outcome


@pytest.mark.parametrize("expr", [
    "t.compile(3)", "t.compile(3, mode='bogus')", "t.compile(3, backend='bogus')",
    "t.compile(m, mode='bogus')", "t.compile(m, backend='bogus')",
    "t.compile(m, mode='max-autotune', options={})", "type(t.compile(m)).__name__",
    "list(t.compile(m).state_dict())", "t.compile(m)._orig_mod is m",
    "t.compile(m).weight is m.weight", "t.compile(m).in_features",
    "t.compile(m, disable=True) is m", "callable(t.compile(mode='bogus'))",
    "t.compile(m, backend='eager').training", "t.compile(m, mode='reduce-overhead').out_features",
    "t.compile(m, backend=lambda gm, example: gm).in_features",
    "t.compile(lambda x: x + 1).__name__",
    "t.compile(m, fullgraph=True, dynamic=False).bias is m.bias", "repr(t.compile(m))",
    "t.compiler.is_compiling()", "t.compiler.is_dynamo_compiling()", "t.compiler.is_exporting()",
    "t.compiler.reset()", "t.compiler.disable(len)([1])", "t.compiler.disable()(len)([1, 2])",
    "t.compiler.allow_in_graph(len) is len", "t.compiler.assume_constant_result(fn) is fn",
    "t.compiler.cudagraph_mark_step_begin()", "t.compiler.list_backends()",
    "t._dynamo.is_compiling()", "t._dynamo.reset()", "t._dynamo.disable(len)([1])",
    "t._dynamo.allow_in_graph(len) is len", "t._dynamo.list_backends()",
    "[n for n in t._dynamo.list_backends(exclude_tags=()) if 'TESTING_ONLY' not in n]",
    "t._dynamo.mark_dynamic(t.zeros(2, 3), 0)", "t._dynamo.config.suppress_errors",
    "t._dynamo.config.cache_size_limit", "t._dynamo.config.no_such_option",
    "issubclass(t._dynamo.exc.InvalidBackend, RuntimeError)",
])
def test_compile_api_answers_as_torch(expr):
    def fn(x):
        return x

    same_outcome(lambda t: eval(expr, {"t": t, "m": t.nn.Linear(2, 3), "fn": fn}))


def test_dynamo_config_keeps_values():
    def probe(t):
        saved = t._dynamo.config.suppress_errors
        t._dynamo.config.suppress_errors = True
        try:
            return t._dynamo.config.suppress_errors
        finally:
            t._dynamo.config.suppress_errors = saved

    same_outcome(probe)


def test_compiled_model_trains_like_the_eager_one():
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    ours = glassgrad.nn.Sequential(glassgrad.nn.Linear(3, 4), glassgrad.nn.ReLU(),
                                   glassgrad.nn.Linear(4, 1))
    copy_params(theirs, ours)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = glassgrad.compile(ours)
    x = np.random.default_rng(1).standard_normal((6, 3)).astype(np.float32)
    opt_t = torch.optim.Adam(theirs.parameters(), lr=0.01)
    opt_o = glassgrad.optim.Adam(compiled.parameters(), lr=0.01)
    for _ in range(3):
        loss_t = theirs(torch.tensor(x)).square().mean()
        loss_o = compiled(glassgrad.tensor(x)).square().mean()
        opt_t.zero_grad(), opt_o.zero_grad()
        loss_t.backward(), loss_o.backward()
        opt_t.step(), opt_o.step()
        np.testing.assert_allclose(loss_o.item(), loss_t.item(), rtol=1e-5)
    stripped = {k.removeprefix("_orig_mod."): v for k, v in compiled.state_dict().items()}
    assert list(stripped) == list(theirs.state_dict())
    compiled.eval()
    assert ours.training is False


def test_compile_as_decorator_with_and_without_arguments():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @glassgrad.compile
        def double(x):
            return x * 2

        @glassgrad.compile(mode="max-autotune", fullgraph=True)
        def triple(x):
            return x * 3

    assert double(glassgrad.ones(2)).tolist() == [2.0, 2.0] and double.__name__ == "double"
    assert triple(glassgrad.ones(1)).tolist() == [3.0]


def test_compile_warns_once(monkeypatch):
    monkeypatch.setattr(_compile, "_warned", [False])
    with pytest.warns(UserWarning, match="glassgrad has no compiler, so the model runs eagerly"):
        glassgrad.compile(glassgrad.nn.Linear(1, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        glassgrad.compile(lambda x: x)


def test_compiled_module_deepcopies():
    """Programs keep an EMA or best copy with copy.deepcopy(model) after compiling it."""
    import copy

    def probe(t):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compiled = t.compile(t.nn.Linear(2, 3))
        twin = copy.deepcopy(compiled)
        return type(twin).__name__, twin.in_features, twin.weight is not compiled.weight

    same_outcome(probe)
