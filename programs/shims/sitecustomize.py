"""Seeds Python's ``random`` at start-up when PROGRAMS_PYTHON_SEED is set (programs/run.py sets it):
a program that draws from ``random`` without seeding it (siamese_network's pairs) then draws the same
numbers on the torch run and the glassgrad run. PROGRAMS_TORCH_SEED does the same for torch's
default generator, for a program that never calls ``torch.manual_seed`` (regression): torch 2.13
seeds it from entropy at start-up, so without this two torch runs already differ."""

import os

if os.environ.get("PROGRAMS_PYTHON_SEED"):
    import random

    random.seed(int(os.environ["PROGRAMS_PYTHON_SEED"]))

if os.environ.get("PROGRAMS_TORCH_SEED"):
    # the library of this run: importing real torch in the glassgrad run would stop the alias
    # (glassgrad.alias refuses once torch is imported)
    import importlib

    library = importlib.import_module(os.environ.get("PROGRAMS_LIBRARY", "torch"))
    library.manual_seed(int(os.environ["PROGRAMS_TORCH_SEED"]))

# issue 22, lane mp
if os.environ.get("PROGRAMS_PROCESSES_IN_TURN"):
    # Hogwild programs (mnist_hogwild) start their training processes together, so what each one
    # prints depends on which update the other made first: here each Process.start() first waits
    # for the processes started before it, which makes the run repeatable. They still share the
    # one model: each process's losses show the updates the others made through shared memory.
    from multiprocessing import process as _process

    _start = _process.BaseProcess.start

    def _start_in_turn(self):
        for earlier in list(_process._children):
            earlier.join()
        _start(self)

    _process.BaseProcess.start = _start_in_turn
