"""Every warning glassgrad gives names the user's line (NOTE [User's line] in
glassgrad/_user_warning.py): for the same user code, glassgrad warns with torch's category and
``w.filename`` is the user's file, however deep in glassgrad the warning is raised (a public
function wrapped by _arg_check, a module's forward, a deprecated alias, the engine); a script's
warning prints the text of its own line."""

from __future__ import annotations

import builtins
import subprocess
import sys
import warnings

import pytest
import torch

import glassgrad

SNIPS = {  # name -> user code on `m` (the library) that warns in torch
 "nonleaf_grad": "x = m.ones(2, requires_grad=True); y = x * 2; y.grad",
 "softmax_nodim": "m.nn.functional.softmax(m.ones(2, 3))",
 "log_softmax_nodim": "m.nn.functional.log_softmax(m.ones(2, 3))",
 "init_old_name": "m.nn.init.normal(m.empty(2))",
 "range": "m.range(0, 3)",
 "meshgrid": "m.meshgrid(m.ones(2), m.ones(3))",
 "size_average": "m.nn.functional.mse_loss(m.ones(2), m.ones(2), size_average=True)",
 "mse_broadcast": "m.nn.functional.mse_loss(m.ones(2, 1), m.ones(2))",
 "create_graph": "x = m.ones(2, requires_grad=True); (x * x).sum().backward(create_graph=True)",
 "var_dof": "m.ones(1).var()",
 "std_mean_dof": "m.std_mean(m.ones(1))",
 "std_dof_dim": "m.ones(1, 2).std(0)",
 "complex_cast": "m.ones(2, dtype=m.complex64).float()",
 "clip_grad_norm_old": "m.nn.utils.clip_grad_norm([m.nn.Parameter(m.ones(2))], 1.0)",
 "upsample": "m.nn.functional.upsample(m.ones(1, 1, 2), scale_factor=2)",
 "upsample_nearest": "m.nn.functional.upsample_nearest(m.ones(1, 1, 2), scale_factor=2)",
 "dropout_p": "m.nn.Dropout2d(0.5)(m.ones(2, 3))",
 "backward_hook": "mod = m.nn.Linear(2, 2); mod.register_backward_hook(lambda *a: None); mod(m.ones(1, 2, requires_grad=True)).sum().backward()",
 "sched_order": "p = m.nn.Parameter(m.ones(1)); o = m.optim.SGD([p], lr=1); s = m.optim.lr_scheduler.StepLR(o, 1); s.step()",
 "detect_anomaly": "with m.autograd.detect_anomaly(): pass",
 "grad_scaler_old": "m.cuda.amp.GradScaler(enabled=False)",
 "autocast_old": "m.cuda.amp.autocast(enabled=False)",
 "transformer_nested": "m.nn.TransformerEncoder(m.nn.TransformerEncoderLayer(4, 2, 8, batch_first=False), 1)",
 "rnn_dropout": "m.nn.LSTM(2, 2, num_layers=1, dropout=0.5)",
 "stft_window": "m.stft(m.ones(64), 16, return_complex=True)",
 "trunc_normal": "m.nn.init.trunc_normal_(m.empty(3), mean=10.0, a=-1.0, b=1.0)",
 "embedding_bag_order": "m.nn.functional.embedding_bag(m.ones(3, 2), m.tensor([0, 1]), m.tensor([0]))",
 "grid_align": "m.nn.functional.grid_sample(m.ones(1, 1, 2, 2), m.zeros(1, 1, 1, 2))",
 "affine_align": "m.nn.functional.affine_grid(m.eye(2, 3).unsqueeze(0), (1, 1, 2, 2))",
 "resize_deprecated": "m.ones(2).resize(2)",
 "nll_reduce": "m.nn.functional.nll_loss(m.ones(2, 3), m.tensor([0, 1]), reduce=False)",
 "bce_size": "m.nn.functional.binary_cross_entropy_with_logits(m.ones(2), m.ones(2), size_average=False)",
 "l1_broadcast": "m.nn.functional.l1_loss(m.ones(2, 1), m.ones(2))",
 "kl_batchmean": "m.nn.functional.kl_div(m.ones(2, 2), m.ones(2, 2))",
 "sched_epoch": "p = m.nn.Parameter(m.ones(1)); o = m.optim.SGD([p], lr=1); s = m.optim.lr_scheduler.StepLR(o, 1); o.step(); s.step(1)",
 "module_state_dict_args": "m.nn.Linear(1, 1).state_dict({}, 'x')",
 "distr_sample_n": "m.distributions.Normal(0.0, 1.0).sample_n(2)",
 "Variable_volatile": "m.autograd.Variable(m.ones(2), volatile=True)",
 "index_list_tuple": "x = m.ones(3, 3); x[[[0, 1], [1, 2]]]",
}


def _warnings(lib, code):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        exec(compile(code, "user_script.py", "exec"), {"m": lib})  # the fixed snippets above
    return got


def _torch_categories(code):
    """torch's warning categories for ``code``; torch's C++ warn-once sites (meshgrid's
    indexing, backward's create_graph cycle) fire once per process, so when an earlier test
    used them up the code runs again in a fresh interpreter."""
    got = {w.category for w in _warnings(torch, code)}
    if got:
        return got
    probe = ("import warnings, torch\n"
             "with warnings.catch_warnings(record=True) as got:\n"
             "    warnings.simplefilter('always')\n"
             f"    exec(compile({code!r}, 'user_script.py', 'exec'), {{'m': torch}})\n"
             "print(' '.join(sorted({w.category.__name__ for w in got})))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120, check=True).stdout.split()
    return {getattr(builtins, n) for n in out}


@pytest.mark.parametrize("case", list(SNIPS))
def test_warning_names_the_users_line(case):
    theirs = _torch_categories(SNIPS[case])
    ours = _warnings(glassgrad, SNIPS[case])
    assert theirs, "torch warns here"
    assert {w.category for w in ours} == theirs, [str(w.message) for w in ours]
    assert [w.filename for w in ours] == ["user_script.py"] * len(ours)
    assert all(w.lineno == 1 for w in ours)


def test_a_scripts_warning_prints_its_own_line(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import glassgrad as torch\n"
                      "x = torch.ones(2, 3)\n"
                      "y = torch.nn.functional.softmax(x)  # the line the user wrote\n")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, cwd=str(tmp_path.parent),
                         env={"PYTHONPATH": str(__import__("pathlib").Path(glassgrad.__file__)
                                                .parent.parent), "PATH": ""})
    assert run.returncode == 0, run.stderr
    assert f"{script}:3: UserWarning: Implicit dimension choice for softmax" in run.stderr
    assert "y = torch.nn.functional.softmax(x)  # the line the user wrote" in run.stderr
