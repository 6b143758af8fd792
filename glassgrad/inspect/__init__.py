"""``glassgrad inspect script.py [args]``: run an unmodified PyTorch script on glassgrad and
write one self-contained HTML report of its first training steps. glassgrad's addition
(PyTorch has no counterpart)."""
import importlib
import importlib.abc
import importlib.util
import runpy
import sys
import warnings

__all__ = ["TorchAlias", "run", "main"]


class TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Meta-path finder resolving ``torch`` and ``torch.*`` to ``glassgrad`` / ``glassgrad.*``,
    installed only for one inspected run so the user's script needs no edit."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        # the glassgrad module itself, so `torch.nn is glassgrad.nn` holds
        return importlib.import_module("glassgrad" + spec.name[len("torch"):])

    def exec_module(self, module):
        pass


def run(script: str, args=(), steps: int = 3, out: str = "report.html",
        stop_after: bool = False) -> str:
    """Run ``script`` as ``__main__`` with ``argv = [script, *args]``, ``torch`` aliased to
    glassgrad; record the first ``steps`` training steps (each ``backward()`` to the
    ``optimizer.step()`` after it): the graph with the module of each node, the saved-tensor
    ledger, the memory timeline by kind with its peaks, the diff against the step before, and the
    warnings with their lines; write the HTML report to ``out`` and return ``out``. The script's
    output still prints; ``stop_after`` ends it once the steps are recorded. An exception in the
    script is raised again after the report is written."""
    from ..nn._module_hooks import register_module_forward_hook, register_module_forward_pre_hook
    from ..optim.optimizer import register_optimizer_step_post_hook
    from ..tensor import Tensor
    from ._record import Recorder
    rec = Recorder(steps)
    finder = TorchAlias()
    orig_backward, old_argv, old_show = Tensor.backward, sys.argv, warnings.showwarning

    def backward(self, *a, **k):
        rec.on_backward([self], sys._getframe(1))
        return orig_backward(self, *a, **k)

    def post_step(opt, a, k):
        rec.after_step()
        if stop_after and len(rec.records) >= steps:
            raise SystemExit(0)

    def show(message, category, filename, lineno, file=None, line=None):
        rec.warn(category, message, filename, lineno)
        old_show(message, category, filename, lineno, file, line)

    handles = [register_optimizer_step_post_hook(post_step),
               register_module_forward_pre_hook(rec.pre),
               register_module_forward_hook(rec.post, always_call=True)]
    # a real torch already imported (a test process's oracle) would shadow the alias: park it
    real = {m: sys.modules.pop(m) for m in list(sys.modules) if m == "torch" or m.startswith("torch.")}
    sys.meta_path.insert(0, finder)
    Tensor.backward, sys.argv, warnings.showwarning = backward, [script, *args], show
    rec.begin()
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit:
        pass
    finally:
        rec.end()
        Tensor.backward, sys.argv, warnings.showwarning = orig_backward, old_argv, old_show
        sys.meta_path.remove(finder)
        for h in handles:
            h.remove()
        for name in [m for m in sys.modules if m == "torch" or m.startswith("torch.")]:
            del sys.modules[name]
        sys.modules.update(real)
        from ._page import render
        with open(out, "w", encoding="utf-8") as f:
            f.write(render(f"glassgrad inspect {script}", rec.records, rec.warnings, script))
    return out


def main(argv=None) -> int:
    """Command line: ``python -m glassgrad.inspect [--steps N] [--out F] [--stop-after] script [args]``."""
    import argparse
    p = argparse.ArgumentParser(prog="glassgrad inspect")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--out", default="report.html")
    p.add_argument("--stop-after", action="store_true")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    ns = p.parse_args(argv)
    run(ns.script, ns.args, ns.steps, ns.out, ns.stop_after)
    return 0
