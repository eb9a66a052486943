"""LiteGUI's whole pipeline on the built-in world, end to end on CPU, from the history-reading agent (docs/methods.md section 1).

    python benchmarks/litegui_pipeline.py --root runs/litegui-pipeline [--seeds 0 1 2] [--results results/litegui_pipeline.json]
    python benchmarks/litegui_pipeline.py --root runs/litegui-pipeline --report      # the table only

The starting agent (``--model``, default ``checkpoints/base-agent-history-tiny``: it reads its last 3 actions,
writes a sub-goal thought then its action, types, and writes the finish action itself) is also ATG's proposer and
exploration's sampler (up to 96 new tokens a step: thought and action). Tasks (``--tasks``): the seven multi-step
families it was trained on, desktop.change_settings, desktop.open_file, desktop.save_document, web.search_open,
web.shopping, mobile.add_contact, mobile.toggle_setting (their episodes take 5 to 13 steps).

Stages (each prints the ``guirl`` command it runs; a finished stage is skipped, so rerunning resumes; ROOT/setting.json
keeps the arguments a root was run with, and a rerun with other ones is refused):

1. ``atg``: ``guirl datagen atg`` with the base agent as proposer and the ground-truth verifier
   (3 votes, commit on 2 Yes, up to 3 retries) on the tasks, world seeds 9000000 + i, 16 steps at most
   (``--atg-max-steps``). Retries resample without the rejected proposals in the prompt (``--no-feedback``;
   ``--feedback`` for the paper's form): the tiny agent never saw such text and 70% of its retries with it
   stop parsing (docs/atg.md).
2. ``pool``: the successful ATG episodes; a task with fewer than ``--pool-per-task`` of them is
   topped up with the world oracle's expert episodes (world seeds 9100000 + i), each marked
   ``extra.pool_source`` = ``atg`` or ``oracle_seed`` (the share ATG fills alone is in the results). The
   oracle's full valid-action sets are then *hidden*: every step keeps only the action it executed as
   ``valid_actions``; the sets go to ``pool/oracle_valid_actions.jsonl``, for the simulated annotator only.
3. ``explore``: ``guirl datagen explore --no-oracle`` re-infers every step 5 times (temperature 1.0)
   and de-duplicates the candidates.
4. ``verify``: the verification web app (``guirl datagen verify``) is started on loopback and an
   oracle-simulated annotator marks every candidate through its HTTP API (True iff the candidate
   matches one of the hidden valid actions); the app's export writes ``explore/verified.jsonl``, the
   pool with the verified positives as A*_t. Printed: how much of the oracle's A*_t that recovers.
5. ``train`` per seed: ``sft`` (the recorded actions of the verified pool, the OPD budget), ``opd``
   (guided OPD, Most-Matched-GT against the verified A*_t, ``recipes/litegui_opd_tiny.yaml``, the
   shipped guidance-reading teacher) and ``opd_mdgrpo`` (that OPD checkpoint, then
   ``recipes/litegui_mdgrpo_tiny.yaml`` on the same pool). Each run is launched through
   ``rl_recipes.run_measured``: its wall seconds go to ROOT/timings.json, its own peak RSS to ROOT/peak_rss.json.
6. ``eval``: Lite-Bench-style live evaluation (``guirl eval live``, ground-truth judge, 16-step cap:
   ``--eval-max-steps``) on held-out world seeds 9500000 + i of the same tasks, ``--eval-episodes`` (15) per
   task: 105 episodes over the seven families. The base agent and every trained run play the same seeds.

The environment is the built-in world with the ``coarse`` preset in every stage (ATG, the oracle's pool episodes,
evaluation). An episode ends on the agent's finish action (success iff the goal is reached then) or at the step
cap, as ``benchmarks/rl_recipes.py``'s live evaluation plays them; ``--auto-terminate`` restores the older form
for agents that never write finish: an episode that reaches its goal ends with success at once.

Results (printed, and written by ``--results`` as JSON for docs/results.md). An episode's outcome is the
*environment's* success (``episodes.jsonl`` under each ``guirl eval live --out``), not the judge's verdict; every
model's outcomes are read in one order of (task, world seed), so the base agent's and each run's pair episode by
episode. ``episode_progress``: the share of its task's milestones an episode reached at best (1.0 on success;
the ``progress`` / ``milestones`` the world reports at every step). The table is ``rl_recipes.summarise``'s: per
condition and split, the base score, the mean and spread over seeds, the gain, each seed's paired 95% interval,
the bar (a gain above twice the spread, every seed's interval above 0), the mean training wall minutes per run
(``opd_mdgrpo``: its OPD stage plus MD-GRPO) and the largest peak RSS. The JSON adds the command, commit, setting
and ``pool``: episodes per task from ATG and from oracle seeding, the share of the pool ATG fills without oracle
seeding (overall and per task), ATG's own metrics and the verification summary (recall of the oracle's other
solutions).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from rl_recipes import _portable, print_table, run_measured, summarise  # noqa: E402

TASKS = ("desktop.change_settings", "desktop.open_file", "desktop.save_document", "web.search_open", "web.shopping",
         "mobile.add_contact", "mobile.toggle_setting")
PRESET = "coarse"
MAX_NEW_TOKENS = 96  # a thought and an action (a TYPE step with its sub-goal runs past ATG's and exploration's 80)
ATG_SEED, ORACLE_SEED, EVAL_SEED = 9_000_000, 9_100_000, 9_500_000
CONDITIONS = ("sft", "opd", "opd_mdgrpo")
ORACLE_FILE = "oracle_valid_actions.jsonl"
TITLE = "LiteGUI end to end from the history-reading agent"
#: the arguments that change what a root holds (ROOT/setting.json); --seeds and --conditions may grow
SETTING = ("model", "tasks", "auto_terminate", "atg_episodes", "atg_max_steps", "feedback", "pool_per_task",
           "opd_steps", "grpo_steps", "eval_episodes", "eval_max_steps")


class PipelineError(ValueError):
    """Arguments that do not fit the root (or each other): one line, exit 2."""


def env_kwargs(args: argparse.Namespace) -> dict:
    """The built-in world's arguments, the same in every stage."""
    return {"preset": PRESET, "auto_terminate": args.auto_terminate}


