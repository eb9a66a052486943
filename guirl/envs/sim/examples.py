"""Example screenshots for the docs: ``python -m guirl.envs.sim.examples docs/images``.

Every picture is drawn from fixed seeds, so rerunning gives the same files.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path

from PIL import Image, ImageDraw

from guirl.actions.types import Action, ActionType
from guirl.envs.base import Observation
from guirl.envs.sim.env import SimEnv


def _act_on(env: SimEnv, widget_id: str, kind: ActionType = ActionType.CLICK) -> Observation:
    x1, y1, x2, y2 = env.world.screen().find(widget_id).box
    return env.step(Action(type=kind, point=((x1 + x2) / 2, (y1 + y2) / 2), frame=env.world.frame))[0]


def _expert_until(env: SimEnv, seed: int, reached: Callable[[SimEnv], bool]) -> Observation:
    """Run the expert (trying policy seeds in turn) until ``reached`` holds."""
    for policy_seed in range(50):
        rng = random.Random(policy_seed)
        obs = env.reset(seed=seed)
        while obs.valid_actions and not reached(env):
            obs = env.step(rng.choice(obs.valid_actions))[0]
        if reached(env):
            return obs
    raise RuntimeError("the expert never reached the wanted screen; pick another seed")


def save_example_images(out_dir: str | Path) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    shots: dict[str, Image.Image] = {}
    shots["sim_desktop"] = _expert_until(SimEnv(task="desktop.export_document", preset="realistic"), 5,
                                         lambda e: e.state["menu"] == "File").screenshot
    shots["sim_web"] = _expert_until(SimEnv(task="web.shopping", preset="realistic"), 2,
                                     lambda e: len(e.state["cart"]) == 1).screenshot
    shots["sim_phone"] = _expert_until(SimEnv(task="mobile.toggle_setting", preset="realistic"), 1,
                                       lambda e: e.state["app"] == "Settings").screenshot
    env = SimEnv(task="desktop.open_file", preset="realistic")
    env.reset(seed=4)
    _act_on(env, "icon.Files", ActionType.DOUBLE_CLICK)
    _act_on(env, "item.Pictures", ActionType.DOUBLE_CLICK)
    shots["sim_error_dialog"] = _act_on(env, f"item.{env.world.content.folders['Pictures'][0]}",
                                        ActionType.DOUBLE_CLICK).screenshot
    env.reset(seed=3)
    obs = _act_on(env, "icon.Files", ActionType.DOUBLE_CLICK)
    image, draw = obs.screenshot, ImageDraw.Draw(obs.screenshot)
    for action in obs.valid_actions:
        if action.box:
            draw.rectangle(action.box, outline=(230, 30, 30), width=3)
    shots["sim_valid_actions"] = image
    coarse = []
    for task, seed, steps in (("desktop.change_settings", 0, 2), ("web.fill_form", 1, 3), ("mobile.find_contact", 2, 1)):
        env = SimEnv(task=task, preset="coarse")
        obs, rng = env.reset(seed=seed), random.Random(seed)
        for _ in range(steps):
            obs = env.step(rng.choice(obs.valid_actions))[0]
        coarse.append(obs.screenshot)
    canvas = Image.new("RGB", (sum(s.width for s in coarse) + 16 * (len(coarse) - 1), 512), (255, 255, 255))
    x = 0
    for shot in coarse:
        canvas.paste(shot, (x, 0))
        x += shot.width + 16
    shots["sim_coarse"] = canvas
    paths = []
    for name, shot in shots.items():
        path = out / f"{name}.png"
        shot.save(path, optimize=True)
        paths.append(path)
    return paths


if __name__ == "__main__":
    for written in save_example_images(sys.argv[1] if len(sys.argv) > 1 else "docs/images"):
        print(written)
