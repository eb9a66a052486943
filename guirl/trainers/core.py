"""The training loop every guirl trainer reuses, on ``accelerate``.

A trainer supplies a model, a list of training items, a collate function
and ``compute_loss(model, batch) -> (loss, metrics)``; this loop does the
rest: deterministic data order, gradient accumulation, mixed precision,
clipping, AdamW + warm-up schedule, periodic held-out evaluation, atomic
checkpoints with exact resume, TensorBoard (and Weights & Biases when
installed and enabled) logging and a console progress bar.

It runs as one CPU process and unchanged under ``accelerate launch`` on many
GPUs: data order is a seeded permutation per epoch, split over processes by
accelerate's dataloader preparation.

Exact resume: the data order depends only on (seed, epoch) and the step
count, and accelerate's state holds model, optimiser, scheduler and every
RNG; so a run killed at any point and resumed from its last checkpoint
reproduces the losses of an uninterrupted run.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import torch
from accelerate import Accelerator, PartialState
from accelerate.utils import set_seed
from pydantic import BaseModel, Field
from torch.utils.data import DataLoader, Sampler
from tqdm.auto import tqdm

from guirl.trainers.checkpoint import check_resume_config, latest_valid_checkpoint, load_checkpoint, save_checkpoint


class OptimConfig(BaseModel):
    lr: float = Field(1e-3, gt=0, description="peak learning rate (AdamW)")
    weight_decay: float = Field(0.0, ge=0, description="AdamW weight decay")
    betas: tuple[float, float] = Field((0.9, 0.999), description="AdamW betas")
    warmup_ratio: float = Field(0.0, ge=0, le=1, description="fraction of max_steps spent warming up linearly")
    schedule: Literal["constant", "cosine", "linear"] = Field("constant", description="decay after warm-up")
    max_grad_norm: float = Field(1.0, ge=0, description="gradient clipping norm (0 = off)")


class TrainerConfig(BaseModel):
    """Fields shared by every trainer."""

    output_dir: str = Field("runs/default", description="run directory: checkpoints, logs, final model")
    seed: int = Field(0, description="seed for model init, data order and sampling")
    max_steps: int = Field(100, gt=0, description="optimiser steps to train")
    batch_size: int = Field(8, gt=0, description="samples per micro-batch per process")
    grad_accum: int = Field(1, gt=0, description="micro-batches accumulated per optimiser step")
    mixed_precision: Literal["no", "fp16", "bf16"] = Field("no", description="autocast precision (GPU)")
    optim: OptimConfig = Field(default_factory=OptimConfig, description="optimiser and schedule")
    save_every: int = Field(100, ge=0, description="checkpoint every N steps (0 = only at the end)")
    keep_last: int = Field(2, gt=0, description="checkpoints kept on disk")
    eval_every: int = Field(0, ge=0, description="held-out evaluation every N steps (0 = off)")
    log_every: int = Field(10, gt=0, description="log metrics every N steps")
    resume: bool = Field(True, description="resume from the newest intact checkpoint in output_dir")
    report_to: list[str] = Field(default_factory=lambda: ["tensorboard"], description="trackers: tensorboard, wandb")
    num_threads: int = Field(0, ge=0, description="torch CPU threads (0 = torch default)")


class EpochPermutationSampler(Sampler[int]):
    """Seeded permutation of ``range(n)``, a new one per epoch, endless.

    Index ``k`` of the stream depends only on (seed, k), which makes the data
    order of a resumed run identical to an uninterrupted one.
    """

    def __init__(self, n: int, seed: int, start: int = 0):
        if n <= 0:
            raise ValueError("the training set is empty; generate or point to some data first")
        self.n, self.seed, self.start = n, seed, start

    def __iter__(self):
        k = self.start
        while True:
            epoch, offset = divmod(k, self.n)
            perm = torch.randperm(self.n, generator=torch.Generator().manual_seed(self.seed * 100_003 + epoch))
            for index in perm[offset:].tolist():
                yield index
            k = (epoch + 1) * self.n

    def __len__(self) -> int:  # a nominal length; the loop stops by steps
        return 2**31


def _lr_lambda(optim: OptimConfig, max_steps: int) -> Callable[[int], float]:
    warmup = int(optim.warmup_ratio * max_steps)

    def factor(step: int) -> float:
        if warmup and step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, max_steps - warmup)
        if optim.schedule == "cosine":
            return 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
        if optim.schedule == "linear":
            return max(0.0, 1 - progress)
        return 1.0

    return factor


def _multi_cpu() -> bool:
    """Several processes and no GPU: accelerate forms a (gloo) process group only
    when told to use the CPU, so say so under torchrun / accelerate launch."""
    return not torch.cuda.is_available() and int(os.environ.get("WORLD_SIZE", "1")) > 1


def process_state() -> PartialState:
    """This process among the training processes (rank 0 of 1 when run alone);
    use it to write shared files once (``is_main_process``, ``main_process_first``)."""
    return PartialState(cpu=_multi_cpu())


def _make_accelerator(cfg: TrainerConfig) -> Accelerator:
    trackers = [t for t in cfg.report_to if t != "wandb" or _wandb_available()]
    # Accumulation is done by the loop itself (no loss rescaling by accelerate):
    # compute_loss returns micro-batch losses that sum to the step's loss.
    acc = Accelerator(
        cpu=_multi_cpu(),
        # the schedule counts optimiser steps of the global batch: one scheduler
        # step per optimiser step, whatever the number of processes
        step_scheduler_with_optimizer=False,
        mixed_precision=cfg.mixed_precision if torch.cuda.is_available() else "no",
        log_with=trackers or None,
        project_dir=cfg.output_dir,
    )
    return acc


def _mean_over_processes(acc: Accelerator, metrics: dict[str, float]) -> dict[str, float]:
    """Each metric averaged over the processes that logged it.

    Each process's loss is its share of the step normalised by its own
    samples, so with equal shares the mean is the loss of the global batch."""
    if acc.num_processes == 1:
        return metrics
    # RL steps may log different keys per process (a process whose groups were all dropped has no
    # advantage statistics): agree on the union, then average each key over the processes that have it
    import torch.distributed as dist

    gathered: list[list[str]] = [[] for _ in range(acc.num_processes)]
    dist.all_gather_object(gathered, sorted(metrics))
    keys = sorted(set().union(*gathered))
    sums = torch.tensor([metrics.get(k, 0.0) for k in keys] + [float(k in metrics) for k in keys],
                        dtype=torch.float64, device=acc.device)
    sums = acc.reduce(sums, "sum")
    values, counts = sums[: len(keys)], sums[len(keys):]
    return {k: float(v / c) for k, v, c in zip(keys, values.tolist(), counts.tolist(), strict=True) if c > 0}


def _wandb_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("wandb") is not None


def _flat_config(data: dict, prefix: str = "") -> dict[str, Any]:
    """Dotted scalar config for trackers (TensorBoard hparams take scalars only)."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            flat.update(_flat_config(value, f"{prefix}{key}."))
        else:
            flat[prefix + key] = value if isinstance(value, (int, float, str, bool)) else str(value)
    return flat


