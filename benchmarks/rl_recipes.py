"""Held-out success of the RL recipes against their starting point, paired step by step.

    python benchmarks/rl_recipes.py [--recipes guilibra_kl_grpo_sngs_tiny infigui_rloo_tiny]
                                    [--seeds 0 1 2] [--eval-seed 7] [--per-task 24] [--samples 0]
                                    [--base checkpoints/base-agent-history-tiny] [--out runs/bench-rl]
                                    [--results results/rl_recipes.json] [key=value ...]

For every recipe and training seed it runs ``guirl train <method> --config recipes/<recipe>.yaml`` (the method
its first line names: ``grpo``, ``semi_online``; as a subprocess: its wall time and peak RSS are its own) on
built-in-world states of data seed 3, then evaluates the final model greedily (batched engine, prompted as the
model was trained: its history window and thought) on held-out data of ``--eval-seed`` (7, never trained or
tuned on; 5 or 6 to choose settings on validation data): multi-step steps of trained task families
(``steps_unseen_seeds``, also split into ``multi_solution`` steps, several valid actions, and
``single_solution`` steps, one: LiteGUI's splits), of unseen families (``steps_unseen_tasks``), grounding
screens, error-recovery steps (``recovery``, also split into InfiGUI-R1's ``error_escape`` and ``back_on_track``
steps) and whole-episode success when the agent plays sim tasks of the trained families (with
``episode_progress``, the share of its task's milestones each episode reached: a finer online score). The base
model meets the same steps, so every run has a paired difference per split (mean per-step difference and its 95% interval).

Prints, per recipe and split, the base score, mean and standard deviation over seeds after training, the
difference, each seed's paired interval and the mean wall time, and says whether the recipe passes the
bar on trained-family multi-step steps: a gain above twice the spread over seeds with every seed's paired
interval above 0. Resumable: finished (recipe, seed) runs are read back from ``--out/results.json``; an
interrupted training run resumes from its last checkpoint. Extra ``key=value`` arguments override every recipe
(e.g. ``max_steps=100``), for ablations: ``--tag`` names such a variant in the results. ``--results`` writes
the table (command, commit, seeds; no per-step vectors) as JSON for docs/results.md.

``--start`` trains from another model than ``--base`` (``{seed}`` in it becomes the training seed: a pipeline's
second stage from each seed's first-stage model). The rows stay paired against ``--base``; each start is also
scored (once, into ``results.json``'s ``starts``) and every split gets an ``own_start`` row: the gain over each
seed's own start, paired step by step, with the same bar.

``--add-episodes`` trains nothing: it plays ``--episodes`` live episodes per trained family with the base model and
with every finished run of ``--recipes`` (and ``--tag``) and ``--seeds`` in ``--out`` that lacks them (the same
episodes for each, so the ``episode_success`` row pairs episode by episode), and makes that the directory's
episode count (``--episodes`` of later calls on it).

``--add-splits SPLIT ...`` trains nothing: it scores the base model, every finished run of ``--recipes`` (and
``--tag``) and ``--seeds`` in ``--out`` and their scored starts on step splits they lack (e.g. ``own_recovery``, once
its data is written), so a split made after the runs still pairs every model on the same steps.

``--prompt-only`` trains nothing: the base model plays the same live episodes with ComputerSD's fixed pre-written
guidance in every prompt (the paper's prompt-only baseline), stored as the row ``prompt_only``.

``--trainer trl`` trains the same recipe with TRL's GRPOTrainer instead (``benchmarks/rl_trl.py``: same model,
prompts, states in the same order, reward, G, sampling, learning rate, steps; plain GRPO only); its rows are named
``trl:<recipe>``, and when both trainers' runs of a recipe are in ``--out`` the gains are printed side by side.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

SPLITS = {"steps_unseen_seeds": "trajectories/test_seed.jsonl", "steps_unseen_tasks": "trajectories/test_task.jsonl",
          "grounding": "grounding/test_seed.jsonl",
          # error-escape and back-on-track steps built from data seed 7's episodes (InfiGUI-R1's scenarios)
          "recovery": "trajectories/recovery.jsonl",
          # error-escape and back-on-track steps at the start's own mistakes on data seed 7's episodes (made by
          # `guirl datagen error-recovery --model <start> --out <eval data>/own_recovery`; scored when present)
          "own_recovery": "own_recovery/episodes.jsonl"}
# Parts of a split scored apart, each a filter of its steps (the per-step vectors keep the split's order):
# LiteGUI's steps with several valid actions and with one; InfiGUI-R1's two recovery scenarios.
SUBSPLITS = {"steps_unseen_seeds": {"multi_solution": lambda step: len(step.valid_actions) >= 2,
                                    "single_solution": lambda step: len(step.valid_actions) < 2},
             **{split: {f"{prefix}{label}": (lambda step, label=label: step.label == label)
                        for label in ("error_escape", "back_on_track")}
                for split, prefix in (("recovery", ""), ("own_recovery", "own_"))}}


def ensure_data(out: Path, seed: int, per_task: int | None = None) -> Path:
    """Data of ``seed`` under ``out`` (generated once); ``per_task`` held-out episodes per trained family
    (the default volume when None)."""
    from guirl.envs.sim import generate_dataset

    path = out / (f"sim-seed{seed}" + (f"-t{per_task}" if per_task else ""))
    if not (path / "manifest.json").is_file():
        generate_dataset(out_dir=str(path), seed=seed, **({"test_per_task": per_task} if per_task else {}))
    return path


def scored_steps(path: Path, samples: int = 0, seed: int = 0) -> list:
    """The ``(episode, step, root)`` steps of ``path`` that :func:`evaluate_model` scores, in its order (``samples``
    of them, 0: all, drawn with ``seed``): per-step vectors of two models index the same steps."""
    from guirl.trainers.rl_common import load_states

    held = [(s.episode, s.step, s.root) for s in load_states([str(path)]) if s.step.valid_actions]
    return random.Random(seed).sample(held, min(samples or len(held), len(held)))


def evaluate_model(model_dir: Path, data: Path, samples: int, episodes: int, seed: int = 0,
                   splits: list[str] | None = None, guidance: str | None = None, max_new_tokens: int = 96) -> dict:
    """Greedy held-out step success per split (batched), and sim episode success (``splits``: only those).
    ``samples`` steps per split (0: all); ``scores["per_step"][split]`` holds each step's 0/1 outcome, in an
    order fixed by the data and ``seed``, so two models' vectors pair step by step. ``guidance``: this text in
    every live episode's prompts (ComputerSD's prompt-only baseline); ``max_new_tokens``: each answer's room (96
    fits a sub-goal thought and an action; a reasoner such as InfiGUI-R1's after reasoning injection needs more)."""
    from base_agent import episode_success  # benchmarks/ (rl_action_types imports this module)

    from guirl.eval.steps import evaluate_steps
    from guirl.models.load import load_policy
    from guirl.rollout.hf_engine import HFEngine

    policy = load_policy(model_dir)
    engine = HFEngine.from_policy(policy)
    scores: dict = {"per_step": {}}
    for name, rel in SPLITS.items():
        if (splits is not None and name not in splits) or not (data / rel).is_file():
            continue
        held = scored_steps(data / rel, samples, seed)
        predictions: list = []
        scores[name] = evaluate_steps(engine, policy.prompt, policy.frame_for, held, max_new_tokens,
                                       predictions)["eval/step_success"]
        scores["per_step"][name] = [int(m.success) for _, m, _ in predictions]
        for sub, keep in SUBSPLITS.get(name, {}).items():
            vector = [ok for (_, step, _), ok in zip(held, scores["per_step"][name], strict=True) if keep(step)]
            scores[sub], scores["per_step"][sub] = sum(vector) / max(len(vector), 1), vector
    families = json.loads((data / "manifest.json").read_text())["splits"]["train"]
    if episodes and (splits is None or "episode_success" in splits):
        live = episode_success(policy, engine, data, episodes * len(families), max_new_tokens, guidance)
        scores["episode_success"], scores["episode_progress"] = live["success"], live["progress"]
        scores["per_step"]["episode_success"] = live["per_episode"]
        scores["per_step"]["episode_progress"] = live["per_episode_progress"]
    return scores


