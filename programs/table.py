"""The public programs programs/run.py runs: where each lives in pytorch/examples, the small
settings it gets through its own flags, what to prepare in its folder, and how to read the losses it
prints. No program's code is here: run.py extracts each from the repository it is given."""

from __future__ import annotations

import dataclasses
import math
import os
import re
import sys

SHIMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shims")

# A number as Python's str() and %f / {:.Nf} formats print it.
_NUM = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)"


@dataclasses.dataclass(frozen=True)
class Program:
    """One run of a public program.

    ``folder``/``script``: its path in pytorch/examples; ``args``: the small settings; ``prepare``:
    (script, args) run first in the same folder with the same library (the sine data); ``make``:
    bundled data to write ("wikitext"); ``pattern``: a regex whose groups, over the whole stdout in
    order, are the values compared (losses, and where the program prints them on one line, the
    statistics beside them); ``label``: what those values are; ``env``: environment settings
    for both runs; ``log_of``: the values printed are exp(loss) (perplexities), compared as their
    logarithms, the losses; ``seeded``: False where the printed values cannot be compared (regression prints only the
    last loss of a run that stops at a threshold), so only running to the end is compared.
    """

    name: str
    folder: str
    script: str
    args: tuple[str, ...]
    pattern: str
    label: str = "losses"
    prepare: tuple[tuple[str, tuple[str, ...]], ...] = ()
    make: str = ""
    env: tuple[tuple[str, str], ...] = ()
    log_of: bool = False
    seeded: bool = True


_TRAIN_LOSS = r"[Ll]oss: " + _NUM
_WLM = ("--epochs", "1", "--log-interval", "1", "--emsize", "32", "--nhid", "32")

PROGRAMS: dict[str, Program] = {p.name: p for p in [
    Program("mnist", "mnist", "main.py",
            ("--epochs", "1", "--log-interval", "1"), _TRAIN_LOSS,
            label="train losses, then the test average"),
    Program("dcgan", "dcgan", "main.py",
            ("--dataset", "fake", "--niter", "1", "--manualSeed", "1", "--batchSize", "8",
             "--nz", "16", "--ngf", "16", "--ndf", "16", "--workers", "0", "--outf", "out"),
            r"Loss_D: " + _NUM + r" Loss_G: " + _NUM,
            label="Loss_D and Loss_G of each iteration, in order (one epoch of FakeData)"),
    Program("vae", "vae", "main.py", ("--epochs", "1", "--log-interval", "1"), _TRAIN_LOSS,
            label="train losses per sample, then the averages"),
    # NOTE: the losses are printed with 2 decimals, their exp (ppl) with 2 decimals too: the
    # logarithm of the ppl is the loss to about 1e-5, so that is what is compared.
    Program("word_language_model_lstm", "word_language_model", "main.py",
            _WLM + ("--model", "LSTM"), r"ppl\s+" + _NUM, make="wikitext", log_of=True,
            label="losses as log(ppl): train, then valid and test"),
    Program("word_language_model_transformer", "word_language_model", "main.py",
            _WLM + ("--model", "Transformer", "--nhead", "2"), r"ppl\s+" + _NUM,
            make="wikitext", log_of=True, label="losses as log(ppl): train, then valid and test"),
    Program("time_sequence_prediction", "time_sequence_prediction", "train.py",
            ("--steps", "1"), r"loss: " + _NUM,
            prepare=(("generate_sine_wave.py", ()),),
            # NOTE: torch >= 2.6 loads with weights_only=True by default and refuses the NumPy
            # array the program saved; torch's own switch restores the default it was written for.
            env=(("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1"),),
            label="LBFGS closure losses, then the test loss"),
    # NOTE: regression never seeds, and torch 2.13 seeds its default generator from entropy at
    # start-up (initial_seed() differs per process), so two torch runs already differ: the
    # harness seeds it at start-up on both libraries (PROGRAMS_TORCH_SEED, sitecustomize.py)
    Program("regression", "regression", "main.py", (),
            r"Loss: " + _NUM + r" after (\d+) batches", env=(("PROGRAMS_TORCH_SEED", "0"),),
            seeded=False,
            label="final loss and the number of batches it took: it prints nothing else, and "
            "its stop (the first loss under 1e-3) moves by ~100 batches with a 1-ulp change "
            "(BLAS summation order), so only running to the end counts"),
    Program("siamese_network", "siamese_network", "main.py",
            ("--epochs", "1", "--dry-run", "--batch-size", "8", "--test-batch-size", "40",
             "--log-interval", "1"), _TRAIN_LOSS,
            label="the dry run's one train loss, then the test average"),
    Program("mnist_rnn", "mnist_rnn", "main.py", ("--epochs", "1", "--log-interval", "1"),
            _TRAIN_LOSS, label="train losses, then the test average"),
    Program("gcn", "gcn", "main.py", ("--epochs", "5", "--val-every", "1"),
            r"loss(?:_train|_val)?:? " + _NUM,
            label="loss_train and loss_val per epoch, then the test loss"),
]}


def parse_values(program: Program, stdout: str) -> list[str]:
    """Every number the program's pattern captures, in the order printed (as printed; the
    logarithm, to 6 decimals, for ``log_of`` programs)."""
    found = []
    for match in re.finditer(program.pattern, stdout):
        found.extend(g for g in match.groups() if g is not None)
    if program.log_of:
        found = [f"{math.log(float(v)):.6f}" if float(v) > 0 else v for v in found]
    return found


def _decimals(text: str) -> int:
    if "e" in text.lower() or "." not in text:
        return 0
    return len(text.split(".")[1])


def relative_difference(a: str, b: str) -> float:
    """|a - b| / max(|a|, tiny), or 0.0 when the two printed strings are equal (nan == nan)."""
    if a == b:
        return 0.0
    x, y = float(a), float(b)
    if math.isnan(x) or math.isnan(y):
        return math.inf
    return abs(x - y) / max(abs(x), sys.float_info.min)


def values_match(a: str, b: str, rtol: float) -> bool:
    """Within ``rtol`` relative, or one unit in the last printed digit where the program prints
    fewer digits than ``rtol`` can resolve (dcgan's %.4f, word_language_model's ppl)."""
    if a == b:
        return True
    x, y = float(a), float(b)
    if math.isnan(x) or math.isnan(y):
        return False
    printed_digits = min(_decimals(a), _decimals(b))
    unit = 10.0 ** -printed_digits if printed_digits else 0.0
    return abs(x - y) <= max(rtol * abs(x), unit * (1 + 1e-9))


# issue 22, lane mp
# NOTE: two Hogwild processes train one shared model; started together, the losses each prints
# depend on which update the other made first (timing, on both libraries), so the harness starts
# them in turn (PROGRAMS_PROCESSES_IN_TURN, sitecustomize.py): rank 0's dry-run batch on the
# initial weights, rank 1's on the weights rank 0 updated in shared memory, then the test average.
PROGRAMS["mnist_hogwild"] = Program(
    "mnist_hogwild", "mnist_hogwild", "main.py",
    ("--epochs", "1", "--dry-run", "--num-processes", "2", "--log-interval", "1"), _TRAIN_LOSS,
    env=(("PROGRAMS_PROCESSES_IN_TURN", "1"),),
    label="each process's first train loss (2 processes, in turn), then the test average")
