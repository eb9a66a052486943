"""The base agents side by side on held-out built-in-world data: what a starting point for RL can do.

    python benchmarks/base_agent.py [--models checkpoints/base-agent-history-tiny checkpoints/base-agent-tiny]
                                    [--seed 7] [--per-task 24] [--grounding 100] [--episodes 105] [--pass-at 8]
                                    [--out results/base_agent.json]

Every model meets the same steps, greedy and batched (:func:`guirl.eval.steps.evaluate_steps`), prompted as it
was trained (its saved prompt spec: history window, thought). Data of ``--seed`` is generated under
``--data`` (seed 7 is the held-out seed; 5 and 6 are the validation seeds levers are chosen on). Per model:

- step success on multi-step steps of trained task families (``test_seed``: seeds never trained on), of
  unseen families (``test_task``), on grounding screens, and on the TYPE steps of trained families;
- how often the output's action stays the same from one step of an episode to the next while the right
  action changes (a policy that does not follow the screen's progress; the thought is not compared);
- whole-episode success when it plays ``--episodes`` sim tasks of the trained families (live, greedy);
- pass@K minus greedy success on training states (data seed 0's train split): the room a reward has.

The first model is the reference of the paired differences (same steps, 95% normal interval of the mean
per-step difference). The table is printed and written as JSON (command, commit, seeds, per-step success)
to ``--out``; ``scripts/render_results.py`` renders docs/results.md from it.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from rl_action_types import unchanged_outputs  # noqa: E402

STEP_SPLITS = {"trained_families": "trajectories/test_seed.jsonl", "unseen_families": "trajectories/test_task.jsonl",
               "grounding": "grounding/test_seed.jsonl"}


def heldout_data(root: Path, seed: int, per_task: int, grounding: int) -> Path:
    """Held-out splits of data seed ``seed`` (generated once; the same arguments give the same files)."""
    from guirl.envs.sim import generate_dataset

    path = root / f"sim-seed{seed}-t{per_task}-g{grounding}"
    if not (path / "manifest.json").is_file():
        generate_dataset(out_dir=str(path), seed=seed, grounding_train=1, grounding_test=grounding, train_per_task=1,
                         test_per_task=per_task, recovery_prob=0.0)
    return path


def training_states(root: Path, per_task: int = 4) -> Path:
    """Training-split episodes of data seed 0 (the seed the base agents trained on)."""
    from guirl.envs.sim import generate_dataset

    path = root / f"sim-seed0-train{per_task}"
    if not (path / "manifest.json").is_file():
        generate_dataset(out_dir=str(path), seed=0, grounding_train=1, grounding_test=1, train_per_task=per_task,
                         test_per_task=1, recovery_prob=0.0)
    return path


def load_steps(path: Path) -> list:
    from guirl.data import read_episodes

    return [(ep, st, path.parent) for ep in read_episodes(path) for st in ep.steps if st.valid_actions]


def paired(before: list[int], after: list[int]) -> dict[str, float]:
    """Mean per-step difference ``after - before`` and its 95% normal interval (the same steps in both), rounded
    for the tables (``guirl.eval.stats.paired_difference``).

    >>> paired([0, 0, 1, 1], [1, 1, 1, 1])
    {'diff': 0.5, 'low': -0.066, 'high': 1.066, 'n': 4}
    """
    from guirl.eval.stats import paired_difference

    p = paired_difference(before, after)
    return {"diff": round(p["diff"], 4), "low": round(p["low"], 3), "high": round(p["high"], 3), "n": p["n"]}


def evaluate(model: str, data: Path, train_data: Path | None, episodes: int, pass_at: int,
             max_new_tokens: int = 96) -> dict:
    """Every measure of the table for one model."""
    from guirl.eval.steps import evaluate_steps
    from guirl.models.load import load_policy
    from guirl.rollout.hf_engine import HFEngine

    policy = load_policy(model)
    engine = HFEngine.from_policy(policy)
    spec = policy.prompt
    out: dict = {"prompt": {"history_window": spec.history_window, "history_text": spec.history_text,
                            "reasoning": spec.reasoning}, "per_step": {}}
    start = time.perf_counter()
    for name, rel in STEP_SPLITS.items():
        steps = load_steps(data / rel)
        predictions: list = []
        scores = evaluate_steps(engine, spec, policy.frame_for, steps, max_new_tokens, predictions)
        ok = [int(m.success) for _, m, _ in predictions]
        out[name] = {"step_success": round(scores["eval/step_success"], 4), "n": len(ok),
                     "parse_rate": round(scores["eval/parse_rate"], 4)}
        out["per_step"][name] = ok
        if name == "trained_families":
            typed = [o for (_, st, _), o in zip(steps, ok, strict=True) if st.valid_actions[0].type.value == "type"]
            out["type_steps"] = {"step_success": round(sum(typed) / max(1, len(typed)), 4), "n": len(typed)}
            out["per_step"]["type_steps"] = typed
            out["unchanged_output"] = unchanged_outputs(  # the output's action; its thought is not compared
                [(ep.id, st.index, st.valid_actions[0], text) for (ep, st, _), (_, _, text) in
                 zip(steps, predictions, strict=True)])
    out["steps_eval_s"] = round(time.perf_counter() - start, 1)
    if episodes:
        out["episode_success"] = episode_success(policy, engine, data, episodes, max_new_tokens)
    if pass_at and train_data is not None:
        out["pass_at_k"] = room_for_rl(policy, engine, load_steps(train_data / "trajectories" / "train.jsonl"), pass_at,
                                       max_new_tokens)
    return out


def live_seed(data_seed: int) -> int:
    """The first episode seed of the live episodes played with held-out data of ``data_seed``: 70,000 for the
    held-out seed 7, and 1,000 apart for each other seed, so validation data (5, 6) plays other episodes than
    the held-out ones (never a training seed: those are below 1,000).

    >>> live_seed(7), live_seed(5), live_seed(6)
    (70000, 68000, 69000)
    """
    return 70_000 + 1_000 * (data_seed - 7)


def episode_success(policy, engine, data: Path, episodes: int, max_new_tokens: int, guidance: str | None = None) -> dict:
    """Greedy live episodes of the trained families, every live episode's step in one batched engine call
    (``guidance``: this text in every prompt's privileged block, ComputerSD's prompt-only baseline)."""
    from guirl.envs.base import make_env
    from guirl.rollout.engine import SamplingParams
    from guirl.rollout.online import EnvSlots, episode_progress, run_online
    from guirl.rollout.runner import EpisodeSpec

    manifest = json.loads((data / "manifest.json").read_text())
    families = manifest["splits"]["train"]
    first = live_seed(manifest["config"]["seed"])
    specs = [EpisodeSpec(task=f, seed=first + k) for f in families for k in range(max(1, episodes // len(families)))]
    envs = EnvSlots(lambda: make_env("sim", preset=manifest["config"]["preset"]))
    start = time.perf_counter()
    try:
        trajs, _ = run_online(engine, policy, envs, specs, SamplingParams(n=1, temperature=0.0,
                              max_new_tokens=max_new_tokens, seed=0), max_steps=16, guidance=guidance)
    finally:
        envs.close()
    per_family: dict[str, int] = {}
    for spec, tr in zip(specs, trajs, strict=True):
        per_family[spec.task] = per_family.get(spec.task, 0) + int(bool(tr.success))
    wins = sum(per_family.values())
    progress = [episode_progress(tr) for tr in trajs]
    return {"success": round(wins / len(specs), 4), "n": len(specs), "per_family": per_family,
            "per_episode": [int(bool(tr.success)) for tr in trajs], "progress": round(sum(progress) / len(specs), 4),
            "per_episode_progress": progress, "wall_s": round(time.perf_counter() - start, 1)}


def room_for_rl(policy, engine, steps: list, k: int, max_new_tokens: int, states: int = 200,
                temperature: float = 1.0, greedy: float | None = None, per_state: bool = False) -> dict:
    """Greedy success and pass@k (k samples at ``temperature``) on ``states`` training states, with the share
    of states whose k samples are neither all right nor all wrong (``informative``: a GRPO group of them has a
    non-zero advantage under a 0/1 reward) and the mean success of a sample. ``greedy``: a known greedy score
    of the same states (not recomputed). ``per_state``: also each state's share of right samples, in the order
    of the states drawn (the same for every model), so two models can be paired state by state."""
    from guirl.eval.steps import evaluate_steps
    from guirl.rewards import columns_for, make_reward, reward_columns
    from guirl.rollout.engine import SamplingParams
    from guirl.rollout.history import recorded_prompt

    steps = random.Random(0).sample(steps, min(states, len(steps)))
    if greedy is None:
        greedy = evaluate_steps(engine, policy.prompt, policy.frame_for, steps, max_new_tokens)["eval/step_success"]
    prompts = [recorded_prompt(policy.prompt, policy.frame_for, ep, st, root) for ep, st, root in steps]
    outputs = engine.generate([p for p, _ in prompts], SamplingParams(n=k, temperature=temperature,
                                                                      max_new_tokens=max_new_tokens, seed=1))
    columns = columns_for([reward_columns(st, ep, policy.frame_for(*image.size))
                           for (ep, st, _), (_, image) in zip(steps, prompts, strict=True)], k)
    scores = make_reward("step_match", fmt=policy.prompt.fmt).score([c.text for g in outputs for c in g], **columns).scores
    hits = [scores[i * k:(i + 1) * k] for i in range(len(steps))]
    pass_k = sum(any(h) for h in hits) / len(hits)
    informative = sum(0 < sum(map(bool, h)) < k for h in hits) / len(hits)
    sample = sum(sum(map(bool, h)) for h in hits) / (k * len(hits))
    return {"k": k, "temperature": temperature, "greedy": round(greedy, 4), "pass_at_k": round(pass_k, 4),
            "room": round(pass_k - greedy, 4), "informative": round(informative, 4), "sample_success": round(sample, 4),
            "n": len(hits)} | ({"per_state": [sum(map(bool, h)) / k for h in hits]} if per_state else {})


def training_summary(record: dict) -> dict:
    """Command, steps, wall time and peak RSS from a checkpoint's training_record.json; a run trained over several
    processes (``processes``: one entry per process) counts every process's wall time and the largest peak.

    >>> training_summary({"command": "c", "steps": 9, "wall_time_s": 5.0, "peak_rss_mb": 3.0,
    ...                   "processes": [{"wall_time_s": 10.0, "peak_rss_mb": 2.0}, {"wall_time_s": 5.0, "peak_rss_mb": 3.0}]})
    {'command': 'c', 'steps': 9, 'wall_time_s': 15.0, 'peak_rss_mb': 3.0, 'processes': 2}
    """
    out = {k: record.get(k) for k in ("command", "steps", "wall_time_s", "peak_rss_mb")}
    if record.get("processes"):
        out["wall_time_s"] = sum(p["wall_time_s"] for p in record["processes"])
        out["peak_rss_mb"] = max(p["peak_rss_mb"] for p in record["processes"])
        out["processes"] = len(record["processes"])
    return out


def write_result(path: str | Path, result: dict) -> None:
    """A benchmark's table as JSON under ``results/`` (what scripts/render_results.py reads)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(result, indent=1) + "\n")


