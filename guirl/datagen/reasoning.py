"""InfiGUI-R1 stage 1 data: spatial reasoning distillation with rejection sampling (docs/methods.md section 3).

For every candidate step (the reasoning bottlenecks of
:func:`guirl.datagen.bottleneck.find_bottlenecks` when given, else every step
with valid actions) the pipeline

1. writes the spatial description ``D_spatial`` of the step's a11y tree
   (:func:`guirl.datagen.spatial.describe_elements`, optionally compressed by a
   Judge);
2. asks a teacher (:mod:`guirl.datagen.teachers`) for reasoning + action, up to
   ``attempts`` times;
3. keeps the first pair whose action is correct (step success against
   ``A*_t`` under :func:`guirl.matching.step.match_action`) and that has
   reasoning - rejection sampling (and, with ``student_format``, whose
   action the student's output format can write, else SFT could not use it).

Kept steps are written as a new episodes JSONL: each episode holds its kept
steps (original ``index`` and history), ``reasoning`` set, ``action`` = the
teacher's action in screen pixels, so ``guirl train sft`` trains
``(I_s, G) -> (R_teacher, a_teacher)`` on it directly. Screenshots are copied
under the output directory (``images="copy"``) or referenced by a path
relative to it (``images="relative"``).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from guirl.data.io import write_episodes
from guirl.data.schema import Episode, ImageRef, Step
from guirl.datagen.bottleneck import eligible, is_correct, load_screenshot, step_goal, step_subgoal
from guirl.datagen.spatial import SpatialOptions, compress_with_judge, describe_elements
from guirl.datagen.teachers import Teacher, TeacherInput, writable
from guirl.judges.base import Judge


@dataclass
class ReasoningDataConfig:
    """How :func:`build_reasoning_data` runs."""

    attempts: int = 1
    """Teacher tries per step (rejection sampling keeps the first correct one)."""
    teacher_subgoal: bool = True
    """Give the teacher the step's ground-truth sub-goal (InfiGUI-R1's D_spatial carries a step description)."""
    spatial: SpatialOptions = field(default_factory=SpatialOptions)
    """How the spatial description is written."""
    images: Literal["copy", "relative"] = "copy"
    """copy screenshots under the output directory, or reference the originals by relative path."""
    keep_spatial: bool = False
    """Store D_spatial in each kept step's ``extra`` (for inspection)."""
    max_steps: int | None = None
    """Stop after this many candidate steps were given to the teacher (None = all)."""
    student_format: str | None = None
    """The student's output format: pairs whose action it cannot write are rejected (None = no check)."""

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"attempts must be >= 1, got {self.attempts}")
        if self.images not in ("copy", "relative"):
            raise ValueError(f"images must be 'copy' or 'relative', got {self.images!r}")


class ImageMapper:
    """Rewrites ImageRefs of ``src_root`` for a dataset written in ``out_root`` (each image copied once)."""

    def __init__(self, src_root: Path, out_root: Path, mode: str):
        self.src_root, self.out_root, self.mode = Path(src_root), Path(out_root), mode
        self._done: dict[str, str] = {}

    def __call__(self, ref: ImageRef) -> ImageRef:
        if ref.path not in self._done:
            self._done[ref.path] = self._place(ref.path)
        return ref.model_copy(update={"path": self._done[ref.path]})

    def _place(self, rel: str) -> str:
        source = (self.src_root / rel).resolve()
        if not source.is_file():
            raise FileNotFoundError(f"image {rel!r} not found under {self.src_root}")
        if self.mode == "relative":
            return Path(os.path.relpath(source, self.out_root.resolve())).as_posix()
        inside = Path(rel)
        if inside.is_absolute() or ".." in inside.parts:  # keep copies inside out_root
            inside = Path("images") / f"ext{len(self._done)}_{inside.name}"
        target = self.out_root / inside
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            shutil.copy2(source, target)
        return inside.as_posix()


def _remap_step(step: Step, images: ImageMapper) -> Step:
    history = [h.model_copy(update={"screenshot": images(h.screenshot)}) if h.screenshot is not None else h
               for h in step.history]
    return step.model_copy(update={"screenshot": images(step.screenshot), "history": history})


def spatial_description(episode: Episode, step: Step, options: SpatialOptions, judge: Judge | None = None,
                        image=None) -> tuple[str, bool]:
    """``D_spatial`` of a step (rules, then the judge when given); returns ``(text, judge_used)``."""
    size = (step.screenshot.width, step.screenshot.height)
    text = describe_elements(step.a11y or [], size, step.a11y_frame, options)
    if judge is None:
        return text, False
    return compress_with_judge(judge, text, step_goal(episode), [image] if image is not None else [])


