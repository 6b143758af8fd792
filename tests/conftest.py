import numpy as np
import pytest

from glassgrad.autograd import engine_arrays

# a first-order backward's array rule that raises on plain arrays fails the test that ran it,
# instead of falling back to the Tensor rule (NOTE [Array backward])
engine_arrays.STRICT = True


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def pytest_terminal_summary(terminalreporter):
    """Print the reliability figures the tests recorded (tests/reliability_figures.py)."""
    from tests.reliability_figures import summary_line

    line = summary_line()
    if line:
        terminalreporter.write_sep("=", "reliability")
        terminalreporter.write_line(line)
