"""Verified positives -> A*_t: write the trajectories with the marked-True candidates added.

LiteGUI's multi-solution exploration (docs/methods.md section 1) keeps the candidates a
human marked True as extra ground-truth actions of their step. The merge is
``guirl.datagen.explore.merge_verified`` when that module provides it; until
then :func:`merge_labels` here does the same: read the manifest's episodes,
add each True candidate's action to its step's ``valid_actions`` (once),
leave False and unmarked candidates out. Screenshot paths are rebased so that
they stay valid relative to the output file's directory.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path

from guirl.data.io import DataError, read_episodes, write_episodes
from guirl.data.schema import Episode, ImageRef
from guirl.datagen.verify_app.loader import Project

EXPLORE_MODULE = "guirl.datagen.explore"


def merge_labels(project: Project, labels: dict[str, bool]) -> list[Episode]:
    """The project's episodes with every True candidate added to its step's ``valid_actions``.

    ``labels`` maps candidate ids of ``project`` to True / False; an action
    already in ``valid_actions`` (equal field by field) is not added twice.
    """
    episodes = read_episodes(project.episodes_path, check_images=False)
    by_step = {(ep.id, step.index): step for ep in episodes for step in ep.steps}
    for candidate_id, label in labels.items():
        if candidate_id not in project.where:
            raise ValueError(f"label for {candidate_id!r}, which is not a candidate of {project.candidates_path}")
        if not label:
            continue
        position, k = project.where[candidate_id]
        record = project.steps[position]
        step = by_step.get((record.episode_id, record.step_index))
        if step is None:
            raise DataError(f"{project.episodes_path}: has no step {record.step_index} of episode "
                            f"{record.episode_id!r}, which {project.candidates_path} line "
                            f"{project.lines[position]} explored; re-run `guirl datagen explore` on this file")
        action = record.candidates[k].action
        if action not in step.valid_actions:
            step.valid_actions.append(action)
    return episodes


def merge(project: Project, labels: dict[str, bool]) -> tuple[list[Episode], str]:
    """Merged episodes and which merge ran (``explore.merge_verified`` or ``verify_app.merge_labels``)."""
    if importlib.util.find_spec(EXPLORE_MODULE) is not None:
        explore = importlib.import_module(EXPLORE_MODULE)
        if hasattr(explore, "merge_verified"):
            return explore.merge_verified(project.candidates_path, labels), f"{EXPLORE_MODULE}.merge_verified"
    return merge_labels(project, labels), "guirl.datagen.verify_app.export.merge_labels"


def _rebase(ref: ImageRef, source_root: Path, out_root: Path) -> ImageRef:
    return ref.model_copy(update={"path": os.path.relpath(source_root / ref.path, out_root)})


def rebase_images(episodes: list[Episode], source_root: Path, out_root: Path) -> None:
    """Rewrite screenshot paths (relative to ``source_root``) to be relative to ``out_root``."""
    source_root, out_root = source_root.resolve(), out_root.resolve()
    if source_root == out_root:
        return
    for episode in episodes:
        for step in episode.steps:
            step.screenshot = _rebase(step.screenshot, source_root, out_root)
            for item in step.history:
                if item.screenshot is not None:
                    item.screenshot = _rebase(item.screenshot, source_root, out_root)


def export_verified(project: Project, labels: dict[str, bool], out: str | Path, overwrite: bool = False) -> dict:
    """Write the merged trajectories to ``out`` (atomically); returns what was written.

    Marks of candidate ids the project no longer has (a database kept from an
    older ``candidates.jsonl``) are left out and counted in ``not_in_project``.
    """
    out = Path(out)
    if out.suffix != ".jsonl":
        raise ValueError(f"export path {out} must end in .jsonl (a trajectory file)")
    if out.resolve() == project.episodes_path.resolve():
        raise ValueError(f"export path {out} is the input episodes file; choose another name")
    if out.exists() and not overwrite:
        raise FileExistsError(f"export path {out} already exists; choose another name or allow overwriting")
    known = {cid: label for cid, label in labels.items() if cid in project.where}
    episodes, merged_by = merge(project, known)
    rebase_images(episodes, project.image_root, out.parent)
    written = write_episodes(out, episodes)
    positives = sum(known.values())
    return {"path": str(out), "episodes": written, "positives": positives, "negatives": len(known) - positives,
            "not_in_project": len(labels) - len(known), "merged_by": merged_by}
