"""``glassgrad inspect script.py [args]``: run an unmodified PyTorch script on glassgrad and
write one self-contained HTML report of its first training steps. glassgrad's addition
(PyTorch has no counterpart)."""
import html
import importlib
import importlib.abc
import importlib.util
import json
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


def _diff(prev: list | None, cur: list) -> dict:
    """Step-to-step diff of two ledgers' node lists (by node name and creation line). Kept behind
    this one function so ``glassgrad.autograd.graph.diff`` can replace it when it lands."""
    key = lambda n: (n["name"], n.get("source") or "")  # noqa: E731
    old = {key(n) for n in prev or ()}
    new = {key(n) for n in cur}
    return {"added": sorted(map(list, new - old)), "removed": sorted(map(list, old - new))}


class _Recorder:
    def __init__(self, steps: int):
        self.steps, self.records, self.warnings = steps, [], []

    def on_backward(self, roots):
        from ..autograd.graph_inspect import _Ledger
        from ..memory import breakdown, set_tracking
        if len(self.records) >= self.steps:
            return None
        set_tracking(True)
        led = _Ledger(tuple(roots), None).build()
        rec = {"step": len(self.records) + 1, "nodes": led["nodes"], "totals": led["totals"],
               "timeline": [["before backward", breakdown()]]}
        prev = self.records[-1]["nodes"] if self.records else None
        rec["diff"] = _diff(prev, led["nodes"])
        self.records.append(rec)
        return rec

    def html(self, title: str) -> str:
        payload = json.dumps({"steps": self.records, "warnings": self.warnings},
                             default=str).replace("</", "<\\/")
        return _PAGE.replace("@TITLE@", html.escape(title)).replace("@DATA@", payload)


def run(script: str, args=(), steps: int = 3, out: str = "report.html",
        stop_after: bool = False) -> str:
    """Run ``script`` as ``__main__`` with ``argv = [script, *args]``, ``torch`` aliased to
    glassgrad; record the first ``steps`` backward() calls (graph ledger, memory by kind,
    step diff, warnings) and write the HTML report to ``out``; return ``out``."""
    from ..optim.optimizer import register_optimizer_step_post_hook
    from ..memory import breakdown
    from ..tensor import Tensor
    rec = _Recorder(steps)
    finder = TorchAlias()
    orig_backward, old_argv, old_show = Tensor.backward, sys.argv, warnings.showwarning

    def backward(self, *a, **k):
        r = rec.on_backward([self])
        try:
            return orig_backward(self, *a, **k)
        finally:
            if r is not None:
                r["timeline"].append(["after backward", breakdown()])

    def post_step(opt, a, k):
        if rec.records and len(rec.records[-1]["timeline"]) == 2:
            rec.records[-1]["timeline"].append(["after optimizer.step", breakdown()])
            if stop_after and len(rec.records) >= steps:
                raise SystemExit(0)

    def show(message, category, filename, lineno, file=None, line=None):
        rec.warnings.append({"category": category.__name__, "message": str(message),
                             "source": f"{filename}:{lineno}"})
        old_show(message, category, filename, lineno, file, line)

    handle = register_optimizer_step_post_hook(post_step)
    # a real torch already imported (a test process's oracle) would shadow the alias: park it
    real = {m: sys.modules.pop(m) for m in list(sys.modules) if m == "torch" or m.startswith("torch.")}
    sys.meta_path.insert(0, finder)
    Tensor.backward, sys.argv, warnings.showwarning = backward, [script, *args], show
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit:
        pass
    finally:
        Tensor.backward, sys.argv, warnings.showwarning = orig_backward, old_argv, old_show
        sys.meta_path.remove(finder)
        handle.remove()
        for name in [m for m in sys.modules if m == "torch" or m.startswith("torch.")]:
            del sys.modules[name]
        sys.modules.update(real)
        with open(out, "w", encoding="utf-8") as f:
            f.write(rec.html(f"glassgrad inspect {script}"))
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


_PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>@TITLE@</title>
<style>body{font-family:system-ui,sans-serif;margin:16px}table{border-collapse:collapse;font:12px monospace}
td,th{border:1px solid #ddd;padding:2px 6px}</style></head><body><h1>@TITLE@</h1><div id="out"></div>
<script type="application/json" id="data">@DATA@</script><script>
(function(){const D=JSON.parse(document.getElementById('data').textContent),o=document.getElementById('out');
const esc=s=>String(s).replace(/[&<>]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;'}[c]));let h='';
for(const s of D.steps){h+='<h2 class="step">step '+s.step+'</h2><h3>memory timeline</h3><table>';
 for(const [w,b] of s.timeline)h+='<tr><td>'+esc(w)+'</td><td>'+esc(JSON.stringify(b))+'</td></tr>';
 h+='</table><h3>ledger</h3><table>';for(const n of s.nodes)h+='<tr><td>'+esc(n.name)+'</td><td>'+
 esc(n.source||n.param||'')+'</td><td>'+esc(n.saved.map(x=>x.name+' '+x.nbytes).join(', '))+'</td></tr>';
 h+='</table><h3>diff</h3><pre>'+esc(JSON.stringify(s.diff))+'</pre>';}
h+='<h2>warnings</h2><pre>'+esc(JSON.stringify(D.warnings,null,1))+'</pre>';o.innerHTML=h;
document.body.dataset.ready='1';})();
</script></body></html>
"""
