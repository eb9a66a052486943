"""Put the built-in world back at a recorded step by replaying the episode.

A ``gen-data`` episode records its seed, preset and domain in ``extra`` and
its task family in ``task``; resetting a :class:`SimEnv` with them and
stepping the recorded actions reproduces every state exactly (the world is
deterministic). :func:`replay_snapshots` does that once per episode and
returns a snapshot before every step, so any step can be restored with
``env.restore(snapshots[k])``; each replayed screen is checked against the
recorded screenshot, pixel for pixel, when the dataset directory is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PIL import Image, ImageChops

from guirl.data.schema import Episode
from guirl.envs.sim.env import SimEnv

#: step limit of replay envs: wrong and escape actions must never truncate an episode being replayed
REPLAY_MAX_STEPS = 1_000_000


class ReplayError(ValueError):
    """An episode cannot be replayed in the built-in world; the message says why."""


def same_image(a: Image.Image, b: Image.Image) -> bool:
    """Whether two images have the same size and the same RGB pixels."""
    a, b = a.convert("RGB"), b.convert("RGB")
    return a.size == b.size and ImageChops.difference(a, b).getbbox() is None


def check_replayable(episode: Episode) -> None:
    """Raise :class:`ReplayError` unless ``episode`` records what a replay needs (a gen-data trajectory)."""
    extra = episode.extra
    missing = [k for k in ("seed", "preset", "domain") if k not in extra]
    if missing or not episode.task:
        raise ReplayError(f"episode {episode.id!r} lacks {missing or ['task']}: only `guirl gen-data` trajectories "
                          "(extra.seed / preset / domain and task) can be replayed in the built-in world")
    if episode.task.endswith(".ground"):
        raise ReplayError(f"episode {episode.id!r} is single-step grounding ({episode.task}); replay trajectories")


def env_for_episode(episode: Episode) -> SimEnv:
    """A SimEnv for ``episode``'s domain, preset and task (not reset), that never truncates."""
    check_replayable(episode)
    extra = episode.extra
    return SimEnv(domain=extra["domain"], preset=extra["preset"], task=episode.task, max_steps=REPLAY_MAX_STEPS)


def replay_snapshots(env: SimEnv, episode: Episode, root: str | Path | None = None) -> list[dict[str, Any]]:
    """Snapshots of ``env`` before each step of ``episode`` (replaying its recorded actions).

    With ``root`` (the directory the screenshot paths are relative to), the
    replayed screen at every step must equal the recorded screenshot, else
    :class:`ReplayError` names the step.
    """
    obs = env.reset(seed=episode.extra["seed"], options={"task": episode.task})
    snapshots = []
    for step in episode.steps:
        if root is not None:
            with Image.open(Path(root) / step.screenshot.path) as recorded:
                if not same_image(obs.screenshot, recorded):
                    raise ReplayError(f"episode {episode.id!r} step {step.index}: the replayed screen differs from "
                                      f"{step.screenshot.path}; was it written with other gen-data settings "
                                      "(screen size) or an older world?")
        snapshots.append(env.snapshot())
        if step.action is None:
            raise ReplayError(f"episode {episode.id!r} step {step.index} has no recorded action to replay")
        obs, *_ = env.step(step.action)
    return snapshots
