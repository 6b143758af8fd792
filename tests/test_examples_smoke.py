"""Every example runs end to end at a tiny size and writes what it promises (``main([...])``)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
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
    with open(out / "classifier.json") as f:  # how it was trained travels with the weights
        info = json.load(f)
    assert info["epochs"] == 1 and info["test_accuracy"] == summary["test_accuracy"]
    assert {"batch_size", "lr", "seed", "backend"} <= set(info)
    return out / "classifier.safetensors"


@pytest.mark.parametrize("extra", [[], ["--detach"], ["--variant", "wgan-gp", "--n-critic", "2"]],
                         ids=["retain_graph", "detach", "wgan-gp"])
def test_gan(tmp_path, classifier, extra):
    summary = load_example("gan").main(["--epochs", "2", "--batch-size", "256", "--sample-every",
                                        "1", "--quiet", "--classifier", str(classifier),
                                        "--judge-min-accuracy", "0", "--out", str(tmp_path),
                                        *extra])
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


def test_poorly_trained_judge_is_retrained_not_reused(tmp_path, classifier, monkeypatch, capsys):
    """A judge below the accuracy bar (here: the 1-epoch one, against a bar of 1.01) is retrained
    with the defaults and saved over; one that clears the bar is reused as it is."""
    import glassgrad

    shutil.copy(classifier, tmp_path / "judge.safetensors")
    shutil.copy(classifier.parent / "classifier.json", tmp_path / "judge.json")
    path = str(tmp_path / "judge.safetensors")
    gan = load_example("gan")
    judge_module = sys.modules[gan.load_or_train.__module__]
    calls = []

    def fake_train(torch, **kwargs):  # the real one takes seconds: record the call instead
        calls.append(kwargs)
        return judge_module.build_classifier(torch).eval(), 0.99

    monkeypatch.setattr(judge_module, "train_classifier", fake_train)
    gan.load_or_train(glassgrad, path, progress=False, min_accuracy=0.0)
    assert calls == [] and capsys.readouterr().out == ""  # good enough: reused
    gan.load_or_train(glassgrad, path, progress=False, min_accuracy=1.01)
    out = capsys.readouterr().out
    assert len(calls) == 1 and "test accuracy" in out and "epochs 1" in out and "retrain" in out
    with open(tmp_path / "judge.json") as f:
        info = json.load(f)
    assert info["test_accuracy"] == 0.99 and info["epochs"] == judge_module.DEFAULTS["epochs"]
    (tmp_path / "judge.safetensors").write_bytes(b"not a checkpoint")
    gan.load_or_train(glassgrad, path, progress=False, min_accuracy=0.0)
    assert len(calls) == 2 and "unreadable" in capsys.readouterr().out
    os.remove(path)  # a missing judge is trained too, and that is said as well
    gan.load_or_train(glassgrad, path, progress=False, min_accuracy=0.0)
    assert len(calls) == 3 and "missing; training it" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["gan", "maml", "rnn_variable_length", "higher_order",
                                  "classify_digits", "grad_accumulation", "seed_walkthrough"])
def test_torch_backend_has_its_own_output_folder(name):
    parse = getattr(load_example(name), "parse_args", None)
    if parse is None:  # classify_digits parses inside main: check its documented default
        assert "runs/classifier-torch" in load_example(name).__doc__
        return
    assert parse(["--backend", "torch"]).out.endswith("-torch")
    assert not parse([]).out.endswith("-torch")
    assert parse(["--backend", "torch", "--out", "x"]).out == "x"


def test_torch_backend_runs_on_one_thread_into_its_own_folder(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    threads = torch.get_num_threads()
    try:
        assert load_example("higher_order").load_backend("torch") is torch
        assert torch.get_num_threads() == 1
        summary = load_example("higher_order").main(["--backend", "torch", "--order", "3",
                                                     "--hidden", "2", "--quiet"])
    finally:
        torch.set_num_threads(threads)
    assert summary["all_checks_pass"]
    assert (tmp_path / "runs" / "higher_order-torch" / "summary.json").exists()
    assert not (tmp_path / "runs" / "higher_order").exists()


@pytest.mark.parametrize("name", ["gan", "maml", "rnn_variable_length", "higher_order",
                                  "classify_digits", "grad_accumulation", "seed_walkthrough"])
def test_help(name, capsys, monkeypatch):
    """Every option has a help text; defaults show once and never as "None"."""
    parsers = []
    parse_args = argparse.ArgumentParser.parse_args

    def recording(self, *args, **kwargs):
        parsers.append(self)
        return parse_args(self, *args, **kwargs)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", recording)
    with pytest.raises(SystemExit) as exit_info:
        load_example(name).main(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert "--backend" in text and "(default: None)" not in text
    assert parsers[0].description
    formatter = parsers[0].formatter_class(name)
    for action in parsers[0]._actions:
        assert action.help, action.option_strings
        assert formatter._get_help_string(action).count("(default:") <= 1, action.option_strings
