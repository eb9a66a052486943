"""Trainer core: exact resume after kill -9, corrupt checkpoints detected."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from guirl.trainers.checkpoint import CheckpointError, latest_valid_checkpoint, list_checkpoints, verify_checkpoint

SCRIPT = Path(__file__).parent / "scripts" / "train_mlp.py"


def _run(out: Path, steps: int, pause: float = 0.0) -> subprocess.Popen:
    return _run_args(out, steps, str(pause))


def _run_args(out: Path, steps: int, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(SCRIPT), str(out), str(steps), *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _losses(out: Path) -> dict[int, float]:
    rows = [json.loads(line) for line in (out / "losses.jsonl").read_text().splitlines()]
    return {r["step"]: r["loss"] for r in rows}  # a resumed run rewrites steps after its checkpoint


def test_kill_9_then_resume_gives_the_same_losses(tmp_path):
    straight = tmp_path / "straight"
    assert _run(straight, 12).wait(timeout=240) == 0
    reference = _losses(straight)
    assert sorted(reference) == list(range(1, 13))

    killed = tmp_path / "killed"
    proc = _run(killed, 12, pause=0.4)
    deadline = time.time() + 200
    # wait until a checkpoint past step 3 exists and training has moved on, then kill -9
    while time.time() < deadline:
        steps = _losses(killed) if (killed / "losses.jsonl").exists() else {}
        if len(list_checkpoints(killed)) >= 2 and max(steps, default=0) >= 7:
            break
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert max(_losses(killed)) < 12, "the run finished before it could be killed"
    assert _run(killed, 12).wait(timeout=240) == 0
    resumed = _losses(killed)
    assert sorted(resumed) == list(range(1, 13))
    for step in range(1, 13):
        assert resumed[step] == pytest.approx(reference[step], abs=1e-6), step


def test_corrupt_checkpoint_is_detected_and_previous_kept(tmp_path):
    out = tmp_path / "run"
    assert _run(out, 6).wait(timeout=240) == 0
    ckpts = list_checkpoints(out)
    assert [p.name for p in ckpts] == ["step_00000003", "step_00000006"]
    weights = next(p for p in ckpts[-1].rglob("*.safetensors"))
    weights.write_bytes(weights.read_bytes()[:-7] + b"garbage")
    with pytest.raises(CheckpointError, match=r"step_00000006: file .*safetensors is corrupt"):
        verify_checkpoint(ckpts[-1])
    messages = []
    path, state = latest_valid_checkpoint(out, log=messages.append)
    assert path == ckpts[0] and state["step"] == 3
    assert "corrupt" in messages[0] and "falling back" in messages[0]
    assert ckpts[-1].exists(), "a load never deletes what is on disk"


def _torchrun(out: Path, steps: int, batch_size: int) -> subprocess.CompletedProcess:
    """Two CPU processes (gloo), as `accelerate launch` / torchrun start them on GPUs."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           str(SCRIPT), str(out), str(steps), "0", str(batch_size), "0"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def test_two_processes_match_one_process_with_the_same_global_batch(tmp_path):
    # one process: 2 micro-batches of 8 per step; two processes: 2 micro-batches of 4 each -> 16 samples per step
    single, ddp = tmp_path / "single", tmp_path / "ddp"
    assert _run_args(single, 12, "0", "8", "0").wait(timeout=240) == 0
    done = _torchrun(ddp, 12, 4)
    assert done.returncode == 0, done.stderr[-3000:]
    # the same samples, gradients averaged across processes, one scheduler step per optimiser step
    reference, losses = _losses(single), _losses(ddp)
    assert sorted(losses) == list(range(1, 13))  # logged once (main process), averaged over both
    for step in range(1, 13):
        assert losses[step] == pytest.approx(reference[step], rel=1e-5), step
    rank0, rank1 = torch.load(ddp / "final_rank0.pt"), torch.load(ddp / "final_rank1.pt")
    one = torch.load(single / "final_rank0.pt")
    for name, weight in rank0.items():
        assert torch.equal(weight, rank1[name])
        assert torch.allclose(weight, one[name], atol=1e-5), name

    # resume under two processes: drop the last checkpoint, rerun, and steps 10-12 come out the same
    last = list_checkpoints(ddp)[-1]
    assert last.name == "step_00000012"
    shutil.rmtree(last)
    (ddp / "losses.jsonl").write_text("")
    done = _torchrun(ddp, 12, 4)
    assert done.returncode == 0, done.stderr[-3000:]
    resumed = _losses(ddp)
    assert sorted(resumed) == [10, 11, 12]
    for step in (10, 11, 12):
        assert resumed[step] == pytest.approx(losses[step], abs=1e-9), step


def test_checkpoint_waits_for_a_slow_process_before_hashing(tmp_path):
    # each process writes its own RNG state file; rank 0 must not hash (or rename) the directory before rank 1 is done
    script = Path(__file__).parent / "scripts" / "ddp_slow_rank_checkpoint.py"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", str(script), str(tmp_path)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ok 2" in done.stdout
    assert (tmp_path / "checkpoints" / "step_00000001" / "random_states_1.pkl").is_file()