def commit() -> str:
    """The checkout's commit (``GUIRL_COMMIT`` when run from a snapshot copy of a commit)."""
    import os

    if os.environ.get("GUIRL_COMMIT"):
        return os.environ["GUIRL_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


ROWS = (("multi-step steps, trained families", lambda r: r["trained_families"]["step_success"]),
        ("multi-step steps, unseen families", lambda r: r["unseen_families"]["step_success"]),
        ("grounding screens", lambda r: r["grounding"]["step_success"]),
        ("TYPE steps (trained families)", lambda r: r["type_steps"]["step_success"]),
        ("sim episode success, trained families", lambda r: r["episode_success"]["success"]),
        ("right action changes, output does not", lambda r: r["unchanged_output"]["same_output"]),
        ("pass@k minus greedy, training states", lambda r: r["pass_at_k"]["room"]))


def table(result: dict) -> str:
    models = list(result["models"])
    lines = [f"{'measure':42s} " + " ".join(f"{Path(m).name:>24s}" for m in models)]
    for label, get in ROWS:
        cells = []
        for m in models:
            try:
                cells.append(f"{get(result['models'][m]):24.3f}")
            except KeyError:
                cells.append(f"{'-':>24s}")
        lines.append(f"{label:42s} " + " ".join(cells))
    counts = result["models"][models[0]]
    lines.append(f"(n: {counts['trained_families']['n']} / {counts['unseen_families']['n']} / "
                 f"{counts['grounding']['n']} / {counts['type_steps']['n']} steps)")
    for m, diffs in result.get("paired", {}).items():
        lines.append(f"paired {Path(m).name} - {Path(models[0]).name}: " + "; ".join(
            f"{k} {d['diff']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]" for k, d in diffs.items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=["checkpoints/base-agent-history-tiny", "checkpoints/base-agent-tiny"])
    parser.add_argument("--seed", type=int, default=7, help="data seed (7 held out; 5, 6 validation)")
    parser.add_argument("--per-task", type=int, default=24, help="episodes per task family in each test split")
    parser.add_argument("--grounding", type=int, default=100, help="grounding screens per domain")
    parser.add_argument("--episodes", type=int, default=105, help="live sim episodes over the trained families (0: off)")
    parser.add_argument("--pass-at", type=int, default=8, help="k of pass@k on training states (0: off)")
    parser.add_argument("--data", default="runs/bench-base-agent", help="where data is generated")
    parser.add_argument("--out", default="results/base_agent.json", help="JSON result ('' to skip)")
    args = parser.parse_args(argv)
    torch.set_num_threads(2)
    data = heldout_data(Path(args.data), args.seed, args.per_task, args.grounding)
    train_data = training_states(Path(args.data)) if args.pass_at else None
    result: dict = {"command": " ".join(["python", "benchmarks/base_agent.py", *(argv if argv is not None else sys.argv[1:])]),
                    "commit": commit(), "data_seed": args.seed, "per_task": args.per_task, "models": {}}
    start = time.perf_counter()
    for model in args.models:
        result["models"][model] = evaluate(model, data, train_data, args.episodes, args.pass_at)
        record = Path(model) / "training_record.json"
        if record.is_file():
            info = json.loads(record.read_text())
            result["models"][model]["training"] = training_summary(info)
    first = result["models"][args.models[0]]
    result["paired"] = {m: {k: paired(first["per_step"][k], r["per_step"][k]) for k in STEP_SPLITS}
                        for m, r in result["models"].items() if m != args.models[0]}
    result["wall_s"] = round(time.perf_counter() - start, 1)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(table(result))
    print(f"evaluation: {result['wall_s']:.0f} s wall, peak RSS {result['peak_rss_mb']:.0f} MB")
    if args.out:
        write_result(args.out, result)
    return result


if __name__ == "__main__":
    main()
