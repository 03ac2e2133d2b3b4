"""Target of bench-torch: a CPU training loop (an MLP of 4 Linear layers,
256 wide, batch 64, one torch thread).  Every step records its time (the
step's own work: zero_grad, forward, loss, backward, optimizer; not the
1 ms sleep between steps that lets the agent in) and whether our hooks
were on (fc1 has forward hooks).  summary() compares the two kinds of
steps of the last `window` steps: the ratio the bench prints."""

import sys
import time

import torch
from torch import nn

STEPS = []      # (ns, hooked)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(256, 256)
        self.fc2 = nn.Linear(256, 256)
        self.fc3 = nn.Linear(256, 256)
        self.out = nn.Linear(256, 10)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.out(self.act(self.fc3(self.act(self.fc2(self.act(self.fc1(x)))))))


def summary(window=2000):
    import statistics
    steps = STEPS[-window:]
    on = [ns for ns, h in steps if h]
    off = [ns for ns, h in steps if not h]
    if not on or not off:
        return "no steps under the hooks" if not on else "no steps without them"
    a, b = statistics.median(off) / 1e6, statistics.median(on) / 1e6
    return "%d %d %.3f %.3f %.4f" % (len(off), len(on), a, b, b / a)


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(64, 256)
    y = torch.randint(0, 10, (64,))
    fc1 = model.fc1
    for i in range(20):
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
    print("ready", flush=True)
    clock = time.perf_counter_ns
    while True:
        t0 = clock()
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
        STEPS.append((clock() - t0, bool(fc1._forward_hooks)))
        time.sleep(0.001)


if __name__ == "__main__":
    sys.exit(main())
