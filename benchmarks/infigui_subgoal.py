"""Where InfiGUI-R1's sub-goal reward can act: does the agent fail by naming the wrong sub-goal, or by acting
wrongly on the right one? And does training with the reward make the sub-goals it writes better?

    python benchmarks/infigui_subgoal.py [--models start=checkpoints/base-agent-history-tiny LABEL=DIR ...]
                                         [--eval-seed 7] [--per-task 24] [--out runs/bench-infigui-subgoal]
                                         [--results results/infigui_subgoal.json]

Every model answers the same held-out multi-step steps (``steps_unseen_seeds`` of data seed ``--eval-seed``,
trained families, the set ``benchmarks/rl_recipes.py`` scores) greedily, prompted as it was trained. Per step the
ground-truth sub-goal scorer (``ground_truth_subgoal``, the judge of ``recipes/infigui_rloo_tiny.yaml``) scores the
reasoning inside ``<think>`` against the step's recorded sub-goal, ``S`` in 0..10 (the reward uses ``S / 10``).
A step *names its sub-goal* when ``S >= --named`` (8: content-token F2 of at least 0.72).

Per model: step success; the mean ``S / 10``; the share of steps that name their sub-goal; step success on those
and on the others; and the share of *failed* steps that named their sub-goal (planning right, action wrong).
The sub-goal term acts only on samples whose action parameters are wrong (``R_agent = w_t R_type + w_s R_subgoal``
there): on a step that fails with the right sub-goal it already pays its full share, so what it can still teach
is on the failed steps that did not name their sub-goal. Every model after the first is paired with the first, step by step, on
success and on ``S / 10`` (mean difference and its 95% interval). A model's per-step vectors are kept in ``--out``
(by its resolved path and write time): a rerun with more models scores only the new ones.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

def subgoal_score(text: str, sub_goal: str | None) -> int | None:
    """``S`` (0..10) of a completion's reasoning against the recorded sub-goal; None when the step records none.

    >>> subgoal_score("<think>Open the Files app</think>click(1, 2)", "Open the Files app")
    10
    >>> subgoal_score("click(1, 2)", "Open the Files app"), subgoal_score("<think>x</think>", None)
    (0, None)
    """
    from guirl.judges.ground_truth import content_tokens, subgoal_verdict
    from guirl.rewards.infigui import reasoning_of

    if not sub_goal or not content_tokens(sub_goal):
        return None
    reasoning = reasoning_of(text)
    return subgoal_verdict(reasoning, sub_goal)["score"] if content_tokens(reasoning) else 0


def summarise(success: list[int], scores: list[int], named_at: int = 8) -> dict:
    """The per-model row from per-step success (0/1) and ``S`` (steps without a recorded sub-goal left out).

    >>> r = summarise([1, 0, 0, 1], [10, 9, 2, 3])
    >>> r["named"], r["success_named"], r["success_not_named"], r["failed_named"], r["subgoal"]
    (0.5, 0.5, 0.5, 0.5, 0.6)
    """
    named = [s >= named_at for s in scores]
    on = [ok for ok, n in zip(success, named, strict=True) if n]
    off = [ok for ok, n in zip(success, named, strict=True) if not n]
    failed = [n for ok, n in zip(success, named, strict=True) if not ok]

    def share(xs: list) -> float | None:
        return round(sum(xs) / len(xs), 4) if xs else None

    return {"steps": len(success), "success": share(success), "subgoal": round(sum(scores) / 10 / len(scores), 4),
            "named": share(named), "success_named": share(on), "success_not_named": share(off),
            "failed_named": share(failed), "named_steps": len(on)}


def rloo(rewards: list[float]) -> list[float]:
    """Leave-one-out advantages of one group: the trainer's own estimator (``rloo_advantage``).

    >>> rloo([1.0, 0.0, 0.0])
    [1.0, -0.5, -0.5]
    """
    import torch

    from guirl.algorithms.advantages import rloo_advantage

    return rloo_advantage(torch.tensor(rewards, dtype=torch.float64), len(rewards))[0].tolist()


def _varies(values: list[float]) -> bool:
    """Whether the values of one group differ (RLOO gives them a non-zero advantage)."""
    return max(values) - min(values) > 1e-9


def subgoal_in_groups(totals: list[float], parts: list[float], group_size: int) -> dict:
    """Where the sub-goal term (``parts``, its share of each sample's reward ``totals``) moves RLOO's advantage.

    >>> r = subgoal_in_groups([1.0, 0.2, 0.0, 0.0, 0.5, 0.5, 0.7, 0.5], [0.0, 0.2, 0.0, 0.0, 0.0, 0.0, 0.2, 0.0], 4)
    >>> r["moving"], r["subgoal_varies"], r["subgoal_alone"], r["subgoal_share"], r["sign_set"]
    (1.0, 1.0, 0.5, 0.3529, 0.5)
    """
    if group_size < 2 or len(totals) % group_size or len(parts) != len(totals):
        raise ValueError(f"{len(totals)} rewards and {len(parts)} parts in groups of {group_size}")
    groups = moving = varies = alone = flipped = samples = 0
    mass_sub = mass = 0.0
    for i in range(0, len(totals), group_size):
        total, part = totals[i : i + group_size], parts[i : i + group_size]
        rest = [t - p for t, p in zip(total, part, strict=True)]
        groups += 1
        a, a_sub, a_rest = rloo(total), rloo(part), rloo(rest)
        moving += _varies(total)
        if _varies(part):
            varies += 1
            alone += not _varies(rest)
        mass_sub += sum(abs(x) for x in a_sub)
        mass += sum(abs(x) for x in a)
        samples += group_size
        flipped += sum((x > 1e-9) != (y > 1e-9) or (x < -1e-9) != (y < -1e-9) for x, y in zip(a, a_rest, strict=True))
    return {"groups": groups, "moving": round(moving / groups, 4), "subgoal_varies": round(varies / groups, 4),
            "subgoal_alone": round(alone / groups, 4), "subgoal_share": round(mass_sub / mass, 4) if mass else None,
            "sign_set": round(flipped / samples, 4)}


def sample_groups(model: Path, recipe: Path, states: int, group_size: int, train_data: list[str] | None) -> dict:
    """The recipe's rewards on ``group_size`` samples of ``states`` training states (``random.Random(0)``), split
    into the sub-goal term's part and the rest (:func:`subgoal_in_groups`)."""
    import math
    import random

    from rl_recipes import _portable

    from guirl.config import load_config
    from guirl.models.load import load_policy
    from guirl.rewards import columns_for, reward_columns
    from guirl.rollout.engine import SamplingParams
    from guirl.rollout.hf_engine import HFEngine
    from guirl.rollout.history import recorded_prompt
    from guirl.trainers.grpo import GRPOConfig
    from guirl.trainers.rl_common import WeightedRewards, load_states

    cfg = load_config(GRPOConfig, recipe, [f"train_data={json.dumps(train_data)}"] if train_data else None)
    weighted = WeightedRewards(cfg.rewards)
    judged = [(spec, reward) for spec, reward in zip(weighted.specs, weighted.rewards, strict=True)
              if getattr(reward, "judge", None) is not None and hasattr(reward, "w_subgoal")]
    if not judged:
        raise ValueError(f"{recipe}: no reward with a sub-goal judge (subgoal_judge) to split")
    pool = load_states(cfg.train_data)
    drawn = random.Random(0).sample(pool, min(states, len(pool)))
    policy = load_policy(model)
    prompts = [recorded_prompt(policy.prompt, policy.frame_for, s.episode, s.step, s.root) for s in drawn]
    outputs = HFEngine.from_policy(policy).generate(
        [p for p, _ in prompts], SamplingParams(n=group_size, temperature=cfg.temperature, top_p=cfg.top_p,
                                                max_new_tokens=cfg.max_new_tokens, seed=1))
    columns = columns_for([reward_columns(s.step, s.episode, policy.frame_for(*image.size))
                           for s, (_, image) in zip(drawn, prompts, strict=True)], group_size)
    totals, named, _ = weighted([c.text for g in outputs for c in g], columns)
    parts = [sum(spec.weight * reward.w_accuracy * reward.w_subgoal
                 * (0.0 if math.isnan(v := n.get(f"{spec.name}/subgoal", 0.0)) else v) for spec, reward in judged)
             for n in named]
    by_label: dict[str, dict] = {}
    for i, state in enumerate(drawn):  # where the advantage is: which kinds of state have groups that differ
        group = totals[i * group_size : (i + 1) * group_size]
        row = by_label.setdefault(state.step.label.value, {"states": 0, "moving": 0, "mean_reward": 0.0})
        row["states"] += 1
        row["moving"] += _varies(group)
        row["mean_reward"] += sum(group) / group_size
    for row in by_label.values():
        row["moving"], row["mean_reward"] = round(row["moving"] / row["states"], 4), round(row["mean_reward"] / row["states"], 4)
    return {"states": len(drawn), "group_size": group_size, "train_data": [_portable(p) for p in cfg.train_data],
            **subgoal_in_groups(totals, parts, group_size), "by_label": by_label}


def score_model(model: Path, data: Path, max_new_tokens: int = 96) -> tuple[list[int], list[int]]:
    """Greedy per-step success and ``S`` on the held-out steps that record a sub-goal (a fixed order); each answer
    has ``max_new_tokens`` of room (about 320 for a model that reasons first)."""
    from rl_recipes import scored_steps

    from guirl.eval.steps import evaluate_steps
    from guirl.models.load import load_policy
    from guirl.rollout.hf_engine import HFEngine

    held = [s for s in scored_steps(data / "trajectories" / "test_seed.jsonl") if s[1].sub_goal]
    policy = load_policy(model)
    predictions: list = []
    evaluate_steps(HFEngine.from_policy(policy), policy.prompt, policy.frame_for, held, max_new_tokens, predictions)
    success = [int(m.success) for _, m, _ in predictions]
    scores = [subgoal_score(text, step.sub_goal) for (_, step, _), (_, _, text) in zip(held, predictions, strict=True)]
    return success, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=[f"start={ROOT / 'checkpoints' / 'base-agent-history-tiny'}"],
                        help="LABEL=MODEL_DIR, the first is the reference every other is paired with")
    parser.add_argument("--eval-seed", type=int, default=7, help="held-out data seed (7; 5 or 6 for validation)")
    parser.add_argument("--per-task", type=int, default=24, help="held-out episodes per trained family")
    parser.add_argument("--named", type=int, default=8, help="S at or above which a step names its sub-goal")
    parser.add_argument("--out", default="runs/bench-infigui-subgoal", help="where the held-out data is generated")
    parser.add_argument("--results", default=None, help="write the table as JSON here (results/infigui_subgoal.json)")
    parser.add_argument("--max-new-tokens", type=int, default=96,
                        help="each answer's room in tokens (96; about 320 after reasoning injection)")
    parser.add_argument("--groups", type=int, default=0, help="also sample groups of G on training states (0: off)")
    parser.add_argument("--states", type=int, default=300, help="training states for --groups (the recipe's volume)")
    parser.add_argument("--recipe", default=str(ROOT / "recipes" / "infigui_rloo_tiny.yaml"), help="for --groups")
    parser.add_argument("--train-data", nargs="+", default=None, help="for --groups: instead of the recipe's")
    args = parser.parse_args()
    models = {}
    for item in args.models:
        label, sep, path = item.partition("=")
        if not sep or not label:
            parser.error(f"--models {item}: write LABEL=MODEL_DIR")
        if not (Path(path) / "config.json").is_file():
            parser.error(f"--models {item}: {path} is not a model directory (no config.json)")
        models[label] = path
    if args.max_new_tokens <= 0:
        parser.error(f"--max-new-tokens {args.max_new_tokens}: give a positive number of tokens")
    if not 0 <= args.named <= 10:
        parser.error(f"--named {args.named}: S runs from 0 to 10")
    if args.groups == 1 or args.groups < 0 or args.states < 1:
        parser.error(f"--groups {args.groups} --states {args.states}: RLOO needs groups of 2 or more on 1+ states")
    if args.groups and not Path(args.recipe).is_file():
        parser.error(f"--recipe {args.recipe}: no such file (recipes/infigui_rloo_tiny.yaml)")
    for path in args.train_data or []:
        if not Path(path).is_file():
            parser.error(f"--train-data {path}: no such file (a trajectories .jsonl)")

    from base_agent import commit, paired
    from rl_recipes import _portable, ensure_data

    data = ensure_data(Path(args.out), args.eval_seed, args.per_task)
    cache_path = Path(args.out) / f"infigui_subgoal-seed{args.eval_seed}-t{args.per_task}.json"  # per model dir
    cache = json.loads(cache_path.read_text()) if cache_path.is_file() else {}
    vectors = {}
    for label, path in models.items():
        key = f"{Path(path).resolve()}@{(Path(path) / 'config.json').stat().st_mtime_ns}"  # a retrained model: anew
        key += f"@{args.max_new_tokens}" if args.max_new_tokens != 96 else ""
        if key not in cache:
            cache[key] = score_model(Path(path), data, args.max_new_tokens)
            cache_path.write_text(json.dumps(cache))
        vectors[label] = cache[key]
    first = next(iter(vectors))
    rows = {}
    for label, (success, scores) in vectors.items():
        rows[label] = {"model": _portable(models[label]), **summarise(success, scores, args.named)}
        if label != first:
            rows[label]["paired"] = {"success": paired(vectors[first][0], success),
                                     "subgoal": paired([s / 10 for s in vectors[first][1]], [s / 10 for s in scores])}
        print(label, json.dumps(rows[label]), flush=True)
    groups = None
    if args.groups:
        key = f"groups:{Path(models[first]).resolve()}:{args.recipe}:{args.train_data}:{args.states}:{args.groups}"
        if key not in cache:
            cache[key] = sample_groups(Path(models[first]), Path(args.recipe), args.states, args.groups,
                                       args.train_data)
            cache_path.write_text(json.dumps(cache))
        groups = {"model": first, **cache[key]}
        print("groups", json.dumps(groups), flush=True)
    if args.results:
        result = {"command": " ".join(["python", "benchmarks/infigui_subgoal.py", *sys.argv[1:]]), "commit": commit(),
                  "eval_seed": args.eval_seed, "per_task": args.per_task, "named_at": args.named,
                  "max_new_tokens": args.max_new_tokens, "models": rows,
                  **({"groups": groups} if groups else {})}
        Path(args.results).parent.mkdir(parents=True, exist_ok=True)
        Path(args.results).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
