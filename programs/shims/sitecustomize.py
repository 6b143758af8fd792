"""Seeds Python's ``random`` at start-up when PROGRAMS_PYTHON_SEED is set (programs/run.py sets it):
a program that draws from ``random`` without seeding it (siamese_network's pairs) then draws the same
numbers on the torch run and the glassgrad run."""

import os

if os.environ.get("PROGRAMS_PYTHON_SEED"):
    import random

    random.seed(int(os.environ["PROGRAMS_PYTHON_SEED"]))
