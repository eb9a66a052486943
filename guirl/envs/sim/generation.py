"""Datasets from the oracle expert: grounding sets, trajectories, error recovery.

Every episode is seeded; the same arguments write byte-identical files.
Splits: ``train``; ``test_seed`` (the training task families, seeds never
used in training); ``test_task`` (held-out task families). Each step keeps
A*_t (``valid_actions``), the a11y tree, the sub-goal and the subtask plan.

Error-recovery samples (InfiGUI-R1, docs/methods.md section 3): at a step with state S,
the expert takes a wrong action a_err (one the oracle does not list, that
changes the screen, and that some action undoes). Two single-step episodes
are written: ``error_escape`` (history H + a_err, screenshot after a_err,
target = the escape action that returns to S) and ``back_on_track``
(history H + a_err + escape, screenshot of S, target = the correct action).
Departure: InfiGUI-R1 finds error-prone steps by sampling a model; here any
step may be chosen (at ``recovery_prob``), since the world knows what is wrong.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from guirl.actions.types import Action
from guirl.data.io import write_episodes
from guirl.data.schema import Episode, HistoryItem, ImageRef, Step, StepLabel
from guirl.envs.sim.engine import full_key, state_key
from guirl.envs.sim.env import SimEnv, available_tasks
from guirl.envs.sim.render import render

SPLIT_OFFSETS = {"train": 0, "test_seed": 5_000_000, "test_task": 7_000_000}


@dataclass
class DatasetConfig:
    """What ``generate_dataset`` writes."""

    out_dir: str
    domains: tuple[str, ...] = ("desktop", "web", "mobile")
    preset: str = "coarse"
    tasks: tuple[str, ...] | None = None  # multi-step families (default: all of the domains)
    heldout_tasks: tuple[str, ...] = ("desktop.export_document", "web.fill_form", "mobile.find_contact")
    train_per_task: int = 20  # trajectories per training family
    test_per_task: int = 5  # trajectories per family in each test split
    grounding_train: int = 100  # grounding samples per domain
    grounding_test: int = 20
    recovery_prob: float = 0.3  # chance a trajectory step also yields an error-recovery pair
    seed: int = 0
    extra: dict = field(default_factory=dict)


class ImageStore:
    """Saves screenshots under ``root/images`` and returns ImageRefs relative to ``root``."""

    def __init__(self, root: Path):
        self.root = root

    def save(self, image: Image.Image, name: str) -> ImageRef:
        rel = f"images/{name}.png"
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        image.save(path, compress_level=1)
        return ImageRef(path=rel, width=image.width, height=image.height)


def _pick(actions: list[Action], rng: random.Random) -> Action:
    return actions[rng.randrange(len(actions))]


def expert_episode(env: SimEnv, seed: int, family: str, episode_id: str, images: ImageStore,
                   recovery_prob: float = 0.0) -> tuple[Episode, list[Episode]]:
    """Roll the oracle expert out on one seeded task; also returns error-recovery episodes."""
    obs = env.reset(seed=seed, options={"task": family})
    rng = random.Random(f"expert:{seed}:{family}")
    steps: list[Step] = []
    history: list[HistoryItem] = []
    recovery: list[Episode] = []
    reward, info = 0.0, {}
    while True:
        valid = list(obs.valid_actions or [])
        action = _pick(valid, rng)
        ref = images.save(obs.screenshot, f"{episode_id}/{len(steps)}")
        step = Step(index=len(steps), screenshot=ref, history=list(history), valid_actions=valid, action=action,
                    a11y=obs.a11y, sub_goal=obs.sub_goal, subtasks=obs.subtasks,
                    extra={"progress": obs.info["progress"], "on_track": obs.info.get("on_track", True)})
        if not env.task.single_step and rng.random() < recovery_prob:
            recovery += _recovery_pair(env, step, ref, rng, f"{episode_id}-s{len(steps)}", images)
        obs, reward, terminated, truncated, info = env.step(action)
        step.reward = reward
        steps.append(step)
        history.append(HistoryItem(action=action, description=action.description, screenshot=ref))
        if terminated or truncated:
            break
    episode = Episode(id=episode_id, instruction=env.task.instruction, steps=steps, source="guirl.sim",
                      platform=env.domain_name, task=env.task.family, success=reward == 1.0,
                      failure_reason=None if reward == 1.0 else str(info.get("reason", "not solved")),
                      extra={"seed": seed, "preset": env.preset.name, "domain": env.domain_name})
    return episode, recovery


def _recovery_pair(env: SimEnv, step: Step, ref: ImageRef, rng: random.Random, base_id: str,
                   images: ImageStore) -> list[Episode]:
    """ERROR_ESCAPE and BACK_ON_TRACK episodes for one wrong action at the env's current state."""
    oracle, world, state = env.oracle, env.world, env.state
    here = state_key(state)
    good = env.judgement().child_keys
    options = []
    for wrong in oracle.candidates(state):
        after, _ = world.simulate(state, wrong)
        if state_key(after) == here or full_key(after) in good:
            continue
        escapes = [a for a in oracle.candidates(after) if state_key(world.simulate(after, a)[0]) == here]
        if escapes:
            options.append((wrong, after, escapes))
    if not options:
        return []
    wrong, after, escapes = options[rng.randrange(len(options))]
    escape = _pick(escapes, rng)
    screen = world.screen(after)
    wrong_ref = images.save(render(screen, env.preset), f"{base_id}-error")
    wrong_item = HistoryItem(action=wrong, description=wrong.description, screenshot=ref)
    common = {"instruction": env.task.instruction, "source": "guirl.sim", "platform": env.domain_name,
              "task": env.task.family}
    escape_step = Step(index=0, screenshot=wrong_ref, history=step.history + [wrong_item], valid_actions=escapes,
                       action=escape, a11y=screen.a11y(), sub_goal=f"Undo the mistake: {escape.description}",
                       subtasks=step.subtasks, label=StepLabel.ERROR_ESCAPE)
    back_step = Step(index=0, screenshot=ref, valid_actions=step.valid_actions, action=step.action, a11y=step.a11y,
                     history=step.history + [wrong_item, HistoryItem(action=escape, description=escape.description,
                                                                     screenshot=wrong_ref)],
                     sub_goal=step.sub_goal, subtasks=step.subtasks, label=StepLabel.BACK_ON_TRACK)
    return [Episode(id=f"{base_id}-escape", steps=[escape_step], **common),
            Episode(id=f"{base_id}-back", steps=[back_step], **common)]


