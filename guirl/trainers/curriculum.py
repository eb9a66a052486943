"""The tiny base agent: staged SFT from scratch on the built-in world.

``guirl train curriculum --config recipes/base_agent_tiny.yaml`` builds a
tiny Qwen-VL from config, then runs SFT stages in order, each starting from
the previous stage's model (docs/models.md: reading coordinates out as digit
tokens is learnt first on lone widgets; finding the element named by its
text on a full screen comes after):

1. ``locate``: one labelled button at a random place on a plain screen;
2. ``grounding``: the sim world's single-step grounding screens;
3. ``trajectories``: the sim world's multi-step expert steps (+ error recovery).

Every stage generates its data from the config's seed (so the run is
reproducible), trains with :func:`guirl.trainers.sft.train_sft` (atomic
checkpoints, exact resume: rerun the same command after an interruption and
finished stages are skipped), and the final model is evaluated on held-out
screens (unseen seeds) and held-out task families. Scores go to
``<output_dir>/scores.json``.
"""

from __future__ import annotations

import json
import random
import resource
import shutil
import sys
import time
from pathlib import Path
from typing import Literal

from PIL import Image, ImageDraw
from pydantic import BaseModel, Field

from guirl.actions import Action, ActionType, Frame
from guirl.data import Episode, ImageRef, Step, read_episodes, write_episodes
from guirl.trainers.core import OptimConfig, process_state
from guirl.trainers.sft import SFTConfig, heldout_step_metrics, train_sft

LOCATE_WORDS = ("OK", "Save", "Open", "Send", "Next", "Back", "Help", "Close", "Cancel", "Apply", "Search", "Export")


class StageConfig(BaseModel):
    name: str = Field(description="stage name (its directory under output_dir)")
    data: Literal["locate", "grounding", "trajectories"] = Field(description="which generated data to train on")
    samples: int = Field(2000, gt=0, description="training samples generated for this stage (per domain for sim sets)")
    max_steps: int = Field(500, gt=0, description="optimiser steps of this stage")
    lr: float = Field(1e-3, gt=0, description="peak learning rate")
    warmup_ratio: float = Field(0.05, ge=0, le=1, description="linear warm-up share of the stage's steps")
    thought: bool = Field(True, description="targets of this stage carry the thought (when the curriculum's "
                          "thought is on); off: direct answers, the prompt says so")


class CurriculumConfig(BaseModel):
    output_dir: str = Field("runs/base-agent", description="run directory (data, stages, final model, scores)")
    seed: int = Field(0, description="seed of the model, the data and the data order")
    arch: Literal["qwen2_5_vl", "qwen3_vl"] = Field("qwen3_vl", description="architecture built from config")
    size: str = Field("tiny", description="model size preset")
    size_overrides: dict[str, int] = Field(default_factory=dict, description="fields of the size preset changed, "
                                           "e.g. {vision_depth: 5, vision_hidden: 192} (guirl.models.sizes.ModelSize)")
    max_visual_tokens: int = Field(64, ge=4, description="visual tokens per screenshot at most (input resolution: "
                                   "a 256x256 screen is 64 tokens)")
    format: str = Field("qwen_computer_use", description="output format the agent writes")
    prompt_style: Literal["full", "compact"] = Field("compact", description="system prompt style")
    batch_size: int = Field(16, gt=0, description="samples per optimiser step")
    num_threads: int = Field(2, ge=0, description="torch CPU threads")
    eval_every: int = Field(250, ge=0, description="held-out evaluation every N steps within a stage (0 = off)")
    eval_samples: int = Field(48, gt=0, description="held-out steps per evaluation")
    save_every: int = Field(100, ge=0, description="checkpoint every N steps")
    domains: list[str] = Field(default_factory=lambda: ["desktop", "web", "mobile"], description="sim domains")
    history_window: int = Field(0, ge=0, description="previous steps shown in the prompt (its own past actions)")
    history_text: Literal["output", "action"] = Field(
        "output", description="a past step as text: raw output, or the action as the model writes it (no thought)"
    )
    thought: Literal["none", "sub_goal"] = Field(
        "none", description="sub_goal: every target starts with <think>current sub-goal</think> (the world "
        "oracle's; the instruction on single-step screens) and the prompt asks for it (PromptSpec.reasoning)"
    )
    stages: list[StageConfig] = Field(description="the stages, in order")


