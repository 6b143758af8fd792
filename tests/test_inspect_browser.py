"""The inspect report in a real browser: headless Chromium loads the file, a script appended to a
copy clicks a module and writes what the page then shows into the DOM, read back with --dump-dom.
Skips (with the reason) where Chromium is not installed (.ci/run installs it when apt exists)."""
import html
import json
import os
import re
import shutil
import subprocess

import pytest

from glassgrad.inspect import run

NET = os.path.join(os.path.dirname(__file__), "data", "inspect_modules.py")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                "(Debian: apt-get install chromium)")

# click the collapsed model, then its "blocks" child, then close the model again by its frame
_CLICKS = r"""<script>
(function(){
const sec=document.getElementById('step-1'), seen=()=>[...sec.querySelectorAll('.graph-box g')]
 .map(g=>g.dataset.path?'module:'+g.dataset.path:'node:'+g.dataset.module);
const out={ready:document.body.dataset.ready, before:seen()};
const click=e=>e.dispatchEvent(new MouseEvent('click',{bubbles:true}));
click(sec.querySelector('.graph-box g.module[data-path="Net"]'));out.open1=seen();
click(sec.querySelector('.graph-box g.module[data-path="Net.blocks"]'));out.open2=seen();
out.frames=[...sec.querySelectorAll('.graph-box text.frame-label')].map(t=>t.textContent);
click(sec.querySelector('.graph-box text.frame-label[data-path="Net"]'));out.closed=seen();
out.timeline=sec.querySelectorAll('svg.timeline path').length;
out.kinds=[...sec.querySelectorAll('table.memory-kinds tr')].map(r=>r.textContent);
out.carried=[...document.querySelectorAll('table.diff-carried td')].map(t=>t.textContent);
document.body.setAttribute('data-result',JSON.stringify(out));
})();
</script></body>"""


def _dom(path):
    p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                        "--virtual-time-budget=5000", "--dump-dom", "file://" + path],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def test_report_renders_and_a_module_opens_on_click(tmp_path):
    out = run(NET, ["2"], steps=2, out=str(tmp_path / "report.html"))
    page = open(out, encoding="utf-8").read().replace("</body>", _CLICKS)
    probe = tmp_path / "probe.html"
    probe.write_text(page, encoding="utf-8")
    dom = _dom(str(probe))
    m = re.search(r'data-result="([^"]*)"', dom)
    assert m, dom[:2000]
    r = json.loads(html.unescape(m.group(1)))
    assert r["ready"] == "1"
    # collapsed: the model is one box, the loss outside it
    assert r["before"] == ["module:Net", "node:"]
    # one click: the model's children appear, collapsed in their turn
    assert {"module:Net.embed", "module:Net.blocks", "module:Net.head"} <= set(r["open1"])
    assert "module:Net" not in r["open1"]
    assert {"module:Net.blocks.0", "module:Net.blocks.1"} <= set(r["open2"])
    assert "module:Net.blocks" not in r["open2"]
    assert r["frames"] == ["\u25be Net", "\u25be Net.blocks (Sequential)"]
    assert r["closed"] == r["before"]
    assert r["timeline"] >= 4  # an area per kind present, drawn
    assert any(k.startswith("parameters") for k in r["kinds"])
    assert "total_loss" in r["carried"]