def train(
    cfg: TrainerConfig,
    model: torch.nn.Module,
    items: Sequence[Any],
    collate: Callable[[list[Any]], dict[str, Any]],
    compute_loss: Callable[[torch.nn.Module, dict[str, Any], list[dict[str, Any]]], tuple[torch.Tensor, dict[str, float]]],
    evaluate: Callable[[torch.nn.Module, int], dict[str, float]] | None = None,
    on_step: Callable[[int, dict[str, float]], None] | None = None,
    prepare_step: Callable[[torch.nn.Module, int, list[Any]], tuple[list[Any], dict[str, float]]] | None = None,
) -> dict[str, Any]:
    """Train ``model`` for ``cfg.max_steps`` optimiser steps; return a summary.

    ``compute_loss(model, batch, step_batches)`` returns the loss of one
    micro-batch normalised by the whole step (``step_batches`` are all the
    micro-batches of this optimiser step, e.g. for the global token count of
    ``guirl.algorithms.aggregate_loss``), so micro-batch losses and gradients
    sum to those of the full batch, whatever the micro-batch size.

    Under ``torchrun`` / ``accelerate launch`` each process draws its own
    micro-batches of ``cfg.batch_size`` (the global batch is ``batch_size x
    grad_accum x processes``), gradients are averaged across processes, logged
    metrics are averaged too, and ``evaluate`` / ``on_step`` run on the main
    process only.
    """
    if cfg.num_threads:
        torch.set_num_threads(cfg.num_threads)
    Path(cfg.output_dir).mkdir(parents=True, exist_ok=True)
    acc = _make_accelerator(cfg)
    set_seed(cfg.seed)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=cfg.optim.lr, betas=cfg.optim.betas, weight_decay=cfg.optim.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, _lr_lambda(cfg.optim, cfg.max_steps))
    model, optimizer, scheduler = acc.prepare(model, optimizer, scheduler)

    step, history = 0, []
    config = cfg.model_dump(mode="json")  # stored with every checkpoint; a resume with another one is refused
    found = latest_valid_checkpoint(cfg.output_dir, log=acc.print) if cfg.resume else None
    if found is not None:
        check_resume_config(config, found[1], found[0], log=acc.print)
        state = load_checkpoint(acc, found[0])
        step, history = state["step"], state.get("history", [])
        acc.print(f"resumed from {found[0]} at step {step}")

    per_step = cfg.batch_size * cfg.grad_accum * acc.num_processes
    sampler = EpochPermutationSampler(len(items), cfg.seed, start=step * per_step)
    # A DataLoader iterator draws its base seed from `generator`, or from the
    # global RNG when none is given, which would shift dropout after a resume.
    loader = DataLoader(
        items, batch_size=cfg.batch_size, sampler=sampler, collate_fn=collate,
        generator=torch.Generator().manual_seed(cfg.seed),
    )
    loader = acc.prepare_data_loader(loader, device_placement=True)
    acc.init_trackers("guirl", config=_flat_config(cfg.model_dump(mode="json")))

    data = iter(loader)
    bar = tqdm(total=cfg.max_steps, initial=step, disable=not acc.is_main_process, desc="train")
    t0, samples_since = time.perf_counter(), 0
    model.train()
    while step < cfg.max_steps:
        batches = [next(data) for _ in range(cfg.grad_accum)]
        metrics_sum: dict[str, float] = {}
        prepared: dict[str, float] = {}
        if prepare_step is not None:
            batches, prepared = prepare_step(model, step, batches)
            model.train()
        update_start = time.perf_counter()
        for i, batch in enumerate(batches):
            # gradients are all-reduced only on the last micro-batch of the step
            sync = contextlib.nullcontext() if i == len(batches) - 1 else acc.no_sync(model)
            with sync, acc.autocast():
                loss, metrics = compute_loss(model, batch, batches)
                acc.backward(loss)
            for k, v in {"train/loss": float(loss.detach()), **metrics}.items():
                metrics_sum[k] = metrics_sum.get(k, 0.0) + v
        if cfg.optim.max_grad_norm > 0:
            metrics_sum["train/grad_norm"] = float(acc.clip_grad_norm_(model.parameters(), cfg.optim.max_grad_norm))
        optimizer.step()
        if not optimizer.step_was_skipped:  # fp16 overflow: the optimiser skipped this step
            scheduler.step()
        optimizer.zero_grad()
        step += 1
        samples_since += per_step
        # micro-batch losses sum to the step's loss; other metrics are averaged
        logged = {k: (v if k in ("train/loss", "train/grad_norm") else v / len(batches)) for k, v in metrics_sum.items()}
        if prepare_step is not None:
            logged |= prepared | {"time/update_s": time.perf_counter() - update_start}
        logged = _mean_over_processes(acc, logged)
        logged["train/lr"] = scheduler.get_last_lr()[0]
        history.append({"step": step, "loss": logged["train/loss"]})
        if on_step is not None and acc.is_main_process:
            on_step(step, logged)
        if step % cfg.log_every == 0 or step == cfg.max_steps:
            elapsed = time.perf_counter() - t0
            logged["perf/samples_per_s"] = samples_since / max(elapsed, 1e-9)
            t0, samples_since = time.perf_counter(), 0
            acc.log(logged, step=step)
            if acc.is_main_process:  # the same metrics as plain JSON lines, for scripts and reports
                with open(Path(cfg.output_dir) / "metrics.jsonl", "a") as fh:
                    fh.write(json.dumps({"step": step, **logged}) + "\n")
            bar.set_postfix(loss=f"{logged['train/loss']:.4f}", sps=f"{logged['perf/samples_per_s']:.1f}")
        bar.update(1)
        if evaluate is not None and cfg.eval_every and step % cfg.eval_every == 0:
            if acc.is_main_process:  # the others wait at the barrier below
                model.eval()
                with torch.no_grad():
                    scores = evaluate(acc.unwrap_model(model), step)
                model.train()
                acc.log(scores, step=step)
                history[-1].update(scores)
                with open(Path(cfg.output_dir) / "metrics.jsonl", "a") as fh:  # evaluation lines carry eval/* keys
                    fh.write(json.dumps({"step": step, **scores}) + "\n")
                acc.print(f"step {step}: " + ", ".join(f"{k}={v:.4f}" for k, v in scores.items()))
            acc.wait_for_everyone()
        if (cfg.save_every and step % cfg.save_every == 0) or step == cfg.max_steps:
            save_checkpoint(acc, cfg.output_dir, step, {"history": history, "config": config},
                            keep_last=cfg.keep_last)
    bar.close()
    for tracker in acc.trackers:  # not acc.end_training(): the process group lives on for the caller
        tracker.finish()          # (final save, the next curriculum stage) until the process ends
    return {"step": step, "history": history, "model": acc.unwrap_model(model)}