def env_options(args: argparse.Namespace) -> list[str]:
    return [part for key, value in env_kwargs(args).items() for part in ("--env-arg", f"{key}={json.dumps(value)}")]


def guirl(args: list[str], log: Path | None = None) -> None:
    """Run one ``guirl`` command (printed first), from the repository root; its output goes to ``log``."""
    print("$ guirl " + " ".join(args), flush=True)
    if log is None:
        subprocess.run([sys.executable, "-m", "guirl", *args], check=True, cwd=ROOT)
        return
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        done = subprocess.run([sys.executable, "-m", "guirl", *args], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode:
        raise SystemExit(f"`guirl {args[0]} {args[1]}` failed (exit {done.returncode}); see {log}")


def guirl_measured(args: list[str], log: Path) -> float:
    """Run one ``guirl`` command like :func:`guirl`, through ``rl_recipes.run_measured``: its own peak RSS in MiB.
    The shell only redirects the output to ``log`` and ``exec``s the command, so the process measured is guirl's."""
    print("$ guirl " + " ".join(args), flush=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    shell = ["sh", "-c", 'log=$1; shift; exec "$@" >"$log" 2>&1', "sh", str(log), sys.executable, "-m", "guirl", *args]
    try:
        return run_measured(shell)[1]
    except subprocess.CalledProcessError as err:
        raise SystemExit(f"`guirl {args[0]} {args[1]}` failed (exit {err.returncode}); see {log}") from None


def _read(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def _write(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)


class Timings:
    """Wall seconds of every stage (ROOT/timings.json) and the peak RSS in MiB of every training run
    (ROOT/peak_rss.json), kept across resumed runs."""

    def __init__(self, root: Path):
        self.path, self.rss_path = root / "timings.json", root / "peak_rss.json"
        self.values, self.peak_rss_mb = _read(self.path), _read(self.rss_path)

    def run(self, name: str, done: Path, fn) -> None:
        """Run ``fn`` unless ``done`` exists; a number it returns is the run's peak RSS in MiB."""
        if done.exists():
            return
        start = time.perf_counter()
        peak = fn()
        self.values[name] = round(time.perf_counter() - start, 1)
        _write(self.path, self.values)
        if peak is not None:
            self.peak_rss_mb[name] = round(peak, 1)
            _write(self.rss_path, self.peak_rss_mb)


def stage_atg(args: argparse.Namespace) -> None:
    cmd = ["datagen", "atg", "--env", "sim", "--tasks", ",".join(args.tasks),
           "--episodes-per-task", str(args.atg_episodes), "--model", args.model,
           "--max-episode-steps", str(args.atg_max_steps), "--max-new-tokens", str(MAX_NEW_TOKENS),
           "--world-seed", str(ATG_SEED), "--out", str(args.root / "atg"), "--overwrite", *env_options(args)]
    if not args.feedback:
        cmd.append("--no-feedback")
    guirl(cmd, args.root / "logs" / "atg.log")


def stage_pool(args: argparse.Namespace) -> None:
    from guirl.data.io import read_episodes, write_episodes
    from guirl.datagen.verify_app.export import rebase_images
    from guirl.envs.sim.env import SimEnv
    from guirl.envs.sim.generation import ImageStore, expert_episode

    pool_dir = args.root / "pool"
    atg = read_episodes(args.root / "atg" / "episodes.jsonl", check_images=False)
    rebase_images(atg, args.root / "atg", pool_dir)
    episodes = []
    for task in args.tasks:
        mine = [e for e in atg if e.task == task][: args.pool_per_task]
        for e in mine:
            e.extra["pool_source"] = "atg"
        images = ImageStore(pool_dir)
        env = SimEnv(**env_kwargs(args))
        i = 0
        while len(mine) < args.pool_per_task:
            seed = ORACLE_SEED + 1000 * args.tasks.index(task) + i
            episode, _ = expert_episode(env, seed, task, f"oracle-{task}-{seed}", images)
            episode.extra["pool_source"] = "oracle_seed"
            mine.append(episode)
            i += 1
        env.close()
        episodes += mine
    hidden = []
    for e in episodes:  # the annotator's key; the data keeps only what was executed
        for step in e.steps:
            hidden.append({"episode_id": e.id, "step_index": step.index,
                           "valid_actions": [a.model_dump(mode="json", exclude_none=True) for a in step.valid_actions]})
            step.valid_actions = [step.action] if step.action is not None else []
    (pool_dir / ORACLE_FILE).write_text("".join(json.dumps(h) + "\n" for h in hidden))
    write_episodes(pool_dir / "episodes.jsonl", episodes)
    counts = {t: {s: sum(1 for e in episodes if e.task == t and e.extra["pool_source"] == s)
                  for s in ("atg", "oracle_seed")} for t in args.tasks}
    summary = {"episodes": len(episodes), "steps": len(hidden), "per_task": counts}
    (pool_dir / "pool.json").write_text(json.dumps(summary, indent=1))
    print(f"pool: {summary}")


def stage_explore(args: argparse.Namespace) -> None:
    guirl(["datagen", "explore", "--episodes", str(args.root / "pool" / "episodes.jsonl"), "--model", args.model,
           "--out", str(args.root / "explore"), "--no-oracle", "--samples", "5", "--temperature", "1.0",
           "--max-new-tokens", str(MAX_NEW_TOKENS), "--seed", "0", "--overwrite"], args.root / "logs" / "explore.log")


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())


def hidden_valid_actions(args: argparse.Namespace) -> dict:
    """(episode id, step index) -> the oracle's valid actions the pool stage hid."""
    from guirl.actions import Action

    rows = map(json.loads, (args.root / "pool" / ORACLE_FILE).read_text().splitlines())
    return {(r["episode_id"], r["step_index"]): [Action.model_validate(a) for a in r["valid_actions"]] for r in rows}


def oracle_labels(args: argparse.Namespace) -> dict[str, bool]:
    """The simulated annotator's mark of every candidate: True iff it matches a hidden valid action."""
    from guirl.data.io import read_episodes
    from guirl.datagen.verify_app.loader import load_project
    from guirl.matching.step import match_action

    hidden = hidden_valid_actions(args)
    a11y = {(e.id, s.index): s.a11y for e in read_episodes(args.root / "pool" / "episodes.jsonl", check_images=False)
            for s in e.steps}
    project = load_project(args.root / "explore")
    labels = {}
    for step in project.steps:
        key = (step.episode_id, step.step_index)
        for c in step.candidates:
            labels[c.id] = match_action(c.action, hidden[key], screen_size=step.screen_size, a11y=a11y[key]).success
    return labels


def stage_verify(args: argparse.Namespace) -> None:
    """Start the web app, mark every candidate over HTTP as the simulated annotator, export through the app."""
    labels = oracle_labels(args)
    log = (args.root / "logs" / "verify.log").open("w")
    cmd = [sys.executable, "-m", "guirl", "datagen", "verify", "--data", str(args.root / "explore"), "--port", "0"]
    print("$ guirl " + " ".join(cmd[3:]), flush=True)
    server = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        url = None
        for line in server.stdout:
            if line.startswith("serving "):
                url = line.split()[1]
                break
        if url is None:
            raise SystemExit(f"the verification app did not start; see {args.root / 'logs' / 'verify.log'}")
        start = time.perf_counter()
        for cid, label in labels.items():
            _post(url + "api/mark", {"candidate_id": cid, "label": label, "annotator": "oracle-sim"})
        marking = time.perf_counter() - start
        result = _post(url + "api/export", {"name": "verified.jsonl", "overwrite": True})
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
    result["marks"], result["marking_s"] = len(labels), round(marking, 1)
    result.update(astar_recovery(args))
    (args.root / "explore" / "verify_summary.json").write_text(json.dumps(result, indent=1))
    print(f"verify: {result}")


def astar_recovery(args: argparse.Namespace) -> dict:
    """How much of the oracle's A*_t the verified pool holds beyond the executed action (multi-solution steps)."""
    from guirl.data.io import read_episodes
    from guirl.matching.step import match_action

    verified = {(e.id, s.index): s for e in read_episodes(args.root / "explore" / "verified.jsonl",
                                                           check_images=False) for s in e.steps}
    multi = hidden = found = sizes = 0
    for key, oracle in hidden_valid_actions(args).items():
        step = verified[key]
        sizes += len(step.valid_actions)
        size = (step.screenshot.width, step.screenshot.height)
        others = [a for a in oracle  # the oracle's other solutions: those the executed action does not match
                  if step.action is None or not match_action(step.action, [a], screen_size=size, a11y=step.a11y).success]
        if not others:
            continue
        multi += 1
        hidden += len(others)
        found += sum(any(match_action(v, [o], screen_size=size, a11y=step.a11y).success for v in step.valid_actions)
                     for o in others)
    return {"steps": len(verified), "astar_mean_size_after": round(sizes / max(len(verified), 1), 3),
            "multi_solution_steps": multi, "hidden_other_solutions": hidden, "recovered_other_solutions": found,
            "recall_other_solutions": round(found / max(hidden, 1), 3)}


def stage_train(args: argparse.Namespace, condition: str, seed: int) -> float:
    """Train one run (``opd_mdgrpo``: its MD-GRPO stage, from the ``opd`` run of the same seed); its peak RSS in MiB."""
    import yaml

    data = f"train_data=[{args.root / 'explore' / 'verified.jsonl'}]"
    run = args.root / "runs" / f"{condition}-seed{seed}"
    common = [f"seed={seed}", "report_to=[]", data, f"output_dir={run}", f"save_every={args.opd_steps}"]
    log = args.root / "logs" / f"{condition}-seed{seed}.log"
    opd = yaml.safe_load((ROOT / "recipes" / "litegui_opd_tiny.yaml").read_text())
    if condition == "sft":  # the OPD stage's states and budget, on the recorded actions
        return guirl_measured(["train", "sft", "--config", "recipes/litegui_teacher_history_tiny.yaml",
                               "guidance_fraction=0", f"batch_size={opd['batch_size'] * opd['samples_per_state']}",
                               f"max_steps={args.opd_steps}", f"optim.lr={opd['optim']['lr']}", "optim.warmup_ratio=0",
                               "optim.schedule=constant", "model=" + args.model, *common], log)
    if condition == "opd":
        return guirl_measured(["train", "opd", "--config", "recipes/litegui_opd_tiny.yaml", "guidance=most_matched",
                               f"max_steps={args.opd_steps}", "model=" + args.model, *common], log)
    if condition == "opd_mdgrpo":
        stage1 = args.root / "runs" / f"opd-seed{seed}" / "final"
        if not (stage1 / "config.json").is_file():
            raise SystemExit(f"opd_mdgrpo starts from {stage1}, which is not trained yet")
        return guirl_measured(["train", "grpo", "--config", "recipes/litegui_mdgrpo_tiny.yaml", f"model={stage1}",
                               f"max_steps={args.grpo_steps}", *common[:-1], f"save_every={args.grpo_steps}"], log)
    raise ValueError(condition)


def stage_eval(args: argparse.Namespace, name: str, model: str) -> None:
    guirl(["eval", "live", "--env", "sim", "--tasks", ",".join(args.tasks), "--episodes-per-task",
           str(args.eval_episodes), "--model", model, "--judge", "ground_truth", "--max-episode-steps",
           str(args.eval_max_steps), "--seed", str(EVAL_SEED), "--out", str(args.root / "eval" / name), "--overwrite",
           *env_options(args)], args.root / "logs" / f"eval-{name}.log")


def eval_keys(tasks: list[str], episodes: int) -> list[tuple[str, int]]:
    """(task, world seed) of every held-out live episode (``guirl eval live --seed S`` plays S + i of every task),
    in the order every model's outcome vector follows."""
    return [(task, EVAL_SEED + i) for task in tasks for i in range(episodes)]


def played_episodes(eval_dir: Path, keys: list[tuple[str, int]]) -> list[dict]:
    """The episodes of ``eval_dir/episodes.jsonl`` in the order of ``keys`` (task, world seed); an evaluation that
    lacks one is refused, not paired with what it has."""
    played = {}
    for line in (eval_dir / "episodes.jsonl").read_text().splitlines():
        episode = json.loads(line)
        played[(episode["task"], episode["extra"]["seed"])] = episode
    missing = [k for k in keys if k not in played]
    if missing:
        raise PipelineError(f"{eval_dir} holds no episode of {missing[0][0]} at world seed {missing[0][1]} "
                            f"({len(missing)} of {len(keys)} missing): it was played with other --tasks or "
                            "--eval-episodes; delete it to play it again")
    return [played[k] for k in keys]


def episode_scores(eval_dir: Path, keys: list[tuple[str, int]]) -> dict:
    """One model's live scores in ``rl_recipes``' form: ``episode_success`` (the environment's verdict) and, where
    the episodes record the world's milestones, ``episode_progress``; ``per_step`` holds each episode's value in
    the order of ``keys``, read from ``eval_dir/episodes.jsonl`` by (task, world seed)."""
    from guirl.rollout.online import episode_progress

    episodes = played_episodes(eval_dir, keys)
    success = [int(bool(e["success"])) for e in episodes]
    scores = {"episode_success": sum(success) / len(success), "per_step": {"episode_success": success}}
    if any("milestones" in s.get("extra", {}) for e in episodes for s in e["steps"]):
        progress = [episode_progress(SimpleNamespace(success=e["success"], steps=[
            SimpleNamespace(info=s.get("extra", {})) for s in e["steps"]])) for e in episodes]
        scores["episode_progress"] = sum(progress) / len(progress)
        scores["per_step"]["episode_progress"] = progress
    return scores


def finished_runs(root: Path) -> list[tuple[str, int]]:
    """(condition, seed) of every run whose evaluation finished, in CONDITIONS order then by seed."""
    runs = []
    for path in (root / "eval").glob("*-seed*/summary.json"):
        condition, _, seed = path.parent.name.rpartition("-seed")
        if condition in CONDITIONS and seed.isdigit():
            runs.append((condition, int(seed)))
    return sorted(runs, key=lambda r: (CONDITIONS.index(r[0]), r[1]))


def collect(root: Path, tasks: list[str], episodes: int, base_model: str) -> dict:
    """What the stages wrote, in the form ``rl_recipes.summarise`` reads: ``base`` and ``<condition>/seed<s>``
    scores (paired by (task, world seed)), each run's training wall seconds and peak RSS in MiB (``opd_mdgrpo``:
    its OPD stage and its MD-GRPO stage, walls summed, the larger peak)."""
    keys = eval_keys(tasks, episodes)
    walls, peaks = _read(root / "timings.json"), _read(root / "peak_rss.json")
    results = {"setting": {"base_model": _portable(base_model)}, "base": episode_scores(root / "eval" / "base", keys)}
    for condition, seed in finished_runs(root):
        stages = [f"train-{c}-seed{seed}" for c in (("opd", condition) if condition == "opd_mdgrpo" else (condition,))]
        results[f"{condition}/seed{seed}"] = {
            "run": str(root / "runs" / f"{condition}-seed{seed}"), "wall_s": sum(walls.get(s, 0.0) for s in stages),
            "peak_rss_mb": max(peaks.get(s, 0.0) for s in stages),  # 0: a run trained before peaks were recorded
            "scores": episode_scores(root / "eval" / f"{condition}-seed{seed}", keys)}
    return results


def pool_summary(root: Path) -> dict:
    """Where the pool came from (per task: ATG episodes, oracle-seeded ones, the share ATG fills without oracle
    seeding), ATG's own metrics, and the verification summary (``recall_other_solutions``: the share of the
    oracle's other valid actions the verified A*_t recovers)."""
    pool = _read(root / "pool" / "pool.json")
    per_task = {task: {**c, "atg_share": round(c["atg"] / max(c["atg"] + c["oracle_seed"], 1), 4)}
                for task, c in pool.get("per_task", {}).items()}
    atg, total = sum(c["atg"] for c in per_task.values()), sum(c["atg"] + c["oracle_seed"] for c in per_task.values())
    verification = {k: v for k, v in _read(root / "explore" / "verify_summary.json").items() if k != "path"}
    return {"episodes": pool.get("episodes"), "steps": pool.get("steps"), "atg": atg, "oracle_seed": total - atg,
            "atg_share": round(atg / total, 4) if total else None, "per_task": per_task,
            "atg_metrics": _read(root / "atg" / "atg_manifest.json").get("metrics", {}), "verification": verification}


def pool_line(pool: dict) -> str:
    """One sentence on the pool and the verification."""
    if not pool.get("episodes"):
        return "pool: not built yet"
    shares = ", ".join(f"{t} {c['atg']}/{c['atg'] + c['oracle_seed']}" for t, c in pool["per_task"].items())
    line = (f"pool: {pool['episodes']} episodes, {pool['atg']} from ATG and {pool['oracle_seed']} oracle-seeded: ATG "
            f"fills {pool['atg_share']:.3f} of it without oracle seeding (per task {shares})")
    v = pool.get("verification") or {}
    if "recall_other_solutions" in v:
        line += (f"; verification recovers {v['recovered_other_solutions']} of the oracle's {v['hidden_other_solutions']} "
                 f"other solutions on {v['multi_solution_steps']} multi-solution steps (recall "
                 f"{v['recall_other_solutions']:.3f})")
    return line


def ending(episode: dict) -> str:
    """How a live episode ended: ``success``; ``finished_early`` (the agent's finish action before the goal);
    ``step_cap``; ``other`` (the world ended it after another action).

    >>> ending({"success": False, "failure_reason": "x", "steps": [{"action": {"type": "terminate"}}]})
    'finished_early'
    >>> ending({"success": False, "failure_reason": "step limit reached (16 steps)", "steps": [{"action": None}]})
    'step_cap'
    """
    if episode["success"]:
        return "success"
    last = (episode["steps"] or [{}])[-1].get("action") or {}
    if last.get("type") == "terminate":
        return "finished_early"
    return "step_cap" if (episode.get("failure_reason") or "").startswith("step limit") else "other"


ENDINGS = ("success", "finished_early", "step_cap", "other")


def endings_summary(root: Path, tasks: list[str], episodes: int) -> dict:
    """Per model (``base``, then each condition's mean over its seeds): how its live episodes ended
    (:func:`ending`, counts), and for the runs the episodes each seed won and lost against the base (means)."""
    keys = eval_keys(tasks, episodes)
    base = played_episodes(root / "eval" / "base", keys)
    out = {"base": {"episodes": len(base), **{e: sum(ending(x) == e for x in base) for e in ENDINGS}}}
    runs: dict[str, list[dict]] = {}
    for condition, seed in finished_runs(root):
        runs.setdefault(condition, []).append(played_episodes(root / "eval" / f"{condition}-seed{seed}", keys))
    for condition, seeds in runs.items():
        def mean(f, seeds=seeds) -> float:
            return round(statistics.mean(f(r) for r in seeds), 2)

        out[condition] = {"episodes": len(base), "seeds": len(seeds),
                          **{e: mean(lambda r, e=e: sum(ending(x) == e for x in r)) for e in ENDINGS},
                          "won": mean(lambda r: sum(x["success"] and not b["success"] for x, b in zip(r, base))),
                          "lost": mean(lambda r: sum(b["success"] and not x["success"] for x, b in zip(r, base)))}
    return out


def results_summary(root: Path, tasks: list[str], episodes: int, base_model: str) -> dict | None:
    """The results table (``rl_recipes.summarise``'s shape) plus ``pool``; None before the base agent's evaluation."""
    if not (root / "eval" / "base" / "summary.json").is_file():
        return None
    return summarise(collect(root, tasks, episodes, base_model)) | {"pool": pool_summary(root),
                                                                    "endings": endings_summary(root, tasks, episodes)}


def per_task_lines(root: Path, tasks: list[str], episodes: int) -> list[str]:
    """Live success per task: the base agent's and each condition's mean over its seeds."""
    keys = eval_keys(tasks, episodes)
    models = {"base": [root / "eval" / "base"]}
    for condition, seed in finished_runs(root):
        models.setdefault(condition, []).append(root / "eval" / f"{condition}-seed{seed}")
    lines = [f"{'task':<26}" + "".join(f"{m:>12}" for m in models)]
    rates = {m: [episode_scores(d, keys)["per_step"]["episode_success"] for d in dirs] for m, dirs in models.items()}
    for task in tasks:
        picks = [i for i, k in enumerate(keys) if k[0] == task]
        lines.append(f"{task:<26}" + "".join(
            f"{statistics.mean(sum(v[i] for i in picks) / len(picks) for v in vectors):>12.3f}"
            for vectors in rates.values()))
    return lines


def report(args: argparse.Namespace) -> dict | None:
    for name in ("atg/atg_manifest.json", "pool/pool.json", "explore/verify_summary.json"):
        data = _read(args.root / name)
        if data:
            print(f"{name}: {json.dumps(data.get('metrics', data))}")
    result = results_summary(args.root, args.tasks, args.eval_episodes, args.model)
    if result is None:
        print("no live evaluation of the base agent yet")
        return None
    print(f"\nlive episodes: {args.eval_episodes} per task, world seeds {EVAL_SEED}+i, the environment's success "
          f"({'auto_terminate' if args.auto_terminate else 'ended by the agent'})")
    print_table(result)
    print("\nlive success per task (mean over seeds)\n" + "\n".join(per_task_lines(args.root, args.tasks,
                                                                                  args.eval_episodes)))
    print("\nhow live episodes end (runs: mean over seeds; won / lost: against the base agent, episode by episode)")
    for name, e in result["endings"].items():
        print(f"{name:<12} " + "  ".join(f"{k} {e[k]}" for k in (*ENDINGS, "won", "lost") if k in e))
    print("\n" + pool_line(result["pool"]))
    timings = _read(args.root / "timings.json")
    print(f"data stages, wall s: { {k: v for k, v in timings.items() if not k.startswith(('train-', 'eval-'))} }")
    return result


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    from guirl.envs.sim.env import available_tasks

    unknown = [t for t in args.tasks if t not in available_tasks()]
    if unknown:
        parser.error(f"--tasks: unknown task {unknown[0]!r}; choose from {', '.join(available_tasks())}")
    if len(set(args.tasks)) < len(args.tasks):
        parser.error(f"--tasks: a task is named twice in {' '.join(args.tasks)}")
    for name in ("atg_episodes", "atg_max_steps", "pool_per_task", "opd_steps", "grpo_steps", "eval_episodes",
                 "eval_max_steps"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be 1 or more, got {getattr(args, name)}")


def _option(name: str, value) -> str:
    """How ``value`` of argument ``name`` is typed on the command line.

    >>> _option("tasks", ["a", "b"]), _option("feedback", False), _option("eval_episodes", 15)
    ('--tasks a b', 'no --feedback', '--eval-episodes 15')
    """
    flag = "--" + name.replace("_", "-")
    if isinstance(value, bool):
        return flag if value else f"no {flag}"
    return f"{flag} {' '.join(value) if isinstance(value, list) else value}"


def check_setting(args: argparse.Namespace) -> None:
    """Refuse a root run with other arguments (its stages would be skipped and its episodes would not pair);
    record the setting of a new root."""
    setting = {k: getattr(args, k) for k in SETTING} | {"model": _portable(args.model)}
    path = args.root / "setting.json"
    if path.is_file():
        stored = json.loads(path.read_text())
        differ = [_option(k, stored[k]) for k in SETTING if k in stored and stored[k] != setting[k]]
        if differ:
            raise PipelineError(f"{args.root} was run with {', '.join(differ)}; pass the same or use another --root")
    elif (args.root / "timings.json").is_file():
        if not args.report:
            raise PipelineError(f"{args.root} was run by an older form of this script (no setting.json); "
                                "use another --root")
    elif not args.report and not args.rescore:
        args.root.mkdir(parents=True, exist_ok=True)
        _write(path, setting)


def run_stages(args: argparse.Namespace) -> None:
    timings = Timings(args.root)
    timings.run("atg", args.root / "atg" / "atg_manifest.json", lambda: stage_atg(args))
    timings.run("pool", args.root / "pool" / "pool.json", lambda: stage_pool(args))
    timings.run("explore", args.root / "explore" / "manifest.json", lambda: stage_explore(args))
    timings.run("verify", args.root / "explore" / "verify_summary.json", lambda: stage_verify(args))
    timings.run("eval-base", args.root / "eval" / "base" / "summary.json", lambda: stage_eval(args, "base", args.model))
    for seed in args.seeds:
        for condition in args.conditions:
            for stage in ("opd", condition) if condition == "opd_mdgrpo" else (condition,):  # MD-GRPO starts from OPD
                timings.run(f"train-{stage}-seed{seed}", args.root / "runs" / f"{stage}-seed{seed}" / "final" /
                            "config.json", lambda c=stage, s=seed: stage_train(args, c, s))
            name = f"{condition}-seed{seed}"
            timings.run(f"eval-{name}", args.root / "eval" / name / "summary.json",
                        lambda n=name: stage_eval(args, n, str(args.root / "runs" / n / "final")))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT / "runs" / "litegui-pipeline")
    parser.add_argument("--model", default="checkpoints/base-agent-history-tiny", help="the starting agent (and proposer)")
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), help="sim task families (default: the seven "
                        "multi-step families the history-reading agent was trained on)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--conditions", nargs="+", default=list(CONDITIONS), choices=CONDITIONS)
    parser.add_argument("--auto-terminate", action="store_true",
                        help="an episode that reaches its goal ends with success at once (default: on the agent's finish)")
    parser.add_argument("--atg-episodes", type=int, default=8, help="ATG episodes per task")
    parser.add_argument("--atg-max-steps", type=int, default=16, help="ATG step cap per episode")
    parser.add_argument("--feedback", action="store_true", help="ATG retries see the rejected proposals (paper)")
    parser.add_argument("--pool-per-task", type=int, default=8, help="episodes per task in the pool")
    parser.add_argument("--opd-steps", type=int, default=100)
    parser.add_argument("--grpo-steps", type=int, default=100)
    parser.add_argument("--eval-episodes", type=int, default=15, help="held-out live episodes per task")
    parser.add_argument("--eval-max-steps", type=int, default=16, help="live evaluation step cap per episode")
    parser.add_argument("--results", type=Path, default=None, help="write the table as JSON here "
                        "(e.g. results/litegui_pipeline.json, rendered into docs/results.md)")
    parser.add_argument("--report", action="store_true", help="print the table of what has finished, run nothing")
    parser.add_argument("--rescore", action="store_true", help="recompute the A*_t recovery of a finished verify stage")
    args = parser.parse_args(argv)
    check_arguments(parser, args)
    args.root = args.root.resolve()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        check_setting(args)
        if args.rescore:
            path = args.root / "explore" / "verify_summary.json"
            if not path.is_file():
                raise PipelineError(f"--rescore: {path} does not exist; the verify stage has not finished")
            _write(path, _read(path) | astar_recovery(args))
        if not args.report and not args.rescore:
            run_stages(args)
        result = report(args)
    except PipelineError as err:
        parser.error(str(err))
    if args.results:
        if result is None:
            parser.error(f"--results: {args.root} holds no live evaluation of the base agent yet; nothing to write")
        from base_agent import commit, write_result

        setting = {k: getattr(args, k) for k in SETTING} | {"model": _portable(args.model), "eval_world_seed": EVAL_SEED,
                                                             "outcome": "environment success", "judge": "ground_truth"}
        write_result(args.results, result | {
            "command": " ".join(["python", "benchmarks/litegui_pipeline.py", *(argv if argv is not None else sys.argv[1:])]),
            "commit": commit(), "title": TITLE, "setting": setting})


if __name__ == "__main__":
    main()