def _families(config: DatasetConfig) -> list[str]:
    names = [n for d in config.domains for n in available_tasks(d) if not n.endswith(".ground")]
    if config.tasks is not None:
        unknown = sorted(set(config.tasks) - set(available_tasks()))
        if unknown:
            raise ValueError(f"unknown sim tasks {unknown}; choose from {available_tasks()}")
        names = [n for n in names if n in config.tasks]
    return names


def generate_dataset(config: DatasetConfig | None = None, **kwargs) -> dict:
    """Write grounding, trajectory and recovery sets under ``config.out_dir``; returns the manifest."""
    config = config or DatasetConfig(**kwargs)
    if not 0.0 <= config.recovery_prob <= 1.0:
        raise ValueError(f"recovery_prob must be in [0, 1], got {config.recovery_prob}")
    out = Path(config.out_dir)
    start = time.perf_counter()
    counts: dict[str, int] = {}
    base = config.seed * 10_000_000
    families = _families(config)
    train_families = [f for f in families if f not in config.heldout_tasks]
    heldout = [f for f in families if f in config.heldout_tasks]
    traj_images = ImageStore(out / "trajectories")
    recovery_all: list[Episode] = []
    plan = {"train": (train_families, config.train_per_task), "test_seed": (train_families, config.test_per_task),
            "test_task": (heldout, config.test_per_task)}
    steps = 0
    for split, (fams, n) in plan.items():
        episodes = []
        for family in fams:
            env = SimEnv(domain=family.split(".")[0], preset=config.preset, task=family)
            for i in range(n):
                seed = base + SPLIT_OFFSETS[split] + i
                prob = config.recovery_prob if split == "train" else 0.0
                episode, recovery = expert_episode(env, seed, family, f"{split}-{family}-{i}", traj_images, prob)
                episodes.append(episode)
                recovery_all += recovery
                steps += len(episode.steps)
        counts[f"trajectories/{split}"] = write_episodes(out / "trajectories" / f"{split}.jsonl", episodes)
    counts["trajectories/recovery"] = write_episodes(out / "trajectories" / "recovery.jsonl", recovery_all)
    ground_images = ImageStore(out / "grounding")
    for split, n in (("train", config.grounding_train), ("test_seed", config.grounding_test)):
        episodes = []
        for domain in config.domains:
            env = SimEnv(domain=domain, preset=config.preset, task="ground")
            for i in range(n):
                seed = base + SPLIT_OFFSETS[split] + i
                episode, _ = expert_episode(env, seed, f"{domain}.ground", f"{split}-{domain}-{i}", ground_images)
                episodes.append(episode)
                steps += 1
        counts[f"grounding/{split}"] = write_episodes(out / "grounding" / f"{split}.jsonl", episodes)
    seconds = time.perf_counter() - start
    manifest = {"generator": "guirl.envs.sim", "config": {k: v for k, v in vars(config).items() if k != "out_dir"},
                "splits": {"train": train_families, "test_seed": train_families, "test_task": heldout},
                "seed_offsets": SPLIT_OFFSETS, "counts": counts, "steps": steps}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, default=list) + "\n")
    manifest["seconds"] = seconds
    return manifest
