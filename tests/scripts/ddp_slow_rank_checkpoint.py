"""One checkpoint saved by two processes, rank 1 slow to write its RNG state (used by test_trainer_core).

usage: torchrun --nproc_per_node 2 ddp_slow_rank_checkpoint.py OUTPUT_DIR
Rank 1 waits 2 s before writing ``random_states_1.pkl``; the checkpoint must still verify and list that file.
"""

import os
import sys
import time
from pathlib import Path

import torch
from accelerate import Accelerator

from guirl.trainers.checkpoint import save_checkpoint, verify_checkpoint

out = Path(sys.argv[1])
acc = Accelerator(cpu=True)
model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = acc.prepare(model, optimizer)
if acc.process_index == 1:
    save = torch.save

    def slow_save(obj, f, *args, **kwargs):
        if Path(str(f)).name.startswith("random_states"):
            time.sleep(2.0)
        return save(obj, f, *args, **kwargs)

    torch.save = slow_save
final = save_checkpoint(acc, out, 1, {"note": "slow rank"})
if acc.is_main_process:
    state = verify_checkpoint(final)
    manifest = (final / "MANIFEST.json").read_text()
    assert "random_states_1.pkl" in manifest and state["note"] == "slow rank", manifest
    print("ok", os.environ.get("WORLD_SIZE"))
