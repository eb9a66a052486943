"""LiteGUI's whole pipeline on the built-in world, end to end on CPU (docs/methods.md section 1).

    python benchmarks/litegui_pipeline.py --root runs/litegui-pipeline [--seeds 0 1 2]
    python benchmarks/litegui_pipeline.py --root runs/litegui-pipeline --report      # the table only

Stages (each prints the ``guirl`` command it runs; a finished stage is skipped, so rerunning resumes):

1. ``atg``: ``guirl datagen atg`` with the tiny base agent as proposer and the ground-truth verifier
   (3 votes, commit on 2 Yes, up to 3 retries) on the tasks below, world seeds 9000000 + i. Retries
   resample without the rejected proposals in the prompt (``--no-feedback``; ``--feedback`` for the
   paper's form): the tiny agent never saw such text and 70% of its retries with it stop parsing
   (docs/atg.md).
2. ``pool``: the successful ATG episodes; a task with fewer than ``--pool-per-task`` of them is
   topped up with the world oracle's expert episodes (world seeds 9100000 + i), each marked
   ``extra.pool_source`` = ``atg`` or ``oracle_seed``. This is the documented oracle-seeded pool: the
   tiny proposer finishes almost no multi-step episode, so without it the pool holds only grounding
   steps. The oracle's full valid-action sets are then *hidden*: every step keeps only the action it
   executed as ``valid_actions``; the sets go to ``pool/oracle_valid_actions.jsonl``, for the simulated
   annotator only.
3. ``explore``: ``guirl datagen explore --no-oracle`` re-infers every step 5 times (temperature 1.0)
   and de-duplicates the candidates.
4. ``verify``: the verification web app (``guirl datagen verify``) is started on loopback and an
   oracle-simulated annotator marks every candidate through its HTTP API (True iff the candidate
   matches one of the hidden valid actions); the app's export writes ``explore/verified.jsonl``, the
   pool with the verified positives as A*_t. Printed: how much of the oracle's A*_t that recovers.
5. ``train`` per seed: ``sft`` (the recorded actions of the verified pool, the OPD budget), ``opd``
   (guided OPD, Most-Matched-GT against the verified A*_t, ``recipes/litegui_opd_tiny.yaml``, the
   shipped guidance-reading teacher) and ``opd_mdgrpo`` (that OPD checkpoint, then
   ``recipes/litegui_mdgrpo_tiny.yaml`` on the same pool).
6. ``eval``: Lite-Bench-style live evaluation (``guirl eval live``, 18-step cap, ground-truth judge)
   on held-out world seeds 9500000 + i of the same tasks, for the base agent and every trained run.

The environment is the built-in world with ``auto_terminate`` (an episode that reaches its goal ends
with success: the tiny agent rarely writes the finish action) and the ``coarse`` preset, in every stage.
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

ROOT = Path(__file__).resolve().parents[1]
TASKS = ("desktop.ground", "web.ground", "mobile.ground", "desktop.open_file", "web.search_open",
         "mobile.toggle_setting")
ENV_KWARGS = {"preset": "coarse", "auto_terminate": True}
ATG_SEED, ORACLE_SEED, EVAL_SEED = 9_000_000, 9_100_000, 9_500_000
CONDITIONS = ("sft", "opd", "opd_mdgrpo")
ORACLE_FILE = "oracle_valid_actions.jsonl"


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


class Timings:
    """Wall seconds of every stage, kept in ROOT/timings.json across resumed runs."""

    def __init__(self, root: Path):
        self.path = root / "timings.json"
        self.values = json.loads(self.path.read_text()) if self.path.is_file() else {}

    def run(self, name: str, done: Path, fn) -> None:
        if done.exists():
            return
        start = time.perf_counter()
        fn()
        self.values[name] = round(time.perf_counter() - start, 1)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.values, indent=1))
        os.replace(tmp, self.path)


def stage_atg(args: argparse.Namespace) -> None:
    cmd = ["datagen", "atg", "--env", "sim", "--tasks", ",".join(args.tasks),
           "--episodes-per-task", str(args.atg_episodes), "--model", args.model,
           "--max-episode-steps", str(args.atg_max_steps),
           "--world-seed", str(ATG_SEED), "--out", str(args.root / "atg"), "--overwrite"]
    for key, value in ENV_KWARGS.items():
        cmd += ["--env-arg", f"{key}={json.dumps(value)}"]
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
        env = SimEnv(preset=ENV_KWARGS["preset"])
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
           "--seed", "0", "--overwrite"], args.root / "logs" / "explore.log")


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


def stage_train(args: argparse.Namespace, condition: str, seed: int) -> None:
    import yaml

    data = f"train_data=[{args.root / 'explore' / 'verified.jsonl'}]"
    run = args.root / "runs" / f"{condition}-seed{seed}"
    common = [f"seed={seed}", "report_to=[]", data, f"output_dir={run}", f"save_every={args.opd_steps}"]
    log = args.root / "logs" / f"{condition}-seed{seed}.log"
    opd = yaml.safe_load((ROOT / "recipes" / "litegui_opd_tiny.yaml").read_text())
    if condition == "sft":  # the OPD stage's states and budget, on the recorded actions
        guirl(["train", "sft", "--config", "recipes/litegui_teacher_history_tiny.yaml", "guidance_fraction=0",
               f"batch_size={opd['batch_size'] * opd['samples_per_state']}", f"max_steps={args.opd_steps}",
               f"optim.lr={opd['optim']['lr']}", "optim.warmup_ratio=0", "optim.schedule=constant",
               "model=" + args.model, *common], log)
    elif condition == "opd":
        guirl(["train", "opd", "--config", "recipes/litegui_opd_tiny.yaml", "guidance=most_matched",
               f"max_steps={args.opd_steps}", "model=" + args.model, *common], log)
    elif condition == "opd_mdgrpo":
        stage1 = args.root / "runs" / f"opd-seed{seed}" / "final"
        if not (stage1 / "config.json").is_file():
            stage_train(args, "opd", seed)
        guirl(["train", "grpo", "--config", "recipes/litegui_mdgrpo_tiny.yaml", f"model={stage1}",
               f"max_steps={args.grpo_steps}", *common[:-1], f"save_every={args.grpo_steps}"], log)
    else:
        raise ValueError(condition)


def stage_eval(args: argparse.Namespace, name: str, model: str) -> None:
    cmd = ["eval", "live", "--env", "sim", "--tasks", ",".join(args.tasks), "--episodes-per-task",
           str(args.eval_episodes), "--model", model, "--judge", "ground_truth", "--max-episode-steps", "18",
           "--seed", str(EVAL_SEED),
           "--out", str(args.root / "eval" / name), "--overwrite"]
    for key, value in ENV_KWARGS.items():
        cmd += ["--env-arg", f"{key}={json.dumps(value)}"]
    guirl(cmd, args.root / "logs" / f"eval-{name}.log")


def success(root: Path, name: str, tasks: list[str]) -> float | None:
    path = root / "eval" / name / "summary.json"
    if not path.is_file():
        return None
    rows = {r["task"]: r for r in json.loads(path.read_text())["tasks"]}
    n = sum(rows[t]["episodes"] for t in tasks)
    return sum(rows[t]["successes"] for t in tasks) / n if n else None


def _cell(values: list[float], base: float | None) -> str:
    if not values:
        return "-"
    mean = statistics.mean(values)
    spread = f" +- {statistics.stdev(values):.3f}" if len(values) > 1 else ""
    diff = f" ({mean - base:+.3f})" if base is not None else ""
    return f"{mean:.3f}{spread}{diff}"


def report(args: argparse.Namespace) -> None:
    timings = json.loads((args.root / "timings.json").read_text()) if (args.root / "timings.json").is_file() else {}
    for name in ("pool/pool.json", "explore/verify_summary.json", "atg/atg_manifest.json"):
        path = args.root / name
        if path.is_file():
            data = json.loads(path.read_text())
            print(f"{name}: {json.dumps(data.get('metrics', data))}")
    ground = [t for t in args.tasks if t.endswith(".ground")]
    multi = [t for t in args.tasks if not t.endswith(".ground")]
    splits = (("grounding", ground), ("multi-step", multi), ("all", list(args.tasks)))
    print(f"\nheld-out live success (guirl eval live, {args.eval_episodes} episodes per task, world seeds {EVAL_SEED}+i; "
          "mean +- std over seeds, difference to the base agent)")
    print("| condition | seeds | " + " | ".join(s for s, _ in splits) + " | train wall min / run |")
    print("|---|---|" + "---|" * len(splits) + "---|")
    base = {s: success(args.root, "base", tasks) for s, tasks in splits}
    print("| base agent (no training) | - | " + " | ".join(_cell([base[s]], None) if base[s] is not None else "-"
                                                     for s, _ in splits) + " | - |")
    for condition in CONDITIONS:
        seeds = [s for s in args.seeds if success(args.root, f"{condition}-seed{s}", list(args.tasks)) is not None]
        cells = [_cell([success(args.root, f"{condition}-seed{s}", tasks) for s in seeds], base[split])
                 for split, tasks in splits]
        stages = ("opd", condition) if condition == "opd_mdgrpo" else (condition,)  # MD-GRPO starts from that OPD run
        walls = [sum(timings.get(f"train-{c}-seed{s}", 0) for c in stages) for s in seeds
                 if f"train-{condition}-seed{s}" in timings]
        wall = f"{statistics.median(walls) / 60:.1f}" if walls else "-"
        print(f"| {condition} | {len(seeds)} | " + " | ".join(cells) + f" | {wall} |")
    data_stages = {k: v for k, v in timings.items() if not k.startswith(("train-", "eval-"))}
    print(f"\ndata stages, wall s: {data_stages}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT / "runs" / "litegui-pipeline")
    parser.add_argument("--model", default="checkpoints/base-agent-history-tiny", help="the starting agent (and proposer)")
    parser.add_argument("--tasks", nargs="+", default=list(TASKS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--conditions", nargs="+", default=list(CONDITIONS), choices=CONDITIONS)
    parser.add_argument("--atg-episodes", type=int, default=8, help="ATG episodes per task")
    parser.add_argument("--atg-max-steps", type=int, default=8, help="ATG step cap per episode")
    parser.add_argument("--feedback", action="store_true", help="ATG retries see the rejected proposals (paper)")
    parser.add_argument("--pool-per-task", type=int, default=8, help="episodes per task in the pool")
    parser.add_argument("--opd-steps", type=int, default=100)
    parser.add_argument("--grpo-steps", type=int, default=100)
    parser.add_argument("--eval-episodes", type=int, default=10, help="held-out live episodes per task")
    parser.add_argument("--report", action="store_true", help="print the table of what has finished, run nothing")
    parser.add_argument("--rescore", action="store_true", help="recompute the A*_t recovery of a finished verify stage")
    args = parser.parse_args()
    args.root = args.root.resolve()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.rescore:
        path = args.root / "explore" / "verify_summary.json"
        summary = json.loads(path.read_text())
        summary.update(astar_recovery(args))
        path.write_text(json.dumps(summary, indent=1))
    if not args.report and not args.rescore:
        args.root.mkdir(parents=True, exist_ok=True)
        timings = Timings(args.root)
        timings.run("atg", args.root / "atg" / "atg_manifest.json", lambda: stage_atg(args))
        timings.run("pool", args.root / "pool" / "pool.json", lambda: stage_pool(args))
        timings.run("explore", args.root / "explore" / "manifest.json", lambda: stage_explore(args))
        timings.run("verify", args.root / "explore" / "verify_summary.json", lambda: stage_verify(args))
        timings.run("eval-base", args.root / "eval" / "base" / "summary.json", lambda: stage_eval(args, "base", args.model))
        for seed in args.seeds:
            for condition in args.conditions:
                name = f"{condition}-seed{seed}"
                final = args.root / "runs" / name / "final"
                timings.run(f"train-{name}", final / "config.json",
                            lambda c=condition, s=seed: stage_train(args, c, s))
                timings.run(f"eval-{name}", args.root / "eval" / name / "summary.json",
                            lambda n=name, f=final: stage_eval(args, n, str(f)))
    report(args)


if __name__ == "__main__":
    main()
