"""``glassgrad inspect script.py [args]``: run an unmodified PyTorch script on glassgrad and
write one self-contained HTML report of its first training steps. glassgrad's addition
(PyTorch has no counterpart)."""
import os
import runpy
import sys
import warnings

__all__ = ["run", "main"]


def run(script: str, args=(), steps: int = 3, out: str = "report.html",
        stop_after: bool = False, plots: bool = False) -> str:
    """Run ``script`` as ``__main__`` with ``argv = [script, *args]``, ``torch`` aliased to
    glassgrad; record the first ``steps`` training steps (each ``backward()`` or
    ``torch.autograd.backward`` to the ``optimizer.step()`` after it): the graph with the
    module of each node, the saved-tensor ledger, the memory timeline by kind with its peaks,
    the diff against the step before, and the warnings with their lines; write the HTML report
    to ``out`` and return ``out``. The script's output still prints; ``stop_after`` ends it once
    the steps are recorded; ``plots`` also writes each step's memory timeline as a PNG beside
    the report (``report.step1.memory.png``, matplotlib). An exception in the script is raised
    again after the report is written."""
    from ..nn._module_hooks import register_module_forward_hook, register_module_forward_pre_hook
    from ..optim.optimizer import register_optimizer_step_post_hook
    from ..tensor import Tensor
    from ._record import Recorder
    from .. import alias, autograd
    rec = Recorder(steps)
    orig_autograd_backward = autograd.backward
    orig_backward, old_argv, old_show = Tensor.backward, sys.argv, warnings.showwarning

    def backward(self, *a, **k):
        rec.on_backward([self], sys._getframe(1))
        try:
            return orig_backward(self, *a, **k)
        finally:
            rec.backward_done()

    def autograd_backward(tensors, *a, **k):
        rec.on_backward([tensors] if isinstance(tensors, Tensor) else list(tensors),
                        sys._getframe(1))
        try:
            return orig_autograd_backward(tensors, *a, **k)
        finally:
            rec.backward_done()

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
    real = {m: sys.modules.pop(m) for m in list(sys.modules)
            if m == "torch" or m.startswith("torch.")}
    was_aliased = alias.is_installed()
    alias.install()
    old_path0 = sys.path[0]
    # as `python script.py` would: the script's folder first, for its `import data`
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    Tensor.backward, sys.argv, warnings.showwarning = backward, [script, *args], show
    autograd.backward = autograd_backward
    rec.begin()
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit:
        pass
    except BaseException as exc:
        rec.error(exc)  # the report names the error and its line; the caller still gets it
        raise
    finally:
        rec.end()
        Tensor.backward, sys.argv, warnings.showwarning = orig_backward, old_argv, old_show
        autograd.backward = orig_autograd_backward
        sys.path[0] = old_path0
        if not was_aliased:
            alias.uninstall()
        for h in handles:
            h.remove()
        sys.modules.update(real)
        from ._page import render
        with open(out, "w", encoding="utf-8") as f:
            f.write(render(f"glassgrad inspect {script}", rec.records, rec.warnings, script))
        if plots:
            stem = os.path.splitext(out)[0]
            for r in rec.records:
                if "timeline" in r:
                    r["timeline"].plot(f"{stem}.step{r['step']}.memory.png",
                                       f"{os.path.basename(script)}: memory of step {r['step']}")
    return out


def main(argv=None) -> int:
    """Command line: ``python -m glassgrad.inspect [--steps N] [--out F] [--stop-after]
    [--plots] script [args]``; returns the exit status."""
    import argparse
    p = argparse.ArgumentParser(prog="glassgrad inspect")
    p.add_argument("--steps", type=int, default=3, help="training steps to record (3)")
    p.add_argument("--out", default="report.html", help="the HTML report (report.html)")
    p.add_argument("--stop-after", action="store_true",
                   help="end the script once the steps are recorded")
    p.add_argument("--plots", action="store_true",
                   help="also write each step's memory timeline as a PNG (matplotlib)")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    ns = p.parse_args(argv)
    if ns.steps < 1:
        p.error(f"--steps must be at least 1, got {ns.steps}")
    run(ns.script, ns.args, ns.steps, ns.out, ns.stop_after, ns.plots)
    return 0
