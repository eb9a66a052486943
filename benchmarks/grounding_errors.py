"""Where the base agent's grounding misses land: on another element, near the target, or off every element.

    python benchmarks/grounding_errors.py [--models checkpoints/base-agent-history-tiny ...] [--seeds 5 6]
                                          [--screens 60] [--out results/grounding_errors.json]

Greedy answers (batched engine, the model's own prompt) on the grounding screens of validation data seeds
(``--screens`` per domain and seed, the screens of ``benchmarks/base_agent_vision_levers.py``). A wrong answer is
unparsed, of the wrong type, or a point; a point lands on another element (the smallest element of the screen's
accessibility tree that holds it, when that is not a container covering a quarter of the screen or more) or on
no element, and its distance to the target's box is measured in screen pixels. What it is for: the grounding
levers (vision tower, input resolution) leave grounding where it is; this says what kind of miss is left.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def _area(box) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def _distance(point, box) -> float:
    dx = max(box[0] - point[0], 0.0, point[0] - box[2])
    dy = max(box[1] - point[1], 0.0, point[1] - box[3])
    return (dx * dx + dy * dy) ** 0.5


def classify(action, match, step) -> tuple[str, float | None]:
    """(kind of miss, distance in screen pixels to the nearest valid box) of one wrong answer."""
    from guirl.actions import ParseFailure
    from guirl.matching.step import in_screen

    if isinstance(action, ParseFailure):
        return "unparsed", None
    if not match.type_match:
        return "wrong type", None
    width, height = step.screenshot.width, step.screenshot.height
    point = in_screen(action, width, height).point
    boxes = [in_screen(a, width, height).box for a in step.valid_actions]
    boxes = [b for b in boxes if b is not None]
    if point is None or not boxes:
        return "no point", None
    distance = min(_distance(point, b) for b in boxes)
    holders = [n for n in step.a11y or [] if n.box and _area(n.box) < width * height / 4
               and n.box[0] <= point[0] <= n.box[2] and n.box[1] <= point[1] <= n.box[3]]
    return ("another element" if holders else "no element"), distance


def main(argv: list[str] | None = None) -> dict:
    from base_agent import commit, heldout_data, write_result

    from guirl.eval.steps import evaluate_steps
    from guirl.models.load import load_policy
    from guirl.rollout.hf_engine import HFEngine
    from guirl.trainers.rl_common import load_states

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=["checkpoints/base-agent-history-tiny"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[5, 6], help="validation data seeds")
    parser.add_argument("--screens", type=int, default=60, help="grounding screens per domain and seed")
    parser.add_argument("--data", default="runs/grounding-errors", help="where the validation data goes")
    parser.add_argument("--out", default="results/grounding_errors.json")
    args = parser.parse_args(argv)
    result = {"command": " ".join(["python", "benchmarks/grounding_errors.py", *(argv or sys.argv[1:])]),
              "commit": commit(), "seeds": args.seeds, "rows": []}
    for model in args.models:
        policy = load_policy(model)
        engine = HFEngine.from_policy(policy)
        kinds: dict[str, int] = {}
        distances, n = [], 0
        for seed in args.seeds:
            data = heldout_data(Path(args.data), seed, 1, args.screens)
            held = [(s.episode, s.step, s.root) for s in load_states([str(data / "grounding" / "test_seed.jsonl")])]
            predictions: list = []
            evaluate_steps(engine, policy.prompt, policy.frame_for, held, 96, predictions)
            for (_, step, _), (action, match, _) in zip(held, predictions):
                n += 1
                if match.success:
                    continue
                kind, distance = classify(action, match, step)
                kinds[kind] = kinds.get(kind, 0) + 1
                if distance is not None:
                    distances.append(distance)
        misses = sum(kinds.values())
        row = {"model": model, "screens": n, "success": round(1 - misses / n, 4),
               "misses": {k: round(v / n, 4) for k, v in sorted(kinds.items())},
               "median_miss_px": round(statistics.median(distances), 1) if distances else None,
               "misses_within_32px": round(sum(d <= 32 for d in distances) / n, 4)}
        result["rows"].append(row)
        print(row, flush=True)
    write_result(Path(args.out), result)
    return result


if __name__ == "__main__":
    main()
