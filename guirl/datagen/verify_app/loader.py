"""Read and validate a verification project: ``manifest.json`` + ``candidates.jsonl``.

The directory is what ``guirl datagen explore`` writes (LiteGUI multi-solution
exploration, docs/methods.md section 1): ``manifest.json`` names the trajectory ``.jsonl``
the steps come from (``"episodes"``, an absolute path), and every line of
``candidates.jsonl`` is one explored step with its deduplicated candidate
actions. Screenshot paths are relative to the directory of that episodes
file. Anything malformed is refused with the file, the line and the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from guirl.actions import Action, Frame
from guirl.data.io import DataError, describe_validation_error

MANIFEST = "manifest.json"
CANDIDATES = "candidates.jsonl"


class CandidateRecord(BaseModel):
    """One candidate action of a step (a re-inferred sample or the recorded action)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(min_length=1, description="'<episode_id>/<step_index>/<k>', unique in the project")
    action: Action
    source: Literal["recorded", "sample"]
    count: int = Field(ge=0, description="how many of the N samples were this action")
    oracle_label: bool | None = Field(default=None, description="the world's judgement, when one exists")


class StepRecord(BaseModel):
    """One explored step: what the annotator sees and the candidates to mark."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    episode_id: str = Field(min_length=1)
    step_index: int = Field(ge=0)
    instruction: str
    screenshot: str = Field(min_length=1, description="relative to the directory of the manifest's episodes file")
    screen_size: tuple[int, int] = Field(description="[width, height] of the screenshot in pixels")
    history: list[str] = Field(default_factory=list)
    recorded_action: Action | None = None
    candidates: list[CandidateRecord] = Field(min_length=1)


@dataclass
class Project:
    """A loaded project: its steps in file order and where each candidate is."""

    directory: Path
    manifest: dict[str, Any]
    episodes_path: Path
    steps: list[StepRecord]
    lines: list[int]  # candidates.jsonl line of each step
    where: dict[str, tuple[int, int]] = field(default_factory=dict)  # candidate id -> (step position, k)

    @property
    def image_root(self) -> Path:
        return self.episodes_path.parent

    @property
    def candidates_path(self) -> Path:
        return self.directory / CANDIDATES

    def screenshot_path(self, position: int) -> Path:
        return self.image_root / self.steps[position].screenshot

    def n_candidates(self) -> int:
        return len(self.where)


def load_project(directory: str | Path) -> Project:
    """Validate ``directory`` and return the :class:`Project`; raises :class:`DataError`."""
    directory = Path(directory)
    manifest_path = directory / MANIFEST
    if not directory.is_dir():
        raise DataError(f"{directory}: no such directory; pass the output directory of `guirl datagen explore`")
    manifest = _read_manifest(manifest_path)
    episodes_path = Path(manifest["episodes"])
    candidates_path = directory / CANDIDATES
    if not candidates_path.is_file():
        raise DataError(f"{candidates_path}: no such file; `guirl datagen explore` writes it next to {MANIFEST}")
    project = Project(directory=directory, manifest=manifest, episodes_path=episodes_path, steps=[], lines=[])
    seen_steps: dict[tuple[str, int], int] = {}
    with candidates_path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{candidates_path}:{lineno}"
            step = _parse_step(line, where)
            key = (step.episode_id, step.step_index)
            if key in seen_steps:
                raise DataError(f"{where}: step {step.episode_id!r} #{step.step_index} is already on line "
                                f"{seen_steps[key]}; keep one line per explored step")
            seen_steps[key] = lineno
            _check_step(step, project, where, lineno)
            position = len(project.steps)
            for k, candidate in enumerate(step.candidates):
                project.where[candidate.id] = (position, k)
            project.steps.append(step)
            project.lines.append(lineno)
    if not project.steps:
        raise DataError(f"{candidates_path}: holds no steps; run `guirl datagen explore` on some trajectories first")
    return project


def _read_manifest(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise DataError(f"{path}: no such file; pass the output directory of `guirl datagen explore`")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise DataError(f"{path}:{err.lineno}: not valid JSON (column {err.colno}: {err.msg})") from None
    if not isinstance(manifest, dict):
        raise DataError(f"{path}: must hold a JSON object with an 'episodes' field")
    episodes = manifest.get("episodes")
    if not isinstance(episodes, str) or not episodes:
        raise DataError(f"{path}: field 'episodes': must be the absolute path of the trajectory .jsonl "
                        f"the candidates come from (got {episodes!r})")
    if not Path(episodes).is_absolute():
        raise DataError(f"{path}: field 'episodes': {episodes!r} must be an absolute path")
    if not Path(episodes).is_file():
        raise DataError(f"{path}: field 'episodes': {episodes} does not exist; point it at the trajectory .jsonl")
    return manifest


def _parse_step(line: str, where: str) -> StepRecord:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as err:
        raise DataError(f"{where}: not valid JSON (column {err.colno}: {err.msg})") from None
    if not isinstance(record, dict):
        raise DataError(f"{where}: must be a JSON object (one explored step)")
    try:
        return StepRecord.model_validate(record)
    except ValidationError as err:
        raise DataError(f"{where}: {describe_validation_error(err)}") from None


def _check_step(step: StepRecord, project: Project, where: str, lineno: int) -> None:
    width, height = step.screen_size
    if width <= 0 or height <= 0:
        raise DataError(f"{where}: field 'screen_size': {[width, height]} must be two positive pixel sizes")
    if not (project.image_root / step.screenshot).is_file():
        raise DataError(f"{where}: field 'screenshot': image file {step.screenshot!r} does not exist under "
                        f"{project.image_root}; paths are relative to the directory of the episodes file")
    prefix = f"{step.episode_id}/{step.step_index}/"
    actions = [("recorded_action", step.recorded_action)] + [
        (f"candidates.{k}.action", c.action) for k, c in enumerate(step.candidates)]
    for name, action in actions:
        if action is not None:
            try:
                screen_action(action, step.screen_size)
            except ValueError as err:
                raise DataError(f"{where}: field '{name}.frame': {err}") from None
    for k, candidate in enumerate(step.candidates):
        if not candidate.id.startswith(prefix):
            raise DataError(f"{where}: field 'candidates.{k}.id': {candidate.id!r} must start with {prefix!r} "
                            "('<episode_id>/<step_index>/<k>')")
        if candidate.id in project.where:
            other = project.lines[project.where[candidate.id][0]]
            raise DataError(f"{where}: field 'candidates.{k}.id': {candidate.id!r} is already used on line "
                            f"{other}; candidate ids must be unique")


def screen_action(action: Action, screen_size: tuple[int, int]) -> Action:
    """``action`` in screen pixels of the screenshot (a screen frame without a size is taken as is)."""
    width, height = screen_size
    if action.frame.kind == "screen" and action.frame.width is None:
        return action.model_copy(update={"frame": Frame.screen(width, height)})
    return action.to_frame(Frame.screen(width, height))
