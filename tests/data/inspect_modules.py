"""A training script written against torch (run by tests/test_inspect_report.py under both)."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(x + F.relu(self.fc(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(8, 32)
        self.blocks = nn.Sequential(Block(32), Block(32))
        self.head = nn.Linear(32, 1)

    def forward(self, x):
        return self.head(self.blocks(self.embed(x)))


torch.manual_seed(0)
model = Net()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
x, y = torch.randn(64, 8), torch.randn(64, 1)
total_loss = 0
for i in range(int(sys.argv[1])):
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    total_loss += loss  # the classic leak: every step's graph stays reachable
    loss.backward()
    opt.step()
print("trained", i + 1)
