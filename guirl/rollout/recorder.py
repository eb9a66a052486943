"""Record rollouts in the trajectory schema: ``episodes.jsonl`` + PNG screenshots.

Layout of the output directory (readable with :func:`guirl.data.io.read_episodes`)::

    episodes.jsonl                    one Episode a line, appended as episodes finish
    images/<episode id>/<step>.png    the screenshot each step acted on

Each Step keeps the executed action, the raw output, the a11y tree, the
valid actions where the env knows them, the history window the policy saw
(with references to the earlier screenshots it showed), the reward and the
per-step timings (``policy``, ``env`` seconds). Sampled token ids and
log-probs, when a model policy returns them, go to ``Step.extra``.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any, Literal

from guirl.data.io import EpisodeWriter
from guirl.data.schema import Episode, ImageRef, Step
from guirl.rollout.runner import Rollout, StepRecord

Platform = Literal["desktop", "web", "mobile", "unknown"]


class TrajectoryRecorder:
    """Append finished rollouts to ``<out_dir>/episodes.jsonl`` with their screenshots."""

    def __init__(self, out_dir: str | Path, source: str = "", platform: Platform = "unknown", prefix: str = "ep"):
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.out_dir / "episodes.jsonl"
        self.source, self.platform, self.prefix = source, platform, prefix
        self._writer = EpisodeWriter(self.path)
        self._counter = itertools.count(_count_lines(self.path))

    def record(self, rollout: Rollout) -> Episode:
        episode = self.to_episode(rollout, f"{self.prefix}{next(self._counter):06d}")
        self._writer.write(episode)
        return episode

    def to_episode(self, rollout: Rollout, episode_id: str) -> Episode:
        """Write the rollout's screenshots and build its Episode."""
        image_dir = self.out_dir / "images" / _safe(episode_id)
        image_dir.mkdir(parents=True, exist_ok=True)
        refs: dict[int, ImageRef] = {}
        for record in rollout.steps:
            refs[record.index] = _save(record.inputs.screenshot, image_dir / f"{record.index:03d}.png", self.out_dir)
        steps = [_to_step(record, refs) for record in rollout.steps]
        spec = rollout.spec
        return Episode(
            id=episode_id,
            instruction=rollout.instruction,
            steps=steps,
            source=self.source,
            platform=self.platform,
            task=rollout.task,
            success=rollout.success,
            failure_reason=rollout.failure_reason,
            extra={
                "seed": spec.seed,
                "group": spec.group,
                "total_reward": rollout.total_reward,
                "timings": rollout.timings,
                **rollout.extra,
            },
        )

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> TrajectoryRecorder:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _to_step(record: StepRecord, refs: dict[int, ImageRef]) -> Step:
    inputs, output = record.inputs, record.output
    history = []
    for item, image, past_index in zip(inputs.history, inputs.history_images, inputs.episode["history_steps"]):
        history.append(item.model_copy(update={"screenshot": refs.get(past_index) if image is not None else None}))
    obs = inputs.observation
    extra: dict[str, Any] = {k: v for k, v in record.info.items() if _jsonable(v)}
    if record.parse_failure:
        extra["parse_failure"] = record.parse_failure
    if output.token_ids is not None:
        extra["token_ids"] = output.token_ids
    if output.logprobs is not None:
        extra["logprobs"] = output.logprobs
    if output.prompt is not None and _jsonable(output.prompt):
        extra["prompt"] = output.prompt  # the exact text or chat messages (images are placeholders)
    extra.update({k: v for k, v in output.extra.items() if _jsonable(v)})
    return Step(
        index=record.index,
        screenshot=refs[record.index],
        history=history,
        valid_actions=list(obs.valid_actions or []),
        action=record.action,
        output=output.text,
        a11y=obs.a11y,
        a11y_frame=obs.frame,
        sub_goal=obs.sub_goal,
        subtasks=obs.subtasks,
        reward=record.reward,
        timings=record.timings,
        extra=extra,
    )


def _save(image, path: Path, root: Path) -> ImageRef:
    image.save(path)
    return ImageRef(path=str(path.relative_to(root)), width=image.width, height=image.height)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _count_lines(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open(encoding="utf-8") as fh:
        return sum(1 for line in fh if line.strip())
