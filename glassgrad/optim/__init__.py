"""Optimizers and learning-rate schedulers (``torch.optim``). Re-exports only."""

from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "LBFGS", "Optimizer", "RMSprop", "lr_scheduler"]
