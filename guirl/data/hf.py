"""Episodes <-> Hugging Face ``datasets.Dataset``.

Two views:

- :func:`episodes_to_dataset` / :func:`dataset_to_episodes`: one row per
  episode, lossless (the nested record is kept as canonical JSON beside the
  flat columns people filter on), so any ``datasets`` operation (filter,
  shuffle, push to a hub, save to disk) round-trips exactly.
- :func:`steps_to_dataset`: one row per step, with the screenshot as a
  ``datasets.Image`` column, for training and evaluation loops.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import datasets

from guirl.data.schema import Episode

EPISODE_FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "instruction": datasets.Value("string"),
        "source": datasets.Value("string"),
        "platform": datasets.Value("string"),
        "task": datasets.Value("string"),
        "num_steps": datasets.Value("int32"),
        "success": datasets.Value("bool"),
        "episode_json": datasets.Value("string"),
    }
)


def episodes_to_dataset(episodes: Iterable[Episode]) -> datasets.Dataset:
    rows = [
        {
            "id": ep.id,
            "instruction": ep.instruction,
            "source": ep.source,
            "platform": ep.platform,
            "task": ep.task,
            "num_steps": len(ep.steps),
            "success": ep.success,
            "episode_json": ep.model_dump_json(),
        }
        for ep in episodes
    ]
    return datasets.Dataset.from_list(rows, features=EPISODE_FEATURES)


def dataset_to_episodes(dataset: datasets.Dataset) -> list[Episode]:
    if "episode_json" not in dataset.column_names:
        raise ValueError(
            f"dataset has columns {dataset.column_names} but no 'episode_json'; "
            "build it with guirl.data.episodes_to_dataset"
        )
    return [Episode.model_validate_json(s) for s in dataset["episode_json"]]


def steps_to_dataset(episodes: Iterable[Episode], root: str | Path) -> datasets.Dataset:
    """One row per step: image, instruction, history and targets as JSON."""
    root = Path(root)
    rows = []
    for ep in episodes:
        for step in ep.steps:
            rows.append(
                {
                    "episode_id": ep.id,
                    "step_index": step.index,
                    "instruction": step.instruction or ep.instruction,
                    "image": str(root / step.screenshot.path),
                    "history_json": json.dumps([h.model_dump(mode="json") for h in step.history]),
                    "valid_actions_json": json.dumps([a.model_dump(mode="json") for a in step.valid_actions]),
                    "sub_goal": step.sub_goal,
                    "label": step.label.value,
                }
            )
    features = datasets.Features(
        {
            "episode_id": datasets.Value("string"),
            "step_index": datasets.Value("int32"),
            "instruction": datasets.Value("string"),
            "image": datasets.Image(),
            "history_json": datasets.Value("string"),
            "valid_actions_json": datasets.Value("string"),
            "sub_goal": datasets.Value("string"),
            "label": datasets.Value("string"),
        }
    )
    return datasets.Dataset.from_list(rows, features=features)