def make_locate_set(out: Path, n: int, seed: int, size: int = 512) -> Path:
    """``n`` screens with one labelled button (48-96 px tall at ``size``); JSONL path."""
    from guirl.envs.sim.render import font

    rng = random.Random(seed)
    (out / "images").mkdir(parents=True, exist_ok=True)
    episodes, frame = [], Frame.screen(size, size)
    for i in range(n):
        word = rng.choice(LOCATE_WORDS)
        w, h = rng.randint(96, 200), rng.randint(48, 96)
        x, y = rng.randint(0, size - w), rng.randint(0, size - h)
        bg = tuple(rng.randint(200, 245) for _ in range(3))
        fg = tuple(rng.randint(20, 120) for _ in range(3))
        img = Image.new("RGB", (size, size), bg)
        draw = ImageDraw.Draw(img)
        draw.rounded_rectangle([x, y, x + w, y + h], radius=8, fill=fg)
        draw.text((x + w / 2, y + h / 2), word, fill=(255, 255, 255), font=font(26), anchor="mm")
        rel = f"images/{i}.png"
        img.save(out / rel)
        box = (float(x), float(y), float(x + w), float(y + h))
        action = Action(type=ActionType.CLICK, box=box, description=f"click the '{word}' button", frame=frame)
        step = Step(index=0, screenshot=ImageRef(path=rel, width=size, height=size), valid_actions=[action])
        episodes.append(Episode(id=f"locate-{i}", instruction=f"Click the '{word}' button.", steps=[step],
                                source="guirl.curriculum", platform="desktop", task="locate", success=True))
    write_episodes(out / "train.jsonl", episodes)
    return out / "train.jsonl"


