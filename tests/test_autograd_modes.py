"""Grad modes against torch: no_grad, enable_grad, set_grad_enabled, inference_mode as context
managers and decorators (bare too, generators too), per thread, and inference tensors."""

from __future__ import annotations

import threading

import pytest

from tests.autograd_oracle import same, same_error, same_warning


def test_context_managers_nest():
    def run(torch):
        x = torch.ones(2, requires_grad=True)
        seen = []
        with torch.no_grad():
            seen += [(x * 2).requires_grad, torch.is_grad_enabled()]
            with torch.enable_grad():
                seen += [(x * 2).requires_grad, torch.is_grad_enabled()]
            seen.append(torch.is_grad_enabled())
        with torch.set_grad_enabled(False):
            seen.append((x * 2).requires_grad)
            with torch.set_grad_enabled(True):
                seen.append((x * 2).requires_grad)
        seen.append(torch.is_grad_enabled())
        return seen

    same(run)


def test_set_grad_enabled_as_a_call():
    def run(torch):
        x = torch.ones(2, requires_grad=True)
        torch.set_grad_enabled(False)
        try:
            off = ((x * 2).requires_grad, torch.is_grad_enabled())
        finally:
            torch.set_grad_enabled(True)
        return off, torch.is_grad_enabled(), (x * 2).requires_grad

    same(run)


def test_decorators():
    def run(torch):
        x = torch.ones(2, requires_grad=True)

        @torch.no_grad
        def bare():
            return (x * 2).requires_grad

        @torch.no_grad()
        def called():
            return (x * 2).requires_grad, torch.is_grad_enabled()

        @torch.enable_grad()
        def enabled():
            return (x * 2).requires_grad

        @torch.enable_grad
        def enabled_bare():
            return (x * 2).requires_grad

        @torch.set_grad_enabled(False)
        def disabled():
            return torch.is_grad_enabled()

        @torch.inference_mode()
        def inference():
            return (x * 2).requires_grad, torch.is_inference_mode_enabled()

        @torch.inference_mode
        def inference_bare():
            return (x * 2).is_inference()

        after_decorating = torch.is_grad_enabled()
        with torch.no_grad():
            inside = (enabled(), enabled_bare())
        return (
            bare(),
            called(),
            inside,
            disabled(),
            after_decorating,
            torch.is_grad_enabled(),
            inference(),
            inference_bare(),
            bare.__name__,
            called.__name__,
        )

    same(run)


def test_decorated_generator_keeps_the_mode_at_each_step():
    def run(torch):
        x = torch.ones(2, requires_grad=True)

        @torch.no_grad()
        def gen():
            for _ in range(2):
                yield (x * 2).requires_grad, torch.is_grad_enabled()

        steps = []
        for item in gen():
            steps.append((item, torch.is_grad_enabled()))
        return steps

    same(run)


def test_decorating_a_class_warns_and_constructs_under_the_mode():
    def run(torch):
        x = torch.ones(2, requires_grad=True)

        @torch.no_grad()
        class Model:
            def __init__(self):
                self.y = x * 2

        return Model().y.requires_grad, torch.is_grad_enabled()

    same_warning(run, FutureWarning, "Decorating classes is deprecated")


def test_grad_mode_is_thread_local():
    def run(torch):
        seen = {}

        def worker():
            seen["thread_start"] = torch.is_grad_enabled()
            with torch.no_grad():
                seen["thread_no_grad"] = torch.is_grad_enabled()
                barrier.wait()
                barrier.wait()

        barrier = threading.Barrier(2)
        t = threading.Thread(target=worker)
        with torch.no_grad():
            t.start()
            barrier.wait()
        seen["main_while_thread_in_no_grad"] = torch.is_grad_enabled()
        barrier.wait()
        t.join()
        return seen

    same(run)


