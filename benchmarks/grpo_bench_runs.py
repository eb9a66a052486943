"""The training runs of ``benchmarks/grpo_vs_trl.py``, each meant to run in a fresh child process.

- :func:`guirl_run`: :func:`guirl.trainers.grpo.train_grpo` with a step clock
  (the trainer core's ``on_step`` hook).
- :func:`trl_run`: TRL's ``GRPOTrainer`` on the same model, the same prompts
  in the same order (chat messages + screenshot, TRL's conversational image
  format), guirl's reward, the same G, length limit, learning rate and
  micro-batch, beta 0, and ``processor.tokenizer.padding_side = "left"``
  (TRL's padding-side trap: it rebuilds ``mm_token_type_ids`` with that side).

Both return per-step wall-clock and process CPU seconds, measured between the
ends of consecutive optimiser steps (so a step includes sampling, rewards,
scoring, backward and the optimiser; the final checkpoint / save comes after
the last mark and is not counted), the generation seconds of each step, the
mean completion length, and the process's peak RSS.
"""

from __future__ import annotations

import resource
import time
from pathlib import Path
from typing import Any


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class StepClock:
    """Wall-clock and CPU time at the end of each optimiser step."""

    def __init__(self) -> None:
        self.marks: list[tuple[float, float]] = []

    def mark(self) -> None:
        self.marks.append((time.perf_counter(), time.process_time()))

    def intervals(self) -> tuple[list[float], list[float]]:
        """(wall, cpu) seconds of steps 2..N (step 1 has no previous mark)."""
        pairs = list(zip(self.marks, self.marks[1:]))
        return [b[0] - a[0] for a, b in pairs], [b[1] - a[1] for a, b in pairs]


def state_order(num_states: int, seed: int, count: int) -> list[int]:
    """The first ``count`` state indices guirl's trainer core draws (its seeded per-epoch permutation)."""
    from guirl.trainers.core import EpochPermutationSampler

    stream = iter(EpochPermutationSampler(num_states, seed))
    return [next(stream) for _ in range(count)]