def train(recipe: str, seed: int, out: Path, data: Path, overrides: list[str], trainer: str = "guirl") -> dict:
    """Train ``recipe`` with guirl (``guirl train <method>``) or TRL's GRPOTrainer (``benchmarks/rl_trl.py``)."""
    prefix = "trl-" if trainer == "trl" else ""
    run = out / f"{prefix}{recipe}{'-' + overrides_tag(overrides) if overrides else ''}-seed{seed}"
    config = ["--config", str(ROOT / "recipes" / f"{recipe}.yaml")]
    command = ([str(ROOT / "benchmarks" / "rl_trl.py"), *config] if trainer == "trl"
               else ["-m", "guirl", "train", recipe_method(recipe), *config])
    data_overrides = [] if any(o.startswith("train_data=") for o in overrides) else _data_overrides(recipe, data)
    for path in data_overrides[0][len("train_data=["):-1].split(",") if data_overrides else []:
        if not Path(path).is_file():
            refuse(f"recipes/{recipe}.yaml: its training data {path} does not exist; build it first (the recipe's "
                   "header says how) or pass train_data=[...]")
    cmd = [sys.executable, *command, f"output_dir={run}", f"seed={seed}", "report_to=[]", *data_overrides, *overrides]
    wall, peak_mb, cpu = run_measured(cmd)
    return {"run": str(run), "wall_s": wall, "peak_rss_mb": peak_mb, "cpu_s": cpu}