def sim_sets(out: Path, seed: int, samples: int, domains=("desktop", "web", "mobile"),
             train_per_task: int | None = None) -> Path:
    """Generate (once) the sim grounding and trajectory sets of the later stages under ``out``: ``samples``
    grounding screens per domain and ``train_per_task`` expert trajectories per task family (by default
    ``samples // 10``; a larger number extends the same episodes, as seeds run in order), with held-out splits."""
    from guirl.envs.sim import generate_dataset

    if not (out / "manifest.json").is_file():
        generate_dataset(out_dir=str(out), domains=tuple(domains), preset="coarse", seed=seed,
                         grounding_train=samples, grounding_test=40,
                         train_per_task=train_per_task or max(1, samples // 10), test_per_task=4)
    return out


def _sim_sets(out: Path, cfg: CurriculumConfig) -> Path:
    """The curriculum's sim sets (sized by the largest sim stage)."""
    samples = max((s.samples for s in cfg.stages if s.data != "locate"), default=100)
    return sim_sets(out, cfg.seed, samples, cfg.domains)


def stage_data(cfg: CurriculumConfig, stage: StageConfig) -> list[str]:
    root = Path(cfg.output_dir) / "data"
    if stage.data == "locate":
        out = root / f"locate-{stage.name}"
        path = out / "train.jsonl"
        return [str(path if path.is_file() else make_locate_set(out, stage.samples, cfg.seed))]
    sim = _sim_sets(root / "sim", cfg)
    if stage.data == "grounding":
        return [str(sim / "grounding" / "train.jsonl")]
    return [str(sim / "trajectories" / "train.jsonl"), str(sim / "trajectories" / "recovery.jsonl"),
            str(sim / "grounding" / "train.jsonl")]


def _sft_config(cfg: CurriculumConfig, stage: StageConfig, model: str, eval_data: str | None) -> SFTConfig:
    thinks = cfg.thought != "none" and stage.thought
    return SFTConfig(
        model=model, train_data=stage_data(cfg, stage), output_dir=str(Path(cfg.output_dir) / stage.name),
        seed=cfg.seed, max_steps=stage.max_steps, batch_size=cfg.batch_size, format=cfg.format,
        prompt_style=cfg.prompt_style, eval_data=eval_data, eval_every=cfg.eval_every if eval_data else 0,
        eval_samples=cfg.eval_samples, save_every=cfg.save_every, num_threads=cfg.num_threads, report_to=["tensorboard"],
        optim=OptimConfig(lr=stage.lr, warmup_ratio=stage.warmup_ratio, schedule="cosine"), log_every=10,
        history_window=cfg.history_window, history_text=cfg.history_text, with_reasoning=thinks,
        thought="sub_goal" if thinks else "recorded", reasoning_switch=thinks, direct_fraction=0.0,
    )


def evaluate_base_agent(model_dir: str | Path, data_dir: str | Path, samples: int = 120, seed: int = 0) -> dict:
    """Held-out scores: grounding screens of unseen seeds, multi-step expert steps of
    unseen seeds (test_seed) and of unseen task families (test_task)."""
    from guirl.models.load import load_policy

    policy = load_policy(model_dir)
    cfg = SFTConfig(model=str(model_dir), format=policy.prompt.fmt, max_new_tokens=80)
    data_dir = Path(data_dir)
    scores = {}
    for name, rel in (("grounding_unseen_screens", "grounding/test_seed.jsonl"),
                      ("steps_unseen_seeds", "trajectories/test_seed.jsonl"),
                      ("steps_unseen_tasks", "trajectories/test_task.jsonl")):
        path = data_dir / rel
        held = [(ep, st, path.parent) for ep in read_episodes(path) for st in ep.steps if st.valid_actions]
        held = random.Random(seed).sample(held, min(samples, len(held)))
        scores[name] = {k.split("/")[1]: v for k, v in heldout_step_metrics(policy, held, cfg).items()}
        scores[name]["n"] = len(held)
    return scores


def train_curriculum(cfg: CurriculumConfig) -> dict:
    """Build, train every stage, evaluate; returns the summary also written to scores.json."""
    from guirl.models.build import build_model_dir

    out = Path(cfg.output_dir)
    start = time.perf_counter()
    model = out / "init"
    state = process_state()
    with state.main_process_first():  # the main process builds and generates; the others then find the files
        if not (model / "config.json").is_file():
            build_model_dir(cfg.arch, model, size=cfg.size, seed=cfg.seed, max_visual_tokens=cfg.max_visual_tokens,
                            size_overrides=cfg.size_overrides)
        sim = _sim_sets(out / "data" / "sim", cfg)
    history = {}
    for stage in cfg.stages:
        final = out / stage.name / "final"
        if not (final / "guirl_prompt.json").is_file():
            # held-out steps like the stage's own: screens of unseen seeds, or multi-step steps of unseen seeds
            split = "trajectories" if stage.data == "trajectories" and cfg.history_window else "grounding"
            with state.main_process_first():
                stage_cfg = _sft_config(cfg, stage, str(model), str(sim / split / "test_seed.jsonl"))
            result = train_sft(stage_cfg)
            history[stage.name] = result["history"]
        model = final
    if not state.is_main_process:
        return {"step": sum(s.max_steps for s in cfg.stages), "final_dir": out / "final"}
    shutil.copytree(model, out / "final", dirs_exist_ok=True)
    summary = {
        "scores": evaluate_base_agent(out / "final", out / "data" / "sim", seed=cfg.seed),
        "wall_time_s": round(time.perf_counter() - start, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "config": cfg.model_dump(mode="json"),
        "history": history,
    }
    (out / "scores.json").write_text(json.dumps(summary, indent=1))
    record = {"command": " ".join(["guirl", *sys.argv[1:]]),
              "seed": cfg.seed, "steps": sum(s.max_steps for s in cfg.stages), "scores": summary["scores"],
              "wall_time_s": summary["wall_time_s"], "peak_rss_mb": summary["peak_rss_mb"],
              "note": "wall time and memory of the last process; a resumed run counts only its own part"}
    (out / "final" / "training_record.json").write_text(json.dumps(record, indent=1))
    return {"step": sum(s.max_steps for s in cfg.stages), "final_dir": out / "final",
            "final_eval": {f"{k}/{m}": v for k, d in summary["scores"].items() for m, v in d.items() if m != "n"}}