@dataclass
class _Counts:
    steps_seen: int = 0
    not_eligible: int = 0
    not_bottleneck: int = 0
    teacher_steps: int = 0
    teacher_attempts: int = 0
    rejected_no_reasoning: int = 0
    rejected_wrong_action: int = 0
    rejected_unwritable: int = 0
    kept: int = 0
    judge_compressed: int = 0

    def metrics(self) -> dict[str, float]:
        out: dict[str, float] = {f"reasoning/{k}": v for k, v in asdict(self).items()}
        out["reasoning/acceptance_rate"] = self.kept / self.teacher_attempts if self.teacher_attempts else 0.0
        out["reasoning/step_acceptance_rate"] = self.kept / self.teacher_steps if self.teacher_steps else 0.0
        return out


def _distil_step(episode: Episode, step: Step, root: Path, teacher: Teacher, cfg: ReasoningDataConfig,
                 counts: _Counts, judge: Judge | None) -> tuple[Step, int, str] | None:
    """Rejection sampling at one step: ``(kept step, attempt, D_spatial)`` or None when every attempt failed."""
    image = load_screenshot(root, step)
    spatial, compressed = spatial_description(episode, step, cfg.spatial, judge, image)
    counts.judge_compressed += compressed
    sub_goal = step_subgoal(episode, step) if cfg.teacher_subgoal else None
    frame = cfg.spatial.output_frame(step.screenshot.width, step.screenshot.height)
    for attempt in range(cfg.attempts):
        counts.teacher_attempts += 1
        out = teacher(TeacherInput(episode, step, step_goal(episode), sub_goal, spatial, frame, image, attempt))
        if not out.reasoning:
            counts.rejected_no_reasoning += 1
            continue
        if not out.action or not is_correct(out.action, step):
            counts.rejected_wrong_action += 1
            continue
        if cfg.student_format is not None and not writable(out.action, cfg.student_format):
            counts.rejected_unwritable += 1
            continue
        return step.model_copy(update={"reasoning": out.reasoning, "action": out.action}), attempt, spatial
    return None


def build_reasoning_data(
    episodes: Sequence[Episode],
    root: str | Path,
    out_path: str | Path,
    teacher: Teacher,
    *,
    config: ReasoningDataConfig | None = None,
    only: set[tuple[str, int]] | None = None,
    judge: Judge | None = None,
    teacher_name: str = "teacher",
) -> dict[str, float]:
    """Distil teacher reasoning into a new episodes JSONL at ``out_path``; returns the counts.

    ``root``: directory the input screenshot paths are relative to.
    ``only``: ``(episode id, step index)`` keys to consider (the bottleneck
    steps); None = every eligible step. ``judge``: compresses ``D_spatial``.
    """
    cfg = config or ReasoningDataConfig()
    root, out_path = Path(root), Path(out_path)
    images = ImageMapper(root, out_path.parent, cfg.images)
    counts = _Counts()
    kept_episodes: list[Episode] = []
    for episode in episodes:
        kept_steps = []
        for step in episode.steps:
            if cfg.max_steps is not None and counts.teacher_steps >= cfg.max_steps:
                break
            counts.steps_seen += 1
            if not eligible(step):
                counts.not_eligible += 1
                continue
            if only is not None and (episode.id, step.index) not in only:
                counts.not_bottleneck += 1
                continue
            counts.teacher_steps += 1
            result = _distil_step(episode, step, root, teacher, cfg, counts, judge)
            if result is None:
                continue
            new_step, attempt, spatial = result
            provenance = {"teacher": teacher_name, "attempt": attempt, "bottleneck": only is not None}
            if cfg.keep_spatial:
                provenance["spatial"] = spatial
            new_step = _remap_step(new_step, images)
            new_step.extra = {**new_step.extra, "reasoning_data": provenance}
            kept_steps.append(new_step)
            counts.kept += 1
        if kept_steps:
            kept_episodes.append(episode.model_copy(update={"steps": kept_steps}))
    write_episodes(out_path, kept_episodes)
    return counts.metrics()


def write_manifest(path: str | Path, metrics: dict, settings: dict) -> None:
    """``reasoning_manifest.json``: the settings and the counts of a run."""
    Path(path).write_text(json.dumps({"generator": "guirl reasoning-data", "settings": settings,
                                      "counts": metrics}, indent=2, default=str) + "\n")


__all__ = ["ImageMapper", "ReasoningDataConfig", "build_reasoning_data", "spatial_description",
           "write_manifest"]