def guirl_run(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec``: model, train_data, out, steps, batch_size, group_size, micro_batch_size, max_new_tokens,
    lr, threads, seed, lora_rank, kl_coef."""
    import torch

    import guirl.trainers.core as core
    from guirl.trainers.grpo import GRPOConfig, train_grpo

    torch.set_num_threads(spec["threads"])
    clock, logged_rows = StepClock(), []
    plain_train = core.train

    def clocked_train(*args, **kwargs):
        def on_step(step: int, logged: dict[str, float]) -> None:
            clock.mark()
            logged_rows.append(logged)

        return plain_train(*args, on_step=on_step, **kwargs)

    core.train = clocked_train  # train_grpo imports core.train when called
    cfg = GRPOConfig(
        model=spec["model"],
        output_dir=spec["out"],
        train_data=[spec["train_data"]],
        seed=spec["seed"],
        max_steps=spec["steps"],
        batch_size=spec["batch_size"],
        group_size=spec["group_size"],
        micro_batch_size=spec["micro_batch_size"],
        max_new_tokens=spec["max_new_tokens"],
        rewards=[{"name": "litegui_ms", "kwargs": {"fmt": "qwen_computer_use"}}],
        num_threads=spec["threads"],
        save_every=0,
        log_every=1,
        report_to=[],
        resume=False,
        optim={"lr": spec["lr"]},
        lora_rank=spec.get("lora_rank", 0),
        kl_coef=spec.get("kl_coef", 0.0),
    )
    try:
        train_grpo(cfg)
    finally:
        core.train = plain_train
    wall, cpu = clock.intervals()
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "generate_s": [row["time/generate_s"] for row in logged_rows[1:]],
        "mean_length": [row["completions/mean_length"] for row in logged_rows[1:]],
        "peak_rss_mb": peak_rss_mb(),
    }


def trl_dataset(policy, states, order: list[int]):
    """TRL's conversational image dataset (``prompt`` messages, ``images``) + the state index for the reward."""
    from datasets import Dataset

    from guirl.rollout.history import recorded_prompt

    rows = []
    for i in order:
        state = states[i]
        prompt, _ = recorded_prompt(policy.prompt, policy.frame_for, state.episode, state.step, state.root)
        rows.append({"prompt": prompt.messages, "images": list(prompt.images), "state_index": i})
    return Dataset.from_list(rows)


def guirl_reward_for_trl(policy, states):
    """guirl's ``litegui_ms`` reward as a TRL reward function (``rl_trl.reward_function``: columns per state)."""
    from rl_trl import reward_function

    from guirl.trainers.rl_common import RewardSpec

    return reward_function([RewardSpec(name="litegui_ms", kwargs={"fmt": "qwen_computer_use"})], policy, states,
                           name="litegui_ms")


def check_same_prompt_ids(processor, row: dict[str, Any], guirl_ids: list[int]) -> None:
    """TRL renders ``row`` to exactly the token ids guirl's encoder gives (else the comparison is unfair)."""
    from trl.data_utils import apply_chat_template, prepare_multimodal_messages

    messages = prepare_multimodal_messages(row["prompt"], images=row["images"])
    text = apply_chat_template({"prompt": messages}, processor)["prompt"]
    ids = processor(text=[text], images=row["images"], return_tensors="pt")["input_ids"][0].tolist()
    if ids != guirl_ids:
        raise AssertionError(f"TRL's prompt ids differ from guirl's ({len(ids)} vs {len(guirl_ids)} tokens)")


def trl_run(spec: dict[str, Any]) -> dict[str, Any]:
    """TRL 1.16 ``GRPOTrainer`` configured like :func:`guirl_run` (``spec`` has the same keys)."""
    import torch
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from guirl.models.load import load_policy
    from guirl.models.scoring import encode_prompt
    from guirl.rollout.history import recorded_prompt
    from guirl.trainers.rl_common import load_states

    torch.set_num_threads(spec["threads"])
    torch.manual_seed(spec["seed"])
    policy = load_policy(spec["model"])
    policy.model.requires_grad_(True)
    processor = policy.processor
    processor.tokenizer.padding_side = "left"  # TRL rebuilds mm_token_type_ids with it
    states = load_states([spec["train_data"]])
    order = state_order(len(states), spec["seed"], spec["steps"] * spec["batch_size"])
    rows = trl_dataset(policy, states, order)
    first = states[order[0]]
    prompt, _ = recorded_prompt(policy.prompt, policy.frame_for, first.episode, first.step, first.root)
    check_same_prompt_ids(processor, rows[0], encode_prompt(processor, prompt).input_ids)

    samples_per_step = spec["batch_size"] * spec["group_size"]
    args = GRPOConfig(
        output_dir=spec["out"],
        seed=spec["seed"],
        max_steps=spec["steps"],
        learning_rate=spec["lr"],
        lr_scheduler_type="constant",
        warmup_steps=0,
        weight_decay=0.0,
        max_grad_norm=1.0,
        per_device_train_batch_size=spec["micro_batch_size"],
        gradient_accumulation_steps=samples_per_step // spec["micro_batch_size"],
        num_generations=spec["group_size"],
        max_completion_length=spec["max_new_tokens"],
        temperature=1.0,
        top_p=1.0,
        top_k=0,
        beta=0.0,
        num_iterations=1,
        shuffle_dataset=False,
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    clock, lengths, generate_s = StepClock(), [], []
    generating = {"s": 0.0}

    class Clock(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            clock.mark()
            generate_s.append(generating["s"])
            generating["s"] = 0.0

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "completions/mean_length" in logs:
                lengths.append(logs["completions/mean_length"])

    trainer = GRPOTrainer(
        model=policy.model,
        reward_funcs=[guirl_reward_for_trl(policy, states)],
        args=args,
        train_dataset=rows,
        processing_class=processor,
        callbacks=[Clock()],
    )
    plain_generate = trainer._generate_single_turn

    def timed_generate(*a, **kw):
        start = time.perf_counter()
        try:
            return plain_generate(*a, **kw)
        finally:
            generating["s"] += time.perf_counter() - start

    trainer._generate_single_turn = timed_generate
    trainer.train()
    wall, cpu = clock.intervals()
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "generate_s": generate_s[1:],
        "mean_length": lengths[1:],
        "peak_rss_mb": peak_rss_mb(),
        "prompts_identical": True,
    }


RUNS = {"guirl": guirl_run, "trl": trl_run}


def run_child(kind: str, spec: dict[str, Any], result: Path) -> None:
    import json

    result.write_text(json.dumps(RUNS[kind](spec)))
