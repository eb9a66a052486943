"""The driver of online RL (``guirl train computersd``): the sync / async ``prepare_step``, held-out episodes.

:class:`OnlineSampler` is the trainer core's ``prepare_step``. ``mode: sync`` runs the stages of
:class:`~guirl.trainers.computersd.ComputerSD` (rollout, analysis, rescoring) on the trainer's model,
then scores; ``mode: async`` starts a :class:`~guirl.trainers.async_pipeline.StagePipeline` whose
rollout and rescoring stages own model replicas that load the weights published at every step. With
``rollout_cpus`` that pipeline runs in a process of its own on those cores
(:class:`~guirl.trainers.async_process.ProcessPipeline`, built by :func:`rollout_side`), the trainer's
process on ``trainer_cpus``.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

from guirl.trainers.async_pipeline import StagePipeline, StalenessGate, WeightSlot
from guirl.trainers.async_process import ProcessPipeline, SharedWeightSlot, check_cpus, pin_threads, unpin_threads
from guirl.trainers.computersd import ComputerSD, ComputerSDConfig
from guirl.trainers.computersd_loss import computersd_loss


class OnlineSampler:
    def __init__(self, cfg: ComputerSDConfig, policy, method: ComputerSD, reference=None):
        from guirl.rollout.hf_engine import HFEngine

        self.cfg, self.policy, self.method, self.reference = cfg, policy, method, reference
        self.engine_for = lambda model: HFEngine(model, policy.processor, max_batch_rows=cfg.engine_max_rows)
        # with separated cores the environments live in the rollout side's process (and on its cores)
        self.envs = None if cfg.mode == "async" and cfg.rollout_cpus else training_envs(cfg)
        self.engine = HFEngine.from_policy(policy, max_batch_rows=cfg.engine_max_rows)
        self.gate = StalenessGate(cfg.max_staleness, cfg.stale_policy)
        self.pipeline: StagePipeline | ProcessPipeline | None = None
        self.accounting: dict[str, Any] = {}
        self.started = time.perf_counter()
        self.trajectories = 0

    def draw(self, round_index: int) -> list[tuple[str, int]]:
        return draw_round(self.cfg, self.method.items, round_index)

    # -- async ------------------------------------------------------------------------------------
    def _start_async(self, model, step: int) -> None:
        cfg, method = self.cfg, self.method
        in_flight = max(1, cfg.max_staleness)
        if cfg.rollout_cpus:
            self.slot = SharedWeightSlot(model, step)
            self.pipeline = ProcessPipeline(rollout_side, (cfg, self.slot, step), cpus=cfg.rollout_cpus, maxsize=1,
                                            max_in_flight=in_flight).start()
            return
        self.slot = WeightSlot(model, step)
        roll_model, score_model = self.slot.replica(model), self.slot.replica(model)
        source, stages = async_stages(cfg, method, self.engine_for(roll_model), self.envs, roll_model, score_model,
                                      self.slot, step, have=step)
        self.pipeline = StagePipeline(source, stages, maxsize=1, max_in_flight=in_flight).start()

    def _next_async(self, model, step: int):
        if self.pipeline is None:
            self._start_async(model, step)
        else:
            self.slot.publish(model, step)
        while True:
            batch = self.pipeline.get()
            if self.gate.admit(batch.version, step):
                return batch

    def close(self) -> None:
        """Stop the pipeline; ``accounting`` then says where every produced batch went (``dropped``: by the
        staleness gate; ``left_over``: finished, not trained on; ``unfinished``: inside the pipeline)."""
        if self.pipeline is not None:
            self.pipeline.stop()
            self.accounting = self.pipeline.accounting() | {"dropped": self.gate.dropped}
            if getattr(self.pipeline, "worker", None):  # the rollout side's process: pid, cores, torch threads
                self.accounting["rollout_side"] = self.pipeline.worker
        if self.envs is not None:
            self.envs.close()

    # -- prepare_step -----------------------------------------------------------------------------
    def __call__(self, model, step: int, batches):
        """The step's micro-batches (``batches``, the core's draw, is not used: rounds draw their own tasks)."""
        from guirl.trainers.rl_common import micro_batches

        cfg, method = self.cfg, self.method
        model = getattr(model, "module", model)
        t0 = time.perf_counter()
        if cfg.mode == "async":
            batch = self._next_async(model, step)
        else:
            self.engine.update_weights(model, step)
            batch = method.rollout(self.engine, self.envs, self.draw(step), step, seed=cfg.seed * 1_000_003 + step * 1_009)
            batch = method.rescore(model, method.analyze(batch))
            self.gate.admit(batch.version, step)
        wait_s = time.perf_counter() - t0
        samples, metrics = method.score(batch)
        if self.reference is not None and samples:
            t1 = time.perf_counter()
            for i in range(0, len(samples), cfg.micro_batch_size):
                chunk = samples[i : i + cfg.micro_batch_size]
                for s, ref in zip(chunk, self.reference.logprobs(model, chunk, cfg.temperature), strict=True):
                    s.ref_logprobs = ref
            metrics["time/reference_s"] = time.perf_counter() - t1
        self.trajectories += len(batch.trajectories)
        elapsed = time.perf_counter() - self.started
        metrics |= self.gate.metrics() | {
            "time/wait_for_batch_s": wait_s,
            "perf/trajectories_per_hour": 3600.0 * self.trajectories / max(elapsed, 1e-9),
            "async/batch_version": float(batch.version),
        }
        if self.pipeline is not None:
            metrics |= {f"async/{k[5:]}": v for k, v in self.pipeline.stage_times().items()}
        num_micro = max(1, -(-len(samples) // cfg.micro_batch_size))
        return micro_batches(samples, cfg.micro_batch_size, num_micro), metrics


def draw_round(cfg: ComputerSDConfig, items: list, round_index: int) -> list[tuple[str, int]]:
    """The (task, seed) pairs of rollout round ``round_index``: a function of the seed and the round only,
    so both modes play the same tasks in the same order and a resumed run draws what it would have."""
    rng = random.Random(cfg.seed * 7_919 + round_index)
    return rng.sample(items, min(cfg.batch_size * cfg.grad_accum, len(items)))


def async_stages(cfg: ComputerSDConfig, method: ComputerSD, roll_engine, envs, roll_model, score_model, slot,
                 step: int, have: int):
    """The asynchronous pipeline's source (rollout rounds from ``step`` on) and stages (analysis,
    rescoring); the replicas hold weights version ``have`` and load newer ones from ``slot``."""
    state = {"roll": have, "score": have, "round": step}

    def source():
        state["roll"] = slot.sync(roll_model, state["roll"])
        roll_engine.update_weights(roll_model, state["roll"])
        index, state["round"] = state["round"], state["round"] + 1
        return method.rollout(roll_engine, envs, draw_round(cfg, method.items, index), state["roll"],
                              seed=cfg.seed * 1_000_003 + index * 1_009)

    def rescore(batch):
        state["score"] = slot.sync(score_model, state["score"])
        return method.rescore(score_model, batch)

    return source, [("analysis", method.analyze), ("rescore", rescore)]


def rollout_side(cfg: ComputerSDConfig, slot: SharedWeightSlot, step: int):
    """The rollout side in its own process (:class:`ProcessPipeline` calls it there, already pinned): its own
    policy (the trainer's weights come from ``slot`` before the first round), environments and analyzer."""
    from guirl.rollout.hf_engine import HFEngine

    policy = load_online_policy(cfg)
    method = ComputerSD(cfg, policy)
    roll_model, score_model = slot.replica(policy.model), slot.replica(policy.model)
    policy.model = roll_model  # the replicas are all this side needs
    ours, theirs = set(roll_model.state_dict()), set(slot._state)
    if ours != theirs:
        raise RuntimeError(f"the rollout side's model does not match the trainer's: {len(ours - theirs)} keys only "
                           f"here (e.g. {sorted(ours - theirs)[:3]}), {len(theirs - ours)} only there")
    envs = training_envs(cfg)
    engine = HFEngine(roll_model, policy.processor, max_batch_rows=cfg.engine_max_rows)
    source, stages = async_stages(cfg, method, engine, envs, roll_model, score_model, slot, step, have=-1)
    return source, [*stages, ("pack", method.pack)], envs.close


def training_envs(cfg: ComputerSDConfig):
    """The environments of training rollouts: in this process, or an environment pool with one worker per
    live episode."""
    from guirl.envs.base import make_env
    from guirl.rollout.online import EnvSlots, PoolSlots

    if cfg.env_backend == "local":
        return EnvSlots(lambda: make_env(cfg.env, **cfg.env_kwargs))
    from guirl.envs.backends import make_pool

    workers = cfg.batch_size * cfg.grad_accum * cfg.group_size
    return PoolSlots(make_pool(cfg.env, workers, cfg.env_kwargs, backend=cfg.env_backend))


def online_evaluator(cfg: ComputerSDConfig, policy):
    """``evaluate(model, step)``: greedy whole episodes on held-out seeds of ``eval_tasks``, or None."""
    from guirl.envs.base import make_env
    from guirl.rollout.engine import SamplingParams
    from guirl.rollout.hf_engine import HFEngine
    from guirl.rollout.online import EnvSlots, online_success, run_online
    from guirl.rollout.runner import EpisodeSpec

    if not cfg.eval_episodes:
        return None
    tasks = cfg.eval_tasks or cfg.tasks
    specs = [EpisodeSpec(task=t, seed=cfg.eval_seed_start + k) for t in tasks for k in range(cfg.eval_episodes)]
    envs = EnvSlots(lambda: make_env(cfg.env, **cfg.env_kwargs))

    def evaluate(model, step):
        engine = HFEngine(model, policy.processor, max_batch_rows=cfg.engine_max_rows)
        engine.update_weights(model, step)
        params = SamplingParams(n=1, temperature=0.0, max_new_tokens=cfg.max_new_tokens, seed=0)
        trajs, _ = run_online(engine, policy, envs, specs, params, cfg.eval_max_steps, guidance=cfg.eval_guidance)
        return {f"eval/{k}": v for k, v in online_success(trajs).items()}

    return evaluate


def load_online_policy(cfg: ComputerSDConfig):
    from guirl.models.load import load_rollout_policy

    return load_rollout_policy(cfg.model, cfg.lora_rank, cfg.format, cfg.history_window, cfg.history_images)


def train_computersd(cfg: ComputerSDConfig) -> dict[str, Any]:
    """Run ComputerSD (or one of its baselines) as configured; the final model goes to ``output_dir/final``."""
    from guirl.envs.base import available_envs
    from guirl.trainers.core import process_state

    if cfg.env not in available_envs():
        raise ValueError(f"env {cfg.env!r} is not a registered environment; choose one of {available_envs()}")
    if not cfg.tasks:
        raise ValueError("tasks is empty: name at least one training task (e.g. tasks=[desktop.open_file])")
    if process_state().num_processes > 1:
        raise ValueError("computersd runs on one process for now; launch it without accelerate / torchrun")
    check_cpus("rollout_cpus", cfg.rollout_cpus)
    check_cpus("trainer_cpus", cfg.trainer_cpus)
    unpin = pin_threads(cfg.trainer_cpus) if cfg.trainer_cpus else None  # loading and all included
    try:
        return _train_computersd(cfg)
    finally:
        if unpin is not None:  # the caller's process (a test, a notebook) gets its cores back
            unpin_threads(unpin)


def _train_computersd(cfg: ComputerSDConfig) -> dict[str, Any]:
    import torch

    from guirl.trainers.core import train
    from guirl.trainers.grpo import save_final
    from guirl.trainers.rl_common import ReferencePolicy

    torch.manual_seed(cfg.seed)
    policy = load_online_policy(cfg)
    method = ComputerSD(cfg, policy, with_analyzer=not (cfg.mode == "async" and cfg.rollout_cpus))
    reference = ReferencePolicy(policy.model, policy.processor, frozen=method.teacher) if cfg.kl_coef else None
    sampler = OnlineSampler(cfg, policy, method, reference)
    evaluate = online_evaluator(cfg, policy)

    def compute_loss(model, batch, step_batches):
        return computersd_loss(model, policy.processor, batch, step_batches, cfg)

    random.seed(cfg.seed)
    try:
        result = train(cfg, policy.model, method.items, list, compute_loss, evaluate=evaluate, prepare_step=sampler)
    finally:
        sampler.close()
    result["final_dir"] = save_final(policy, result["model"], Path(cfg.output_dir))
    result["trajectories"] = sampler.trajectories
    if sampler.accounting:
        result["async_accounting"] = sampler.accounting
    if evaluate is not None:
        result["final_eval"] = evaluate(result["model"], result["step"])
        write_json(Path(cfg.output_dir) / "final_eval.json", {"step": result["step"], **result["final_eval"]})
    return result


def evaluate_checkpoint(cfg: ComputerSDConfig) -> dict[str, float]:
    """Held-out whole-episode success of ``cfg.model`` as it is (the starting point; with ``eval_guidance``,
    the prompt-only baseline)."""
    policy = load_online_policy(cfg)
    evaluate = online_evaluator(cfg, policy)
    if evaluate is None:
        raise ValueError("eval_episodes is 0: set eval_episodes > 0 to evaluate")
    return evaluate(policy.model, 0)


def write_json(path: Path, data: dict) -> None:
    import json
    import os

    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)


__all__ = ["OnlineSampler", "evaluate_checkpoint", "load_online_policy", "online_evaluator", "train_computersd"]
