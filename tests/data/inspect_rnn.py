"""A recurrent loop that carries its hidden state across steps without .detach()."""
import torch
import torch.nn as nn

torch.manual_seed(0)
cell = nn.RNNCell(4, 8)
head = nn.Linear(8, 1)
h = torch.zeros(2, 8)
for step in range(3):
    x = torch.randn(2, 4)
    h = cell(x, h)
    out = head(h)
    loss = out.pow(2).mean()
    loss.backward(retain_graph=True)
    print("grad of a non-leaf:", out.grad)
