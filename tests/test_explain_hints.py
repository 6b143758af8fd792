"""Hints chosen from the evidence (glassgrad/autograd/explain.py): a second backward through an
unrolled RNN's carried hidden state says "detach the carried state", whether the loop's backward
is one line run again or the steps are written out line by line, or the step sits in a helper
with an nn.LSTM; a GAN's shared generator output, the same error, gets the GAN advice instead.
torch raises the same RuntimeError in each case (checked by same_error)."""

from __future__ import annotations

from tests.autograd_oracle import same_error

SECOND = "Trying to backward through the graph a second time"
DETACH = "Detach it at the start of each iteration (h = h.detach())"
GAN = "If two losses share this graph (a GAN's discriminator and generator losses)"


def _unrolled_by_hand(torch):
    torch.manual_seed(0)
    cell = torch.nn.RNNCell(3, 5)
    xs = torch.randn(3, 2, 3)
    h = torch.zeros(2, 5)
    h = cell(xs[0], h)
    h.pow(2).sum().backward()
    h = cell(xs[1], h)  # h still carries step 0's graph
    h.pow(2).sum().backward()


def test_unrolled_rnn_written_out_step_by_step_says_detach():
    msg = same_error(_unrolled_by_hand, RuntimeError, SECOND)
    assert "This graph repeats the earlier one's step (an unrolled loop)" in msg
    assert DETACH in msg and GAN not in msg
    assert "here the [2, 5] float32 tensor from TanhBackward0" in msg


def _lstm_in_a_helper(torch):
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(3, 5)
    opt = torch.optim.SGD(lstm.parameters(), lr=0.1)

    def step(x, state):
        out, state = lstm(x, state)
        opt.zero_grad()
        out.pow(2).mean().backward()
        return state

    state = step(torch.randn(4, 2, 3), None)
    step(torch.randn(4, 2, 3), state)  # (h, c) not detached


def test_lstm_state_carried_through_a_training_helper_says_detach():
    msg = same_error(_lstm_in_a_helper, RuntimeError, SECOND)
    assert DETACH in msg and GAN not in msg


def _running_total(torch):
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    total_loss = torch.zeros(())
    for scale in (2.0, 3.0):
        total_loss += (w * scale).sum()  # the running total keeps every step's graph
        total_loss.backward()


def test_running_total_backward_in_a_loop_says_detach():
    msg = same_error(_running_total, RuntimeError, SECOND)
    assert "That backward is on the same line as this one" in msg
    assert DETACH in msg and GAN not in msg


def _gan(torch):
    torch.manual_seed(0)
    G = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh())
    D = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.LeakyReLU(0.2), torch.nn.Linear(4, 1))
    z, real = torch.randn(4, 2), torch.randn(4, 3)
    fake = G(z)
    (D(real).mean() - D(fake).mean()).backward()
    D(fake).mean().backward()


def test_gan_shared_output_keeps_the_gan_advice():
    msg = same_error(_gan, RuntimeError, SECOND)
    assert GAN in msg and "fake.detach()" in msg and DETACH not in msg


def _backward_only_nan(torch):
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    with torch.autograd.detect_anomaly():
        y = x.sqrt()  # finite forward; its gradient at 0 is inf, times 0 is NaN
        (y * 0).sum().backward()


def test_backward_only_nan_reports_its_creation_line_once():
    import inspect
    import warnings

    import glassgrad

    msg = same_error(_backward_only_nan, RuntimeError,
                     "Function 'SqrtBackward0' returned nan values in its 0th output.")
    lines, start = inspect.getsourcelines(_backward_only_nan)
    where = f"{__file__}:{start + 3}"  # the y = x.sqrt() line
    assert msg.count(where) == 1 and msg.count("created at") == 1, msg
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        try:
            _backward_only_nan(glassgrad)
        except RuntimeError:
            pass
    shown = [str(w.message) for w in got if "Error detected in SqrtBackward0" in str(w.message)]
    assert len(shown) == 1 and shown[0].count(where) == 1, shown
    assert "y = x.sqrt()" in shown[0]
