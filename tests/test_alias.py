"""glassgrad.alias: an unchanged torch script runs on glassgrad, and prints what it prints on torch.

Each case runs in a child process: this one has the real torch imported, which the alias refuses.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _python(args, cwd, check=False):
    """Run the venv's Python with this checkout's glassgrad first on the path."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def _script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


# A small training script in plain PyTorch: it imports submodules every way programs do, reads a
# neighbour module, its argv and __name__, and prints numbers that depend on the library's maths.
_PROGRAM = """
    import sys
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim
    from torch.optim.lr_scheduler import StepLR
    from torch.utils.data import DataLoader, TensorDataset
    import helper

    model = nn.Linear(3, 1)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.5, -0.25, 1.0]]))
        model.bias.fill_(0.1)
    opt = optim.SGD(model.parameters(), lr=float(sys.argv[1]))
    sched = StepLR(opt, step_size=1, gamma=0.5)
    x = torch.arange(12, dtype=torch.float32).reshape(4, 3) / 10
    loader = DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=2)
    for xb, yb in loader:
        opt.zero_grad()
        loss = F.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
        sched.step()
        print("loss %.6f" % loss.item())
    print(helper.NAME, __name__, sys.argv[1:], type(loss).__name__)
    sys.exit(3)
"""


def test_script_prints_what_it_prints_on_torch(tmp_path):
    script = _script(tmp_path, "train.py", _PROGRAM)
    (tmp_path / "helper.py").write_text("NAME = 'helper'\n")
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    on_torch = _python([str(script), "0.1"], cwd=elsewhere)
    on_glassgrad = _python(["-m", "glassgrad.alias", str(script), "0.1"], cwd=elsewhere)
    assert on_torch.returncode == on_glassgrad.returncode == 3, on_glassgrad.stderr
    assert on_glassgrad.stdout == on_torch.stdout
    assert "loss" in on_torch.stdout and "__main__ ['0.1'] Tensor" in on_torch.stdout


def test_torch_names_are_the_glassgrad_module_objects(tmp_path):
    script = _script(tmp_path, "ids.py", """
        import glassgrad, glassgrad.nn.functional, glassgrad.optim.lr_scheduler
        import glassgrad.utils.data, glassgrad.alias
        import torch
        import torch.nn.functional as F
        import torch.utils.data
        from torch.optim.lr_scheduler import StepLR
        from torch import nn
        import sys
        print(torch is glassgrad, F is glassgrad.nn.functional, nn is glassgrad.nn,
              torch.utils.data is glassgrad.utils.data,
              StepLR is glassgrad.optim.lr_scheduler.StepLR,
              sys.modules["torch.nn.functional"] is glassgrad.nn.functional,
              glassgrad.alias.is_installed())
    """)
    out = _python(["-m", "glassgrad.alias", str(script)], cwd=tmp_path, check=True)
    assert out.stdout.split() == ["True"] * 7


def _import_error(statement):
    try:
        exec(statement, {})
    except ImportError as e:
        return e
    raise AssertionError(f"{statement} did not raise")


@pytest.mark.parametrize("statement", [
    "import torch.no_such_module_anywhere",
    "from torch.no_such_module_anywhere import thing",
    "import torch.nn.no_such_module_anywhere",
])
def test_missing_submodule_raises_as_torch_does(tmp_path, statement):
    expected = _import_error(statement)
    script = _script(tmp_path, "missing.py", f"""
        try:
            {statement}
        except ImportError as e:
            print(type(e).__name__, e.name)
            print(str(e))
    """)
    out = _python(["-m", "glassgrad.alias", str(script)], cwd=tmp_path, check=True)
    first, message = out.stdout.split("\n", 1)
    assert first == f"{type(expected).__name__} {expected.name}"
    assert message.startswith(str(expected))
    glassgrad_name = expected.name.replace("torch", "glassgrad", 1)
    assert f"glassgrad has no module {glassgrad_name}" in message


def test_missing_name_in_existing_module_is_torchs_import_error(tmp_path):
    expected = _import_error("from torch.nn import no_such_name_anywhere")
    script = _script(tmp_path, "name.py", """
        try:
            from torch.nn import no_such_name_anywhere
        except ImportError as e:
            print(type(e).__name__, str(e).split(" from ")[0])
    """)
    out = _python(["-m", "glassgrad.alias", str(script)], cwd=tmp_path, check=True)
    assert out.stdout.strip() == f"{type(expected).__name__} {str(expected).split(' from ')[0]}"


def test_install_uninstall_and_refusal_after_real_torch(tmp_path):
    script = _script(tmp_path, "inproc.py", """
        import sys
        import glassgrad, glassgrad.alias
        glassgrad.alias.install(); glassgrad.alias.install()
        import torch.optim
        print(torch is glassgrad, torch.optim is glassgrad.optim)
        glassgrad.alias.uninstall()
        print("torch" in sys.modules, glassgrad.alias.is_installed())
        import torch
        print(torch is glassgrad, hasattr(torch, "_C"))
        try:
            glassgrad.alias.install()
        except RuntimeError as e:
            print("refused:", "already imported" in str(e))
    """)
    out = _python([str(script)], cwd=tmp_path, check=True)
    assert out.stdout.split("\n")[:4] == [
        "True True", "False False", "False True", "refused: True"]


def test_module_mode_and_usage(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "job.py").write_text(
        "import sys, torch\nprint(torch.__name__, sys.argv[1:], __name__)\n")
    out = _python(["-m", "glassgrad.alias", "-m", "pkg.job", "x"], cwd=tmp_path, check=True)
    assert out.stdout.strip() == "glassgrad ['x'] __main__"
    bare = _python(["-m", "glassgrad.alias"], cwd=tmp_path)
    assert bare.returncode == 2 and "usage: python -m glassgrad.alias" in bare.stderr
    assert torch.__name__ == "torch"  # this process keeps the real torch
