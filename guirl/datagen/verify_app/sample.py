"""A sample verification project on real built-in-world screens (for tests, the docs' screenshot, benchmarks).

Writes what ``guirl datagen explore`` writes, without a model: the expert
trajectories of :func:`guirl.envs.sim.generate_dataset`, and for every step
the recorded action plus synthetic "samples" of each drawing kind (point,
box, drag, typed text, keys, scroll, a Qwen3-VL relative-frame click).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from guirl.actions import Action, ActionType, Frame
from guirl.data.io import read_episodes, write_episodes
from guirl.data.schema import Episode, Step


def _samples(step: Step, rng: random.Random, n: int) -> list[Action]:
    width, height = step.screenshot.width, step.screenshot.height
    frame = Frame.screen(width, height)
    boxes = [node.box for node in step.a11y or [] if node.role in ("button", "textbox", "link", "checkbox")]

    def point() -> tuple[float, float]:
        return (round(rng.uniform(0.1, 0.9) * width), round(rng.uniform(0.1, 0.9) * height))

    makers = [
        lambda: Action(type=ActionType.CLICK, point=point(), frame=frame),
        lambda: Action(type=ActionType.CLICK, box=rng.choice(boxes) if boxes else (20, 20, 120, 60), frame=frame),
        lambda: Action(type=ActionType.DRAG, point=point(), end_point=point(), frame=frame),
        lambda: Action(type=ActionType.TYPE, point=point(), text=rng.choice(["city map", "hello", "42"]), frame=frame),
        lambda: Action(type=ActionType.KEY, keys=rng.choice([("ctrl", "a"), ("enter",), ("tab",)])),
        lambda: Action(type=ActionType.SCROLL, point=point(), direction=rng.choice(["up", "down"]), frame=frame),
        lambda: Action(type=ActionType.CLICK, point=(rng.randrange(100, 900), rng.randrange(100, 900)),
                       frame=Frame.relative(1000)),
    ]
    recorded = step.action or (step.valid_actions[0] if step.valid_actions else None)
    actions = [recorded] if recorded is not None else []
    order = list(range(len(makers)))
    rng.shuffle(order)
    for i in order:
        if len(actions) >= n:
            break
        action = makers[i]()
        if action not in actions:
            actions.append(action)
    return actions


def step_record(episode: Episode, step: Step, history: list[str], per_step: int, seed: int) -> dict:
    """One ``candidates.jsonl`` line for ``step`` (the explore contract)."""
    rng = random.Random(f"{seed}:{episode.id}:{step.index}")
    actions = _samples(step, rng, per_step)
    candidates = []
    for k, action in enumerate(actions):
        recorded = k == 0 and step.action is not None
        candidates.append({"id": f"{episode.id}/{step.index}/{k}", "action": action.model_dump(mode="json"),
                           "source": "recorded" if recorded else "sample", "count": rng.randint(1, 3),
                           "oracle_label": True if recorded else None})
    return {"episode_id": episode.id, "step_index": step.index, "instruction": episode.instruction,
            "screenshot": step.screenshot.path, "screen_size": [step.screenshot.width, step.screenshot.height],
            "history": history, "candidates": candidates,
            "recorded_action": None if step.action is None else step.action.model_dump(mode="json")}


def write_sample_project(out_dir: str | Path, seed: int = 3, steps: int | None = None, per_step: int = 5,
                         domains: tuple[str, ...] = ("web",)) -> Path:
    """Write ``out_dir/manifest.json`` + ``candidates.jsonl`` (and the world's data under ``out_dir/world``).

    ``steps``: explore this many steps, cycling over the world's episodes
    (copies get new ids) when it asks for more than they have; None = each
    step once. Returns ``out_dir``.
    """
    from guirl.envs.sim import generate_dataset

    out = Path(out_dir)
    world = out / "world"
    generate_dataset(out_dir=str(world), seed=seed, domains=domains, train_per_task=1, test_per_task=0,
                     grounding_train=0, grounding_test=0, recovery_prob=0.0)
    source = read_episodes(world / "trajectories" / "train.jsonl")
    wanted = steps if steps is not None else sum(len(ep.steps) for ep in source)
    episodes, lines, copy = [], [], 0
    while len(lines) < wanted:
        for ep in source:
            episode = ep if copy == 0 else ep.model_copy(update={"id": f"{ep.id}~{copy}"})
            episodes.append(episode)
            history: list[str] = []
            for step in episode.steps:
                if len(lines) < wanted:
                    lines.append(json.dumps(step_record(episode, step, list(history), per_step, seed)))
                history.append(step.action.description or step.action.type.value if step.action else "(no action)")
            if len(lines) >= wanted:
                break
        copy += 1
    episodes_path = (world / "trajectories" / "explored.jsonl").resolve()
    write_episodes(episodes_path, episodes)
    (out / "candidates.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    manifest = {"episodes": str(episodes_path), "generator": "guirl.datagen.verify_app.sample", "seed": seed,
                "steps": len(lines), "samples_per_step": per_step}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return out
