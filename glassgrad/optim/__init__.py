"""Optimizers and learning-rate schedulers (``torch.optim``). Re-exports only."""

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = [
    "ASGD", "SGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "Muon",
    "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "lr_scheduler", "swa_utils",
]

# issue 16, lane optim
from ._stateless import swap_in_optimizer_params_and_state  # noqa: E402

swap_in_optimizer_params_and_state.__module__ = __name__  # as torch.optim shows it
__all__ += ["swap_in_optimizer_params_and_state"]
# issue 16, lane embed
from .sparse_adam import SparseAdam  # noqa: E402

__all__ += ["SparseAdam"]
