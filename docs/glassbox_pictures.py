"""Remake the README's glass-box pictures: ``python docs/glassbox_pictures.py`` (needs matplotlib;
the report's picture also needs Chromium, ``apt-get install chromium``)."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import glassgrad as torch  # noqa: E402
import glassgrad.nn as nn  # noqa: E402
from glassgrad.inspect import run  # noqa: E402


def timeline_png(path: str) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(256, 784), torch.randint(0, 10, (256,))
    with torch.memory.record_timeline("the first Adam step of an MLP (batch 256)") as tl:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    tl.plot(path)
    print(tl)


def report_png(path: str) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("chromium not installed: the report's picture is not remade")
        return
    os.chdir(os.path.dirname(HERE))  # the report names the script as it was given
    script = os.path.join("tests", "data", "inspect_modules.py")
    with tempfile.TemporaryDirectory() as tmp:
        out = run(script, ["3"], steps=2, out=os.path.join(tmp, "report.html"))
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars",
                        "--window-size=1000,1250", f"--screenshot={path}",
                        f"file://{out}#open=Net,Net.blocks"], check=True, capture_output=True)


if __name__ == "__main__":
    timeline_png(os.path.join(HERE, "memory_timeline.png"))
    report_png(os.path.join(HERE, "inspect_report.png"))
