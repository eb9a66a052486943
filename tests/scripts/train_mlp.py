"""A small regression run through guirl's trainer core (used by the resume tests).

usage: train_mlp.py OUTPUT_DIR MAX_STEPS [SLEEP_PER_STEP [BATCH_SIZE [DROPOUT]]]
Writes one JSON line per optimiser step to OUTPUT_DIR/losses.jsonl and, at the
end, the trained weights to OUTPUT_DIR/final_rank<RANK>.pt. Runs as one process or under
torchrun (BATCH_SIZE is per process; 2 micro-batches are accumulated per step).
"""

import json
import os
import sys
import time
from pathlib import Path

import torch

from guirl.trainers.core import OptimConfig, TrainerConfig, process_state, train

out, max_steps = Path(sys.argv[1]), int(sys.argv[2])
pause = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
batch_size = int(sys.argv[4]) if len(sys.argv) > 4 else 8
dropout = float(sys.argv[5]) if len(sys.argv) > 5 else 0.2
torch.manual_seed(0)
g = torch.Generator().manual_seed(1)
xs = torch.randn(64, 4, generator=g)
ys = xs @ torch.tensor([1.0, -2.0, 0.5, 3.0]) + 0.1 * torch.randn(64, generator=g)
items = [(xs[i], ys[i]) for i in range(64)]
model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Dropout(dropout), torch.nn.Linear(16, 1))


def collate(batch):
    return {"x": torch.stack([b[0] for b in batch]), "y": torch.stack([b[1] for b in batch])}


def compute_loss(m, batch, step_batches):
    pred = m(batch["x"]).squeeze(-1)
    # sum over this micro-batch / samples in the step: micro-batch losses sum to the full-batch mean
    total = sum(len(b["y"]) for b in step_batches)
    return ((pred - batch["y"]) ** 2).sum() / total, {}


cfg = TrainerConfig(
    output_dir=str(out), seed=5, max_steps=max_steps, batch_size=batch_size, grad_accum=2, save_every=3,
    optim=OptimConfig(lr=0.01, warmup_ratio=0.2, schedule="cosine"), report_to=[], log_every=1,
)


def on_step(step, metrics):
    with (out / "losses.jsonl").open("a") as fh:
        fh.write(json.dumps({"step": step, "loss": metrics["train/loss"]}) + "\n")
    time.sleep(pause)


result = train(cfg, model, items, collate, compute_loss, on_step=on_step)
torch.save(result["model"].state_dict(), out / f"final_rank{os.environ.get('RANK', '0')}.pt")
# as `guirl train` ends: every process done, then the (gloo) process group closed; a process that exits with it
# open can abort in the group's threads at interpreter exit ("terminate called without an active exception")
state = process_state()
state.wait_for_everyone()
state.destroy_process_group()
