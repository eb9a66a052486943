"""Reward throughput: completions scored per second by the multi-solution reward.

Scores N LiteGUI-format completions (default 100,000), each against 1 to 5
valid actions (A*_t), with ``make_reward("litegui_ms")``: parsing the text,
converting frames (Qwen3-VL relative 0-1000 -> screen pixels) and taking the
max of phi_gui over A*_t. Also times the scoring alone on pre-parsed actions.

    .venv/bin/python benchmarks/rewards_throughput.py [--n 100000] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
import time

from guirl.actions import Action, Frame, parse_action
from guirl.rewards import make_reward, multi_solution_score

SCREEN = Frame.screen(1920, 1080)
OUTPUT = Frame.relative(1000)


def random_action(rng: random.Random) -> Action:
    kind = rng.choice(["click", "click", "click", "type", "scroll", "key"])
    if kind == "click":
        x, y = rng.uniform(0, 1800), rng.uniform(0, 1000)
        return Action(type="click", box=(x, y, x + rng.uniform(10, 120), y + rng.uniform(10, 80)), frame=SCREEN)
    if kind == "type":
        return Action(type="type", text=rng.choice(["hello world", "settings", "report.pdf", "q3 sales"]))
    if kind == "scroll":
        return Action(type="scroll", direction=rng.choice(["up", "down"]))
    return Action(type="key", keys=rng.choice([("ctrl", "a"), ("ctrl", "s"), ("enter",)]))


def random_completion(rng: random.Random) -> str:
    kind = rng.choice(["CLICK", "CLICK", "CLICK", "TEXT_INPUT", "SCROLL_DOWN", "KEY", "garbage"])
    if kind == "garbage":
        return "I will click the button " * rng.randint(1, 5)
    action: dict = {"type": kind}
    if kind == "CLICK":
        action["position"] = [rng.randint(0, 1000), rng.randint(0, 1000)]
    elif kind == "TEXT_INPUT":
        action["value"] = rng.choice(["hello", "settings", "q3 sales report"])
    elif kind == "KEY":
        action["value"] = rng.choice(["CTRL+A", "ENTER"])
    return json.dumps(
        {
            "reasoning": "The target is visible. I act on it.",
            "subtasks": [{"description": "do it", "status": "in_progress"}],
            "action": action,
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="number of completions to score")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the synthetic batch")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    completions = [random_completion(rng) for _ in range(args.n)]
    valid = [[random_action(rng) for _ in range(rng.randint(1, 5))] for _ in range(args.n)]
    reward = make_reward("litegui_ms", fmt="litegui")

    start = time.perf_counter()
    scores = reward(completions, valid_actions=valid, output_frame=[OUTPUT] * args.n)
    full = time.perf_counter() - start

    parsed = [parse_action(c, "litegui", OUTPUT) for c in completions]
    start = time.perf_counter()
    for pred, actions in zip(parsed, valid, strict=True):
        multi_solution_score(pred, actions, SCREEN)
    scoring = time.perf_counter() - start

    mean_valid = sum(map(len, valid)) / args.n
    print(
        f"completions: {args.n}, valid actions per completion: 1-5 (mean {mean_valid:.2f}), "
        f"mean score {sum(scores) / args.n:.3f}"
    )
    print(f"litegui_ms end to end (parse + frames + max phi_gui): {args.n / full:,.0f} completions/s ({full:.2f} s)")
    print(
        f"max phi_gui on pre-parsed actions:                  {args.n / scoring:,.0f} completions/s ({scoring:.2f} s)"
    )


if __name__ == "__main__":
    main()
