"""A torchvision stand-in for running public PyTorch programs without downloads (programs/run.py).

Written only against the ``torch`` API (plus NumPy and PIL), so the very same code runs on real
torch and on glassgrad through ``glassgrad.alias``. It has what the pytorch/examples programs touch:
``datasets.MNIST`` (scikit-learn's bundled digits drawn at MNIST's 28x28 size), ``datasets.FakeData``,
``transforms`` (Compose, ToTensor, ToPILImage, Normalize, Resize, CenterCrop, Lambda),
``utils.make_grid`` / ``utils.save_image`` and ``models.resnet18``. Not part of the glassgrad
package; see programs/README.md.
"""

from . import datasets, models, transforms, utils  # noqa: F401

__version__ = "0.0+glassgrad-programs-shim"