def test_inference_mode_outputs():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        with torch.inference_mode():
            a = x * 2
            b = torch.ones(3)
            flags = (torch.is_grad_enabled(), torch.is_inference_mode_enabled())
        with torch.inference_mode(False):
            c = x * 2
        return (
            a.requires_grad,
            a.is_inference(),
            b.is_inference(),
            x.is_inference(),
            flags,
            c.requires_grad,
            c.is_inference(),
            torch.is_inference_mode_enabled(),
        )

    same(run)


@pytest.mark.parametrize("make", ["factory", "op"])
def test_inference_tensor_cannot_be_saved_for_backward(make):
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        with torch.inference_mode():
            a = torch.full((3,), 2.0) if make == "factory" else x * 2
        return x * a

    same_error(
        run,
        RuntimeError,
        "Inference tensors cannot be saved for backward. Please do not "
        "use Tensors created in inference mode in computation tracked by autograd.",
    )


def test_inference_tensor_usable_where_nothing_is_saved_and_after_clone():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        with torch.inference_mode():
            a = torch.full((3,), 2.0)
        y = (x + a).sum()  # AddBackward0 saves nothing
        z = (x * a.clone()).sum()
        (y + z).backward()
        return x.grad, a.clone().is_inference()

    same(run)


def test_inference_tensor_flag_and_in_place_errors():
    def requires(torch):
        with torch.inference_mode():
            a = torch.ones(3) * 2
        a.requires_grad_()

    same_error(
        requires,
        RuntimeError,
        "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.",
    )

    def in_place(torch):
        with torch.inference_mode():
            a = torch.ones(3) * 2
        a.add_(1)

    same_error(
        in_place,
        RuntimeError,
        "Inplace update to inference tensor outside InferenceMode is not allowed.",
    )

    def in_place_inside(torch):
        with torch.inference_mode():
            a = torch.ones(3) * 2
        with torch.inference_mode():
            a.add_(1)
        return a

    same(in_place_inside)


def test_inference_tensors_track_no_version_and_views_of_normal_tensors_stay_normal():
    def version(torch):
        with torch.inference_mode():
            a = torch.ones(3)
        return a._version

    same_error(version, RuntimeError, "Inference tensors do not track version counter.")

    def views(torch):
        x = torch.ones(2, 3, requires_grad=True)
        with torch.inference_mode():
            a = torch.ones(2, 3)
            v = a[0]
            d = a.detach()
        return v.is_inference(), d.is_inference(), x.detach().is_inference()

    same(views)


def _mode_trace(lib) -> list:
    """Grad mode and recording through nested inference_mode / enable_grad / no_grad /
    set_grad_enabled, read the same way on both libraries."""
    out = []
    x = lib.ones(2, requires_grad=True)
    with lib.inference_mode():
        out.append(lib.is_grad_enabled())
        with lib.enable_grad():  # grad mode on, yet inference mode wins: nothing records
            y = x * 2
            out += [lib.is_grad_enabled(), y.requires_grad, y.grad_fn is None, y.is_inference()]
            with lib.inference_mode(False):
                z = x * 2
                out += [lib.is_grad_enabled(), z.requires_grad, z.is_inference()]
            with lib.no_grad():
                out.append(lib.is_grad_enabled())
            out.append(lib.is_grad_enabled())
        with lib.set_grad_enabled(True):
            out += [lib.is_grad_enabled(), (x * 2).requires_grad]
        out.append(lib.is_grad_enabled())
    out.append(lib.is_grad_enabled())
    with lib.no_grad():
        with lib.inference_mode(False):
            out += [lib.is_grad_enabled(), (x * 2).requires_grad]
        with lib.enable_grad():
            out += [lib.is_grad_enabled(), (x * 2).requires_grad]
        out.append(lib.is_grad_enabled())
    lib.set_grad_enabled(False)
    out.append(lib.is_grad_enabled())
    lib.set_grad_enabled(True)
    out.append(lib.is_grad_enabled())
    return out


def test_enable_grad_inside_inference_mode_records_nothing_as_in_torch():
    import torch

    import glassgrad

    assert _mode_trace(glassgrad) == _mode_trace(torch)