# Starts the command from a small process: on Linux a child's peak RSS (ru_maxrss) starts at the peak of the
# process it was forked from, so a run started straight from this benchmark (after it generated data and
# evaluated the base agent in-process, about 2 GB) would report at least that much.
_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(f"{usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}")
sys.exit(os.waitstatus_to_exitcode(status) % 256)
"""


def run_measured(cmd: list[str]) -> tuple[float, float, float]:
    """Run ``cmd`` (from the repository root) to its end: its wall seconds, its own peak RSS in MiB and the CPU
    seconds it used (user + system). CPU over wall is how many cores the run kept busy: a 2-thread run alone on
    2 cores is near 2; one that shared them with another job is lower, and its wall time measures the sharing.

    The peak is the run's own: not the largest of every child this process has waited for
    (``RUSAGE_CHILDREN``), and not this process's own peak, which a child forked from it inherits.

    >>> wall, peak, cpu = run_measured([sys.executable, "-c", "b = bytearray(300 * 2**20); b[::4096] = b'x' * len(b[::4096])"])
    >>> peak > 300, run_measured([sys.executable, "-c", "pass"])[1] < 200
    (True, True)
    """
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        usage = Path(tmp) / "maxrss"
        start = time.perf_counter()
        code = subprocess.run([sys.executable, "-c", _LAUNCHER, str(usage), *cmd], cwd=ROOT).returncode
        wall = time.perf_counter() - start
        if code:
            raise subprocess.CalledProcessError(code, cmd)
        peak, cpu = usage.read_text().split()
        return wall, int(peak) / 1024, float(cpu)


def recipe_method(recipe: str) -> str:
    """The trainer a recipe names in its first line (``# guirl train <method> --config ...``)."""
    import re

    found = re.search(r"guirl train (\w+)", (ROOT / "recipes" / f"{recipe}.yaml").read_text())
    return found.group(1) if found else "grpo"


def overrides_tag(overrides: list[str]) -> str:
    """A directory-name-safe tag of the overrides (a YAML value such as ``rewards=[{...}]`` loses its punctuation);
    an override cut to 24 characters gets a hash of its whole text, so two that differ only further on (two
    ``train_data`` lists) name different runs.

    >>> overrides_tag(["max_steps=800", "train_data=[a/b.jsonl,c.jsonl]"]) != overrides_tag(["max_steps=800", "train_data=[a/b.jsonl]"])
    True
    """
    import hashlib

    parts = []
    for o in overrides:
        safe = re.sub(r"[^A-Za-z0-9_-]", "", o.replace("=", "").replace(".", "").replace("/", ""))
        parts.append(safe if len(safe) <= 24 else f"{safe[:24]}-{hashlib.sha1(o.encode()).hexdigest()[:8]}")
    return "_".join(parts)


def _data_overrides(recipe: str, data: Path) -> list[str]:
    import yaml

    cfg = yaml.safe_load((ROOT / "recipes" / f"{recipe}.yaml").read_text())
    if "train_data" not in cfg:  # an online recipe (computersd) plays its own episodes
        return []
    paths = [str(data / Path(p).relative_to(Path(p).parents[1])) for p in cfg["train_data"]]
    return [f"train_data=[{','.join(paths)}]"]


def _portable(path: str) -> str:
    """A checkout-independent name of a model directory: relative to the repository when it lies in one
    (``checkpoints/base-agent-tiny``, whichever copy of the tree ran), else the path as given."""
    p = Path(path).resolve()
    for root in (ROOT, *ROOT.parents):
        if (root / "checkpoints").is_dir() and p.is_relative_to(root / "checkpoints"):
            return str(p.relative_to(root))
    return str(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--recipes", nargs="+", default=["guilibra_kl_grpo_sngs_tiny", "infigui_rloo_tiny"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--out", default="runs/bench-rl")
    parser.add_argument("--eval-seed", type=int, default=7, help="held-out data seed (7; 5 or 6 to choose settings)")
    parser.add_argument("--per-task", type=int, default=24,
                        help="held-out episodes per trained family (24 gives over 1,000 multi-step steps)")
    parser.add_argument("--samples", type=int, default=0, help="held-out steps per split (0: every step)")
    parser.add_argument("--episodes", type=int, default=8, help="live sim episodes per trained task family")
    parser.add_argument("--tag", default="", help="name of this variant in the results (with overrides)")
    parser.add_argument("--base", default=str(ROOT / "checkpoints" / "base-agent-history-tiny"),
                        help="starting model the recipes train from (model=...) and the reference row")
    parser.add_argument("--start", default=None,
                        help="train from this model instead of --base ('{seed}' becomes the training seed: a pipeline's "
                             "second stage from each seed's first-stage model), still paired against --base")
    parser.add_argument("--splits", nargs="+", default=None,
                        help="evaluate on these splits only (default: all); a base evaluated earlier in --out keeps its splits")
    parser.add_argument("--trainer", choices=["guirl", "trl"], default="guirl",
                        help="train with guirl, or with TRL's GRPOTrainer on the same recipe (benchmarks/rl_trl.py)")
    parser.add_argument("--results", default=None, help="write the table as JSON here (e.g. results/rl_recipes.json)")
    parser.add_argument("--title", default=None, help="the table's heading in docs/results.md (with --results)")
    parser.add_argument("--add-episodes", action="store_true",
                        help="train nothing: add --episodes live episodes per family to the base and the finished runs")
    parser.add_argument("--add-splits", nargs="+", default=None, metavar="SPLIT",
                        help="train nothing: score the base, the finished runs and their starts on these step splits too")
    parser.add_argument("--prompt-only", action="store_true",
                        help="train nothing: play --base's live episodes with ComputerSD's fixed guidance in every "
                             "prompt (the paper's prompt-only baseline), stored as prompt_only")
    parser.add_argument("--max-new-tokens", type=int, default=96,
                        help="each evaluated answer's room in tokens (96; about 320 for a model trained to reason first)")
    parser.add_argument("overrides", nargs="*", help="key=value applied to every recipe")
    args = parser.parse_args()
    missing = [r for r in args.recipes if not (ROOT / "recipes" / f"{r}.yaml").is_file()]
    if missing:
        parser.error(f"--recipes: no recipes/{missing[0]}.yaml; choose from "
                     f"{', '.join(sorted(p.stem for p in (ROOT / 'recipes').glob('*.yaml')))}")
    for flag, model in (("--base", args.base), ("--start", args.start)):
        if model and "{seed}" not in model and not (Path(model) / "config.json").is_file():
            parser.error(f"{flag} {model}: not a model directory (no config.json); give a trained model")
    if args.max_new_tokens <= 0:
        parser.error(f"--max-new-tokens {args.max_new_tokens}: give a positive number of tokens")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.json"
    results = json.loads(results_path.read_text()) if results_path.is_file() else {}
    train_data, eval_data = ensure_data(out, 3), ensure_data(out, args.eval_seed, args.per_task)
    setting = {"base_model": _portable(args.base), "eval_seed": args.eval_seed, "per_task": args.per_task,
               "samples": args.samples, "episodes": args.episodes}
    if args.max_new_tokens != 96:  # recorded only when not the default, so earlier directories keep their setting
        setting["max_new_tokens"] = args.max_new_tokens
    tokens = args.max_new_tokens
    names = [("trl:" if args.trainer == "trl" else "") + r + (f"[{args.tag}]" if args.tag else "") for r in args.recipes]
    scoring_only = args.add_episodes or args.add_splits or args.prompt_only
    if args.prompt_only:
        prompt_only(results, results_path, eval_data, args.episodes, args.base, tokens)
    elif scoring_only:
        if "base" in results and _without_episodes(results["setting"]) != _without_episodes(setting):
            parser.error(f"--out: {results_path} holds results of {results.get('setting')}; "
                         f"use another --out for {setting}")
        keys = [f"{n}/seed{s}" for n in names for s in args.seeds]
        if args.add_splits:
            add_splits(results, results_path, keys, eval_data, args.add_splits, args.base, tokens)
        if args.add_episodes:
            add_episodes(results, results_path, keys, eval_data, args.episodes, args.base, tokens)
    elif "base" not in results:
        results["base"] = evaluate_model(Path(args.base), eval_data, args.samples, args.episodes, splits=args.splits,
                                         max_new_tokens=tokens)
        results["setting"] = setting
        results_path.write_text(json.dumps(results, indent=1))
    elif results.get("setting") != setting:
        parser.error(f"--out: {results_path} holds results of {results.get('setting')}; "
                     f"use another --out for {setting}")
    for recipe, name in [] if scoring_only else zip(args.recipes, names, strict=True):
        for seed in args.seeds:
            key = f"{name}/seed{seed}"
            if key in results:
                continue
            start = (args.start or args.base).replace("{seed}", str(seed))
            if args.start and _portable(start) not in results.setdefault("starts", {}):  # paired against it too
                results["starts"][_portable(start)] = evaluate_model(Path(start), eval_data, args.samples,
                                                                     args.episodes, splits=args.splits,
                                                                     max_new_tokens=tokens)
                results_path.write_text(json.dumps(results, indent=1))
            info = train(recipe, seed, out, train_data, [*args.overrides, f"model={start}"], args.trainer)
            info["start"] = _portable(start)
            info["scores"] = evaluate_model(Path(info["run"]) / "final", eval_data, args.samples, args.episodes,
                                            splits=args.splits, max_new_tokens=tokens)
            results[key] = info
            results_path.write_text(json.dumps(results, indent=1))
            print(key, json.dumps({k: v for k, v in info["scores"].items() if k != "per_step"}), flush=True)
    summary = summarise(results)
    print_table(summary)
    if args.results:
        from base_agent import commit

        summary |= {"command": " ".join(["python", "benchmarks/rl_recipes.py", *sys.argv[1:]]), "commit": commit(),
                    "train_data_seed": 3, "setting": results["setting"]} | ({"title": args.title} if args.title else {})
        Path(args.results).parent.mkdir(parents=True, exist_ok=True)
        Path(args.results).write_text(json.dumps(summary, indent=1))


def refuse(message: str) -> None:
    """Bad input: one line naming it, exit 2 (argparse's convention), no traceback."""
    print(f"rl_recipes: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def _without_episodes(setting: dict) -> dict:
    return {k: v for k, v in setting.items() if k != "episodes"}


def prompt_only(results: dict, path: Path, data: Path, episodes: int, base: str, tokens: int = 96) -> None:
    """ComputerSD's prompt-only baseline: ``base`` plays the same live episodes as its evaluation in ``results`` with
    the fixed pre-written guidance in every prompt, stored as the run ``prompt_only/seed0`` (greedy, no training:
    every seed would play the same). Refuses, with one line, a directory whose base played no live episodes, or
    another model or count."""
    from guirl.trainers.computersd import FIXED_GUIDANCE

    if "base" not in results or "episode_success" not in results["base"]:
        refuse(f"{path} has no live evaluation of the base; run the benchmark with --episodes first")
    if results["setting"]["base_model"] != _portable(base) or results["setting"].get("episodes") != episodes:
        refuse(f"{path} holds {results['setting']['base_model']} on {results['setting'].get('episodes')} episodes "
               f"per family; pass that --base and --episodes")
    if results["setting"].get("max_new_tokens", 96) != tokens:
        refuse(f"{path} was evaluated with --max-new-tokens {results['setting'].get('max_new_tokens', 96)}; pass that")
    if "prompt_only/seed0" in results:
        return
    t0 = time.perf_counter()
    scores = evaluate_model(Path(base), data, 0, episodes, splits=["episode_success"], guidance=FIXED_GUIDANCE,
                            max_new_tokens=tokens)
    results["prompt_only/seed0"] = {"run": "(no training)", "wall_s": time.perf_counter() - t0, "peak_rss_mb":
                                    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "scores": scores,
                                    "guidance": FIXED_GUIDANCE}
    path.write_text(json.dumps(results, indent=1))
    print("prompt_only", scores["episode_success"], scores["episode_progress"], flush=True)


def add_episodes(results: dict, path: Path, keys: list[str], data: Path, episodes: int, base: str,
                 tokens: int = 96) -> None:
    """Score the base model and the runs ``keys`` of ``results`` (those present, lacking live episodes) on
    ``episodes`` live episodes per trained family of ``data``, merged into their scores and saved to ``path`` after
    each model; the directory's episode count becomes ``episodes``. Refuses, with one line, a directory whose base
    already played another count, since its episodes would not pair with the new ones."""
    if "base" not in results:
        refuse(f"{path} has no base evaluation; run the benchmark without --add-episodes first")
    played = results["setting"].get("episodes", 0)
    if "episode_success" in results["base"] and played != episodes:
        refuse(f"{path} already holds {played} live episodes per family; use --episodes {played}")
    if episodes <= 0:
        refuse("--add-episodes needs --episodes 1 or more")
    for scores, model in scored_models(results, keys, base):
        if "episode_success" in scores:
            continue
        live = evaluate_model(Path(model), data, 0, episodes, splits=["episode_success"], max_new_tokens=tokens)
        for split in ("episode_success", "episode_progress"):
            scores[split], scores["per_step"][split] = live[split], live["per_step"][split]
        results["setting"]["episodes"] = episodes
        path.write_text(json.dumps(results, indent=1))
        print(model, "episode_success", live["episode_success"], flush=True)


def add_splits(results: dict, path: Path, keys: list[str], data: Path, splits: list[str], base: str,
               tokens: int = 96) -> None:
    """Score the base model, the runs ``keys`` of ``results`` (those present) and their scored starts on the
    step ``splits`` they lack (with their sub-splits), merged into their scores and saved to ``path`` after each
    model: a split added later (such as ``own_recovery``) pairs every model on the same steps."""
    if "base" not in results:
        refuse(f"{path} has no base evaluation; run the benchmark without --add-splits first")
    for split in splits:
        if split not in SPLITS or split in ("episode_success", "episode_progress"):
            refuse(f"--add-splits {split}: not a step split; choose from {', '.join(SPLITS)}")
        if not (data / SPLITS[split]).is_file():
            refuse(f"--add-splits {split}: {data / SPLITS[split]} does not exist; write it first (see SPLITS)")
    for scores, model in scored_models(results, keys, base):
        todo = [s for s in splits if s not in scores]
        if not todo:
            continue
        new = evaluate_model(Path(model), data, results["setting"].get("samples", 0), 0, splits=todo,
                             max_new_tokens=tokens)
        scores["per_step"].update(new.pop("per_step"))
        scores.update(new)
        path.write_text(json.dumps(results, indent=1))
        print(model, json.dumps(new), flush=True)


def scored_models(results: dict, keys: list[str], base: str) -> list[tuple[dict, str]]:
    """(scores, model directory) of the base, the runs ``keys`` present in ``results`` and their scored starts."""
    models = [(results["base"], base)] + [(results[k]["scores"], str(Path(results[k]["run"]) / "final"))
                                          for k in keys if k in results]
    starts = {results[k].get("start") for k in keys if k in results} & set(results.get("starts", {}))
    return models + [(results["starts"][s], s) for s in sorted(starts)]


def verdict(gain: float, spread: float, lows: list[float]) -> bool:
    """The bar a recipe must clear: a mean gain above twice the spread over seeds, every seed's paired
    95% interval above 0.

    >>> verdict(0.05, 0.01, [0.01, 0.02, 0.005]), verdict(0.05, 0.03, [0.01, 0.02, 0.005]), verdict(0.05, 0.0, [0.0])
    (True, False, False)
    """
    return gain > 2 * spread and all(low > 0 for low in lows)


def summarise(results: dict) -> dict:
    """Per recipe and split: base, per-seed scores and paired intervals, mean, spread, gain, wall time, RSS."""
    from base_agent import paired
    base = results["base"]
    table: dict = {}
    names = sorted({k.split("/")[0] for k in results if k not in ("base", "setting", "base_model", "starts")})
    for name in names:
        runs = {k.split("/")[1]: v for k, v in results.items() if k.split("/")[0] == name}
        rows = {}
        for split in (s for s in base if s != "per_step"):
            seeds = {seed: r for seed, r in runs.items() if split in r["scores"]}
            if not seeds:
                continue
            values = [r["scores"][split] for r in seeds.values()]
            mean = statistics.mean(values)
            spread = statistics.stdev(values) if len(values) > 1 else 0.0
            pairs = {seed: paired(base["per_step"][split], r["scores"]["per_step"][split])
                     for seed, r in seeds.items() if split in r["scores"].get("per_step", {})}
            rows[split] = {"base": round(base[split], 4), "mean": round(mean, 4), "spread": round(spread, 4),
                           "gain": round(mean - base[split], 4), "per_seed": {k: round(v, 4) for k, v in
                                                                              zip(seeds, values, strict=True)},
                           "paired": pairs, "n": len(base["per_step"].get(split, [])),
                           "passes": verdict(mean - base[split], spread, [p["low"] for p in pairs.values()])
                           if len(values) > 1 else None}
            own = own_start(seeds, results.get("starts", {}), split)
            if own:
                rows[split]["own_start"] = own
        table[name] = {"splits": rows, "seeds": len(runs),
                       "wall_min": round(statistics.mean(r["wall_s"] for r in runs.values()) / 60, 2),
                       "peak_rss_gb": round(max(r["peak_rss_mb"] for r in runs.values()) / 1024, 2)}
        # cores each seed's training kept busy (CPU over wall; runs measured since 2026-12-06): below the run's
        # threads, it shared the machine and its wall time is not its own
        busy = {seed: round(r["cpu_s"] / r["wall_s"], 2) for seed, r in runs.items() if "cpu_s" in r}
        if busy:
            table[name]["cores_busy"] = busy
    return {"base_model": results.get("setting", {}).get("base_model"), "recipes": table, "versus_trl": versus_trl(table)}


def own_start(runs: dict, starts: dict, split: str) -> dict | None:
    """The gain of ``runs`` (seed -> run) over each seed's own start (``--start`` with ``{seed}``: a pipeline's
    second stage over its first-stage model), paired step by step: the start's mean, the mean of the per-seed
    gains, their spread, each seed's paired interval and the bar. None unless every run's start was scored on
    ``split``.

    >>> s = lambda v: {"scores": {"x": sum(v) / len(v), "per_step": {"x": v}}}
    >>> runs = {"seed0": s([1, 1, 1, 0]) | {"start": "a"}, "seed1": s([1, 1, 0, 0]) | {"start": "b"}}
    >>> starts = {"a": s([1, 0, 0, 0])["scores"], "b": s([0, 0, 0, 0])["scores"]}
    >>> own = own_start(runs, starts, "x"); own["start"], own["gain"], own["spread"], own["passes"]
    (0.125, 0.5, 0.0, False)
    """
    from base_agent import paired

    scored = {seed: starts.get(r.get("start"), {}) for seed, r in runs.items()}
    if not runs or any(split not in st.get("per_step", {}) or split not in r["scores"].get("per_step", {})
                       for st, r in zip(scored.values(), runs.values(), strict=True)):
        return None
    gains = [r["scores"][split] - scored[seed][split] for seed, r in runs.items()]
    pairs = {seed: paired(scored[seed]["per_step"][split], r["scores"]["per_step"][split]) for seed, r in runs.items()}
    gain, spread = statistics.mean(gains), statistics.stdev(gains) if len(gains) > 1 else 0.0
    return {"start": round(statistics.mean(st[split] for st in scored.values()), 4), "gain": round(gain, 4),
            "spread": round(spread, 4), "paired": pairs,
            "passes": verdict(gain, spread, [p["low"] for p in pairs.values()]) if len(gains) > 1 else None}


def versus_trl(table: dict, split: str = "steps_unseen_seeds") -> dict:
    """guirl's gain beside TRL's on the same recipe (``X`` and ``trl:X``): the issue's bar is that guirl's gain
    is not below TRL's by more than the two spreads.

    >>> row = lambda gain, spread: {"splits": {"steps_unseen_seeds": {"gain": gain, "spread": spread}}, "wall_min": 1}
    >>> versus_trl({"r": row(0.02, 0.01), "trl:r": row(0.05, 0.01)})["r"]["passes"]
    False
    >>> versus_trl({"r": row(0.04, 0.01), "trl:r": row(0.05, 0.01)})["r"]["passes"]
    True
    """
    out = {}
    for name, row in table.items():
        other = table.get(f"trl:{name}")
        if name.startswith("trl:") or other is None or split not in row["splits"] or split not in other["splits"]:
            continue
        mine, theirs = row["splits"][split], other["splits"][split]
        out[name] = {"split": split, "guirl_gain": mine["gain"], "guirl_spread": mine["spread"],
                     "trl_gain": theirs["gain"], "trl_spread": theirs["spread"],
                     "guirl_wall_min": row["wall_min"], "trl_wall_min": other["wall_min"],
                     "passes": mine["gain"] >= theirs["gain"] - (mine["spread"] + theirs["spread"])}
    return out


def print_table(summary: dict) -> None:
    print(f"\nheld-out success from {summary['base_model']}: mean +- spread over seeds, each seed's paired 95% interval")
    print(f"{'recipe':<40} {'split':<20} {'n':>5} {'base':>6} {'after':>15} {'gain':>7} {'wall min':>8} {'RSS GB':>6}"
          "  paired per seed  bar")
    for name, row in summary["recipes"].items():
        for split, r in row["splits"].items():
            pairs = " ".join(f"{p['diff']:+.3f}[{p['low']:+.3f},{p['high']:+.3f}]" for p in r["paired"].values())
            bar = {True: "pass", False: "miss", None: "-"}[r["passes"]]
            print(f"{name:<40} {split:<20} {r['n']:>5} {r['base']:>6.3f} {r['mean']:>8.3f} +-{r['spread']:.3f} "
                  f"{r['gain']:>+7.3f} {row['wall_min']:>8.1f} {row['peak_rss_gb']:>6.2f}  {pairs}  {bar}")
    for name, v in summary.get("versus_trl", {}).items():
        print(f"\nguirl vs TRL's GRPOTrainer on {name} ({v['split']}): gain {v['guirl_gain']:+.3f} +- "
              f"{v['guirl_spread']:.3f} vs {v['trl_gain']:+.3f} +- {v['trl_spread']:.3f}; wall min "
              f"{v['guirl_wall_min']:.1f} vs {v['trl_wall_min']:.1f}; "
              f"{'not below TRL by more than the two spreads' if v['passes'] else 'below TRL by more than the two spreads'}")


if __name__ == "__main__":
    main()
