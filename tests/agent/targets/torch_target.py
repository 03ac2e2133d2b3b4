"""Target of the torch tests: a small CPU training loop with a fixed seed.
Model has two Linear layers, an in-place ReLU and an in-place residual add
(the in-place changes are what full backward hooks break).  Each step's
loss goes to TORCH_LOSS_FILE, one repr per line.  The loop runs until the
file named by TORCH_STOP_FILE appears (then it exits with status 0), or
for TORCH_STEPS steps when that is set (a reference run).  Between steps
the main thread sleeps 5 ms (where the agent is injected), and waits while
the file named by TORCH_PAUSE_FILE exists (no step runs then)."""

import os
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "targets"))
from _fptarget import signal_ready  # noqa: E402


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.act = nn.ReLU(inplace=True)
        self.fc2 = nn.Linear(64, 64)
        self.head = nn.Linear(64, 4)

    def forward(self, x):
        h = self.act(self.fc1(x))
        g = self.fc2(h)
        g += h
        return self.head(g)

    def never_called(self):
        return None


MODEL = None


def hooks_left():
    """Hooks on the model's modules and parameters (none but ours exist)."""
    n = 0
    for m in MODEL.modules():
        n += len(m._forward_hooks) + len(m._forward_pre_hooks) + len(m._backward_hooks)
    for p in MODEL.parameters():
        n += p._backward_hooks is not None   # not even an empty dict
    for name in ("forward", "never_called"):
        n += bool(getattr(Model.__dict__[name], "_fp_watch", False))
    return n


def main():
    global MODEL
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = MODEL = Model()
    loss_fn = nn.MSELoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(16, 32)
    y = torch.randn(16, 4)
    stop = os.environ.get("TORCH_STOP_FILE", "")
    pause = os.environ.get("TORCH_PAUSE_FILE", "")
    steps = int(os.environ.get("TORCH_STEPS", "0"))
    out = open(os.environ["TORCH_LOSS_FILE"], "w")
    if not steps:
        signal_ready()
    step = 0
    while True:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        out.write(repr(loss.item()) + "\n")
        out.flush()
        step += 1
        if steps and step >= steps:
            break
        if stop and os.path.exists(stop):
            break
        time.sleep(0.005)
        while pause and os.path.exists(pause):
            time.sleep(0.005)
    out.close()


main()
