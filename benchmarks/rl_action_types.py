"""Where RL moves a policy: held-out step success per ground-truth action type, and the action types it predicts.

    python benchmarks/rl_action_types.py MODEL [MODEL ...] [--seed 5] [--split trajectories/train.jsonl]
                                         [--samples 400] [--out runs/bench-rl] [--per-task N]

Greedy, batched (the evaluation of ``benchmarks/rl_recipes.py``) on ``--samples`` recorded steps of
built-in-world data of ``--seed`` (generated under ``--out`` when missing; seed 5 is the validation seed
the tiny recipes were chosen on, seed 7 the held-out one). Per model: for each ground-truth action type
(the first valid action's), steps / successes / type matches, and how often each action type was
predicted. A policy that collapses onto one action type (e.g. always clicking) shows here while its
overall step success may hardly move. It also prints how often the output stays the same from one step
of an episode to the next while the right action changes (with ``--samples`` above the split's size every
consecutive pair counts): a policy that does not read the screen's progress. ``--pass-at K`` also samples K completions per step at temperature
1 (the recipes' sampling) and prints their mean success, pass@K and the share of steps the greedy output
gets wrong but some sample gets right: the room a reward has to teach anything.

``--labels error_escape --split trajectories/recovery.jsonl`` keeps InfiGUI-R1's error-escape steps; each has a
back-on-track twin (the same mistake undone, whose target is the action the mistake replaced), and the script also
counts the outputs that do that action instead of escaping: answers given as if no mistake had happened. Models may
be named ``LABEL=DIR``; ``--results`` writes the rows as JSON (``results/rl_action_types_<name>.json``).
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
from pathlib import Path

from rl_recipes import ensure_data


def by_type(policy, engine, steps: list, max_new_tokens: int = 80,
            collected: list | None = None) -> tuple[dict, dict, float, list[bool], dict]:
    from guirl.eval.steps import evaluate_steps

    predictions: list = []
    scores = evaluate_steps(engine, policy.prompt, policy.frame_for, steps, max_new_tokens, predictions)
    if collected is not None:
        collected.extend(predictions)
    truth: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    predicted: collections.Counter = collections.Counter()
    for (_, step, _), (action, match, _) in zip(steps, predictions, strict=True):
        row = truth[step.valid_actions[0].type.value]
        row[0] += 1
        row[1] += match.success
        row[2] += match.type_match
        predicted[action.type.value if action else "unparsed"] += 1
    follow = unchanged_outputs([(ep.id, step.index, step.valid_actions[0], text)
                                for (ep, step, _), (_, _, text) in zip(steps, predictions, strict=True)])
    return dict(truth), dict(predicted), scores["eval/step_success"], [bool(m.success) for _, m, _ in predictions], follow


def unchanged_outputs(rows: list[tuple[str, int, object, str]]) -> dict[str, float]:
    """How much a policy's output follows the screen within a task. ``rows``: (episode id, step index, the
    step's right action, the policy's output text). Over pairs of consecutive steps of one episode whose
    right action differs: the share where the output stayed the same; and per episode, distinct outputs
    against distinct right actions. A policy that reads the screen changes its output when the task moves on.

    >>> unchanged_outputs([("e", 0, "a", "x"), ("e", 1, "b", "x"), ("e", 2, "c", "y"), ("f", 0, "a", "x")])
    {'changed_truth_pairs': 2, 'same_output': 0.5, 'outputs_per_episode': 1.5, 'truths_per_episode': 2.0}
    """
    episodes: dict[str, dict[int, tuple[object, str]]] = collections.defaultdict(dict)
    for episode, index, truth, text in rows:  # the action part: a thought before it does not count
        episodes[episode][index] = (truth, text.split("</think>", 1)[-1].strip())
    pairs = same = 0
    for steps in episodes.values():
        for index, (truth, text) in steps.items():
            if index + 1 in steps and steps[index + 1][0] != truth:
                pairs += 1
                same += steps[index + 1][1] == text
    n = max(1, len(episodes))
    return {"changed_truth_pairs": pairs, "same_output": same / max(1, pairs),
            "outputs_per_episode": sum(len({t for _, t in s.values()}) for s in episodes.values()) / n,
            "truths_per_episode": sum(len({str(a) for a, _ in s.values()}) for s in episodes.values()) / n}


def ignored_mistake(steps: list, predictions: list, twins: dict) -> tuple[int, int, int]:
    """On error-escape steps (``<id>-escape``) whose back-on-track twin (``<id>-back``: the same mistake undone,
    its target the action the mistake replaced) is in ``twins`` (episode id -> its step): how many there are, how
    many outputs escape, and how many do the twin's action instead, as if the mistake had not happened.
    ``predictions``: ``(action, match, text)`` per step of ``steps``, as :func:`by_type` collects them."""
    from guirl.matching.step import match_action

    n = escaped = ignored = 0
    for (episode, step, _), (action, match, _) in zip(steps, predictions, strict=True):
        twin = twins.get(episode.id.removesuffix("-escape") + "-back") if episode.id.endswith("-escape") else None
        if twin is None:
            continue
        n += 1
        escaped += match.success
        size = (step.screenshot.width, step.screenshot.height)
        ignored += match_action(action, twin.valid_actions, screen_size=size, a11y=twin.a11y).success
    return n, escaped, ignored


def sampled(policy, engine, steps: list, k: int, greedy_ok: list[bool]) -> str:
    """K samples per step at T=1, scored by the ``step_match`` reward (the held-out metric) on the columns the
    RL trainers build."""
    from guirl.rewards import columns_for, make_reward, reward_columns
    from guirl.rollout.engine import SamplingParams
    from guirl.rollout.history import recorded_prompt

    prompts = [recorded_prompt(policy.prompt, policy.frame_for, ep, st, root) for ep, st, root in steps]
    outputs = engine.generate([p for p, _ in prompts], SamplingParams(n=k, temperature=1.0, max_new_tokens=80, seed=1))
    columns = columns_for([reward_columns(st, ep, policy.frame_for(*image.size))
                           for (ep, st, _), (_, image) in zip(steps, prompts, strict=True)], k)
    scores = make_reward("step_match", fmt=policy.prompt.fmt).score([c.text for g in outputs for c in g], **columns).scores
    hits = [scores[i * k : (i + 1) * k] for i in range(len(steps))]
    n = len(hits)
    return (f"  {k} samples at T=1: mean success {sum(sum(r) / k for r in hits) / n:.3f}, pass@{k} "
            f"{sum(any(r) for r in hits) / n:.3f}, greedy wrong but some sample right "
            f"{sum(any(r) and not g for r, g in zip(hits, greedy_ok, strict=True)) / n:.3f}")


def main() -> None:
    import torch
    from base_agent import commit
    from rl_recipes import _portable

    from guirl.models.load import load_policy
    from guirl.rollout.hf_engine import HFEngine
    from guirl.trainers.rl_common import load_states

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="+", help="model directories (the base agent, trained runs' final/), each "
                        "optionally LABEL=DIR (the name its row gets in --results)")
    parser.add_argument("--seed", type=int, default=5, help="data seed of the steps (default 5: validation)")
    parser.add_argument("--split", default="trajectories/train.jsonl", help="file under the data directory")
    parser.add_argument("--samples", type=int, default=400, help="steps drawn (random.Random(0))")
    parser.add_argument("--out", default="runs/bench-rl", help="where the data is (or is generated)")
    parser.add_argument("--per-task", type=int, default=None,
                        help="held-out episodes per family of the data (rl_recipes' --per-task; default volume)")
    parser.add_argument("--labels", nargs="+", default=["correct", "error_escape", "back_on_track"],
                        choices=["correct", "error", "error_escape", "back_on_track"],
                        help="step labels kept (error_escape: InfiGUI-R1's error-escape steps of recovery.jsonl)")
    parser.add_argument("--pass-at", type=int, default=0, help="also sample K completions per step at T=1")
    parser.add_argument("--results", default=None, help="also write the rows as JSON here (results/<name>.json)")
    args = parser.parse_args()
    models = dict(item.partition("=")[::2] if "=" in item else (item, item) for item in args.models)
    for label, path in models.items():
        if not (Path(path) / "config.json").is_file():
            parser.error(f"model {label}: {path} is not a model directory (no config.json)")
    torch.set_num_threads(2)
    data = ensure_data(Path(args.out), args.seed, args.per_task)
    states = load_states([str(data / args.split)], labels=args.labels)
    steps = [(s.episode, s.step, s.root) for s in states if s.step.valid_actions]
    twins = ({s.episode.id: s.step for s in load_states([str(data / args.split)], labels=["back_on_track"])}
             if "error_escape" in args.labels else {})  # an error-escape step's back-on-track twin (ignored_mistake)
    steps = random.Random(0).sample(steps, min(args.samples, len(steps)))
    rows = {}
    for label, model in models.items():
        policy = load_policy(model)
        engine = HFEngine.from_policy(policy)
        predictions: list = []
        truth, predicted, success, greedy_ok, follow = by_type(policy, engine, steps, collected=predictions)
        row = rows[label] = {"model": _portable(model), "steps": len(steps), "success": round(success, 4),
                             "truth": {k: dict(zip(("steps", "success", "type_ok"), v, strict=True))
                                       for k, v in sorted(truth.items())},
                             "predicted": dict(sorted(predicted.items(), key=lambda kv: -kv[1]))}
        print(f"\n{model}: step success {success:.3f} on {len(steps)} steps of data seed {args.seed} ({args.split})")
        print(f"  {'ground truth':<14} {'steps':>5} {'success':>7} {'type ok':>7}")
        for kind, (n, ok, type_ok) in sorted(truth.items()):
            print(f"  {kind:<14} {n:>5} {ok:>7} {type_ok:>7}")
        print("  predicted types: " + ", ".join(f"{k} {v}" for k, v in sorted(predicted.items(), key=lambda kv: -kv[1])))
        if follow["changed_truth_pairs"]:
            print(f"  consecutive steps whose right action changes: {follow['changed_truth_pairs']}, output unchanged on "
                  f"{follow['same_output']:.2f}; per episode {follow['outputs_per_episode']:.2f} distinct outputs, "
                  f"{follow['truths_per_episode']:.2f} distinct right actions")
        n, escaped, ignored = ignored_mistake(steps, predictions, twins)
        if n:
            row["twinned"] = {"steps": n, "escaped": round(escaped / n, 4), "as_if_no_mistake": round(ignored / n, 4)}
            print(f"  error-escape steps with their back-on-track twin: {n}; escaped {escaped / n:.3f}, did the "
                  f"replaced action instead (as if no mistake) {ignored / n:.3f}")
        if args.pass_at:
            print(sampled(policy, engine, steps, args.pass_at, greedy_ok))
    if args.results:
        result = {"command": " ".join(["python", "benchmarks/rl_action_types.py", *sys.argv[1:]]), "commit": commit(),
                  "seed": args.seed, "per_task": args.per_task, "split": args.split, "labels": args.labels,
                  "models": rows}
        Path(args.results).parent.mkdir(parents=True, exist_ok=True)
        Path(args.results).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
