"""Bench row 10 (issue 20): one training step of a small CIFAR-style ResNet.

He et al. 2016's CIFAR family (6n+2 layers) at n=1, "ResNet-8": a 3x3 conv-BN-ReLU stem to 16
channels, then three residual blocks of two 3x3 conv-BN layers at 16, 32 and 64 channels (the
last two with stride 2 and a 1x1 conv-BN projection shortcut), global average pooling and a
Linear to 10 classes. The issue's "8 convs" is read as the name's 8 layers: 7 3x3 convs and the
Linear (plus the two 1x1 projections). Written once against ``lib`` from Conv2d, BatchNorm2d,
ReLU, AdaptiveAvgPool2d and Linear; weights and images come from NumPy.
"""

from __future__ import annotations

import numpy as np


_CLASSES: dict = {}


def resnet_classes(lib):
    """``(BasicBlock, ResNet8)`` subclassing ``lib.nn.Module`` (made once per library)."""
    if lib.__name__ in _CLASSES:
        return _CLASSES[lib.__name__]
    nn = lib.nn

    class BasicBlock(nn.Module):
        def __init__(self, c_in: int, c_out: int, stride: int):
            super().__init__()
            self.conv1 = nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(c_out)
            self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(c_out)
            self.relu = nn.ReLU()
            self.shortcut = nn.Identity()
            if stride != 1 or c_in != c_out:
                self.shortcut = nn.Sequential(
                    nn.Conv2d(c_in, c_out, 1, stride=stride, bias=False), nn.BatchNorm2d(c_out))

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + self.shortcut(x))

    class ResNet8(nn.Module):
        def __init__(self, classes: int = 10):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False),
                                      nn.BatchNorm2d(16), nn.ReLU())
            self.blocks = nn.Sequential(BasicBlock(16, 16, 1), BasicBlock(16, 32, 2),
                                        BasicBlock(32, 64, 2))
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(64, classes)

        def forward(self, x):
            return self.fc(self.pool(self.blocks(self.stem(x))).flatten(1))

    _CLASSES[lib.__name__] = (BasicBlock, ResNet8)
    return _CLASSES[lib.__name__]


def reset_batch_norms(lib, model) -> None:
    """BatchNorm weights back to 1 and biases to 0 (``init_from_numpy`` draws every 1-D
    parameter too)."""
    with lib.no_grad():
        for module in model.modules():
            if isinstance(module, lib.nn.BatchNorm2d):
                module.weight.fill_(1.0)
                module.bias.fill_(0.0)


def resnet_step(lib, batch: int = 32):
    """ResNet-8 on 32x3x32x32 images in training mode (batch statistics, running stats updated),
    cross-entropy, one SGD step with momentum 0.9."""
    from benchmarks.workloads import _array, init_from_numpy  # (late: workloads.py imports this module)

    _, ResNet8 = resnet_classes(lib)
    model = ResNet8()
    init_from_numpy(lib, model, 0)
    reset_batch_norms(lib, model)
    model.train()
    rng = np.random.default_rng(1)
    x = _array(lib, rng, (batch, 3, 32, 32))
    y = lib.from_numpy(rng.integers(0, 10, size=batch).astype(np.int64))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step():
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return step
