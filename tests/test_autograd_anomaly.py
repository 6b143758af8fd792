"""Anomaly detection against torch: NaN in a backward output, check_nan, the mode switches, and
glassgrad's creation-line note on errors raised in backward."""

from __future__ import annotations

import warnings

from tests.autograd_oracle import same, same_error, same_warning


def _nan_backward(torch):
    x = torch.tensor([-1.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "invalid value" in sqrt
        y = x.sqrt()
        z = torch.where(torch.isnan(y), torch.zeros_like(y), y)
        z.sum().backward()
    return x.grad


def test_nan_in_backward_raises_with_the_node_name():
    def run(torch):
        with torch.autograd.detect_anomaly():
            _nan_backward(torch)

    msg = same_error(
        run, RuntimeError, "Function 'SqrtBackward0' returned nan values in its 0th output."
    )
    assert "glassgrad: the node was created at " in msg and __file__ in msg


def test_set_detect_anomaly_call_and_context():
    def run(torch):
        torch.autograd.set_detect_anomaly(True)
        try:
            _nan_backward(torch)
        finally:
            torch.autograd.set_detect_anomaly(False)

    same_error(run, RuntimeError, "Function 'SqrtBackward0' returned nan values in its 0th output.")

    def flags(torch):
        seen = [torch.is_anomaly_enabled()]
        with torch.autograd.set_detect_anomaly(True, check_nan=False):
            seen += [torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()]
        seen += [torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()]
        return seen

    same(flags)


def test_check_nan_false_and_anomaly_off_let_nan_through():
    def run(torch):
        with torch.autograd.detect_anomaly(check_nan=False):
            a = _nan_backward(torch)
        return a, _nan_backward(torch), torch.is_anomaly_enabled()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(run)


def test_enabling_warns():
    def run(torch):
        with torch.autograd.detect_anomaly():
            return torch.is_anomaly_enabled()

    same_warning(
        run,
        UserWarning,
        "Anomaly Detection has been enabled. This mode will increase the "
        "runtime and should only be enabled for debugging.",
    )


def test_nan_loss_with_finite_gradients_passes():
    def run(torch):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        with torch.autograd.detect_anomaly():
            loss = (x * 2).sum() + torch.tensor(float("nan"))
            loss.backward()
        return x.grad

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        same(run)
    assert any(
        "glassgrad: backward starts from output 0, which contains NaN" in str(w.message)
        for w in caught
    )


def test_in_place_error_hint_and_creation_line_under_anomaly():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        with torch.autograd.detect_anomaly():
            y = x.sigmoid()
            y.mul_(2)
            y.sum().backward()

    msg = same_error(
        run,
        RuntimeError,
        "which is output 0 of Sigmoid, is at version 1; expected "
        "version 0 instead. Hint: the backtrace further above shows the operation "
        "that failed to compute its gradient.",
    )
    assert "(created at " in msg and __file__ in msg


def test_second_backward_names_the_creation_line_under_anomaly():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        with torch.autograd.detect_anomaly():
            y = (x.exp() * x).sum()
            y.backward()
            y.backward()

    msg = same_error(run, RuntimeError, "Trying to backward through the graph a second time")
    assert "glassgrad: the node was created at " in msg and __file__ in msg


def test_error_warning_names_the_node():
    def run(torch):
        with torch.autograd.detect_anomaly():
            try:
                _nan_backward(torch)
            except RuntimeError:
                return True

    same_warning(run, UserWarning, "Error detected in SqrtBackward0.")
