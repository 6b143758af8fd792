"""Every example runs end to end at a tiny size and writes what it promises (``main([...])``)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


def load_example(name: str):
    """The module of ``examples/<name>.py``; the examples import ``_common`` by plain name."""
    key = f"examples_{name}"
    if key not in sys.modules:
        if EXAMPLES not in sys.path:
            sys.path.insert(0, EXAMPLES)
        spec = importlib.util.spec_from_file_location(key, os.path.join(EXAMPLES, f"{name}.py"))
        sys.modules[key] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[key])
    return sys.modules[key]


def _summary(path):
    with open(os.path.join(path, "summary.json")) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def classifier(tmp_path_factory):
    """A one-epoch digits classifier checkpoint (the GAN's judge), trained once."""
    out = tmp_path_factory.mktemp("classifier")
    summary = load_example("classify_digits").main(["--epochs", "1", "--out", str(out)])
    assert 0.0 <= summary["test_accuracy"] <= 1.0
    assert os.path.exists(out / "classifier.safetensors")
    return out / "classifier.safetensors"


@pytest.mark.parametrize("extra", [[], ["--detach"], ["--variant", "wgan-gp", "--n-critic", "2"]],
                         ids=["retain_graph", "detach", "wgan-gp"])
def test_gan(tmp_path, classifier, extra):
    summary = load_example("gan").main(["--epochs", "2", "--batch-size", "256", "--sample-every",
                                        "1", "--quiet", "--classifier", str(classifier),
                                        "--out", str(tmp_path), *extra])
    for name in ("samples_epoch_001.png", "samples_epoch_002.png", "samples.png", "losses.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    stored = _summary(tmp_path)
    n_train = len(load_example("gan").digits_arrays("train")[0])
    assert stored["steps"] == summary["steps"] == 2 * (n_train // 256)
    assert 0.1 <= stored["mean_top_class_probability"] <= 1.0
    assert 1 <= stored["classes_covered"] <= 10 and sum(stored["class_counts"]) == 1000
    assert stored["ms_per_step"] > 0 and stored["peak_rss_mb"] > 0
    if extra[:1] == ["--variant"]:
        assert stored["variant"] == "wgan-gp" and stored["generator_steps"] == stored["steps"] // 2


def test_maml(tmp_path):
    summary = load_example("maml").main(["--iterations", "3", "--meta-batch", "2", "--eval-tasks",
                                         "3", "--eval-steps", "2", "--quiet", "--out",
                                         str(tmp_path)])
    assert (tmp_path / "adaptation.png").stat().st_size > 0
    assert set(_summary(tmp_path)["modes"]) == {"article", "second-order", "first-order"}
    # the article's loop is first-order MAML: the same meta-updates, the same figures
    article, first = (summary["modes"][m]["mse_after_2_steps"] for m in ("article", "first-order"))
    assert abs(article - first) <= 1e-3 * max(1.0, first)


def test_rnn_variable_length(tmp_path):
    summary = load_example("rnn_variable_length").main(
        ["--epochs", "1", "--hidden", "16", "--embed", "8", "--sample", "10", "--quiet", "--out",
         str(tmp_path)])
    assert (tmp_path / "rnn.png").stat().st_size > 0
    assert summary["second_backward"].startswith("Trying to backward through the graph a second")
    growth = summary["graph_nodes_per_chunk"]
    assert growth["retain_graph"][-1] > growth["retain_graph"][0] == growth["detach"][-1]
    assert len(summary["sample"]) == len("Beautiful") + 10
    assert _summary(tmp_path)["chunks"] == summary["chunks"] > 0


def test_higher_order(tmp_path):
    summary = load_example("higher_order").main(["--order", "4", "--hidden", "3", "--quiet",
                                                 "--out", str(tmp_path)])
    assert (tmp_path / "derivatives.png").stat().st_size > 0
    assert (tmp_path / "hessian.png").stat().st_size > 0
    assert summary["all_checks_pass"]
    assert [r["autograd"] for r in summary["cube"]] == [8.0, 12.0, 12.0, 6.0, 0.0]


@pytest.mark.parametrize("name", ["gan", "maml", "rnn_variable_length", "higher_order",
                                  "classify_digits"])
def test_help(name, capsys):
    with pytest.raises(SystemExit) as exit_info:
        load_example(name).main(["--help"])
    assert exit_info.value.code == 0
    assert "--backend" in capsys.readouterr().out
