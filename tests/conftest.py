import numpy as np
import pytest


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
