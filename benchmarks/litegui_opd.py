"""LiteGUI stage 1 and 2 on the built-in world: guided OPD, SFT on the same budget, MD-GRPO after OPD; the teacher.

    python benchmarks/litegui_opd.py [--conditions opd_most_matched opd_none opd_single opd_multi sft opd_mdgrpo
                                      opd_mdgrpo_no_rsub opd_mdgrpo_single sft_mdgrpo] [--seeds 0 1 2]
                                     [--out runs/bench-litegui-opd]
                                     [--results results/litegui_opd.json] [--dry-run]
    python benchmarks/litegui_opd.py --teacher-only     # how often the teacher follows the guidance block
    python benchmarks/litegui_opd.py --cost             # teacher scoring: batched over prompts vs one call each
    python benchmarks/litegui_opd.py --divergence       # where the guided teacher disagrees with the student
    python benchmarks/litegui_opd.py --flips F.json     # the steps each run lost / gained, and the teacher there

Every condition starts from ``--student`` (default: the history-reading base agent,
``checkpoints/base-agent-history-tiny``) and trains on the recorded states of built-in-world data seed 3, as one
``benchmarks/rl_recipes.py`` run per (condition, seed): guided OPD (``recipes/litegui_opd_tiny.yaml``, 100 steps of
4 states x 4 samples, ``guidance=`` none / single / multi / most_matched); SFT on the same data and budget (100
steps of 16 recorded steps, the same learning rate, ``recipes/litegui_teacher_history_tiny.yaml`` without the
block); MD-GRPO (``recipes/litegui_mdgrpo_tiny.yaml``, ``--mdgrpo-steps``) from the same seed's Most-Matched OPD
model, with R_sub and without it (``w_subtask`` 0), and with the single-solution reward (``ground_truth=recorded``:
A*_t cut to the recorded action): LiteGUI's SFT-free pipeline; and MD-GRPO from the same seed's SFT model (SFT then
MD-GRPO). Each final model and the
student meet the same held-out steps (data seed ``--eval-seed`` 7, ``--per-task`` 24 episodes per trained family:
over 1,000 steps), scored greedily and paired step by step, on the whole and split into steps with several valid
actions (``multi_solution``) and with one (``single_solution``). Resumable (rl_recipes skips finished runs and
resumes interrupted ones); ``--results`` writes the table (mean, spread, paired intervals, wall time, peak RSS).
Choose settings with ``--eval-seed 5`` (validation), never on 7.

``--teacher-only`` and ``--divergence`` keep the teacher's rows in ``--json`` (``results/litegui_teacher.json``)
under ``--label`` (120 steps per split of ``--eval-seed``); the teacher
(``recipes/litegui_teacher_history_tiny.yaml``) is trained first when ``--teacher`` does not exist.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from rl_recipes import ensure_data  # noqa: E402

OPD_RECIPE = ROOT / "recipes" / "litegui_opd_tiny.yaml"
TEACHER_RECIPE = ROOT / "recipes" / "litegui_teacher_history_tiny.yaml"
STUDENT = ROOT / "checkpoints" / "base-agent-history-tiny"
CONDITIONS = ["opd_most_matched", "opd_none", "opd_single", "opd_multi", "sft", "opd_mdgrpo", "opd_mdgrpo_no_rsub",
              "opd_mdgrpo_single", "sft_mdgrpo"]
TITLE = "LiteGUI: guided OPD, SFT on the same budget, MD-GRPO after OPD"


def heldout(data: Path, samples: int, seed: int = 0) -> dict[str, list]:
    """Held-out steps of data seed 7 split by how many actions are valid."""
    from guirl.trainers.rl_common import load_states

    steps = [(s.episode, s.step, s.root) for s in load_states([str(data / "trajectories/test_seed.jsonl")],
                                                              labels=["correct"]) if s.step.valid_actions]
    multi = [x for x in steps if len(x[1].valid_actions) >= 2]
    single = [x for x in steps if len(x[1].valid_actions) == 1]
    rng = random.Random(seed)
    return {"multi_solution": rng.sample(multi, min(samples, len(multi))),
            "single_solution": rng.sample(single, min(samples, len(single)))}


def evaluate(model_dir: Path, splits: dict[str, list], guidance=None) -> dict[str, float]:
    from guirl.eval.steps import evaluate_steps
    from guirl.models.load import load_policy
    from guirl.rollout.hf_engine import HFEngine

    policy = load_policy(model_dir)
    engine = HFEngine.from_policy(policy)
    out = {}
    for name, steps in splits.items():
        refs = guidance(name, steps) if guidance is not None else None
        m = evaluate_steps(engine, policy.prompt, policy.frame_for, steps, max_new_tokens=80, guidance=refs)
        out[name] = m["eval/followed"] if refs is not None else m["eval/step_success"]
    return out


def teacher_following(teacher: Path, splits: dict[str, list], student: Path = STUDENT) -> dict[str, dict[str, float]]:
    """Held-out step success of a model without the block, and how often it writes the reference it is given:
    on multi-solution steps the reference is the last of A*_t (not the recorded first choice), so following it
    means reading it; a model that never saw the block (the base agent) shows the no-reading baseline."""

    from guirl.models.guidance import references

    def last_reference(name, steps):
        return [references(st.valid_actions, "qwen_computer_use")[-1:] for _, st, _ in steps]

    rows = {}
    for label, model in (("base agent", student), ("teacher", teacher)):
        rows[f"{label}: step success, no block"] = evaluate(model, splits)
        rows[f"{label}: follows the given reference"] = evaluate(model, splits, last_reference)
    return rows


def ensure_teacher(teacher: Path, data: Path) -> None:
    if (teacher / "config.json").is_file():
        return
    run = teacher.parent if teacher.name == "final" else teacher
    subprocess.run([sys.executable, "-m", "guirl", "train", "sft", "--config",
                    str(TEACHER_RECIPE), f"output_dir={run}", "report_to=[]",
                    f"train_data=[{data / 'trajectories/train.jsonl'}]"], check=True, cwd=ROOT)


def condition_commands(condition: str, seed: int, args) -> list[list[str]]:
    """The ``benchmarks/rl_recipes.py`` runs of ``condition`` for ``seed`` (a guided-OPD condition, the SFT baseline on
    the OPD budget, or MD-GRPO from the Most-Matched OPD run of the same seed, with or without R_sub): every run is
    scored on the same held-out steps as the student, paired step by step."""
    import yaml
    from rl_recipes import overrides_tag

    recipe = yaml.safe_load(OPD_RECIPE.read_text())
    teacher = [f"teacher={args.teacher}"] if Path(args.teacher).resolve() != (ROOT / recipe["teacher"]).resolve() else []
    common = ["--seeds", str(seed), "--eval-seed", str(args.eval_seed), "--per-task", str(args.per_task),
              "--episodes", "0", "--splits", "steps_unseen_seeds", "--base", args.student, "--out", args.out]
    bench = [sys.executable, str(ROOT / "benchmarks" / "rl_recipes.py")]
    opd = lambda guidance: [*bench, f"guidance={guidance}", *teacher, "--recipes", "litegui_opd_tiny",  # noqa: E731
                            "--tag", guidance, *common]
    if condition.startswith("opd_") and not condition.startswith("opd_mdgrpo"):
        return [opd(condition.removeprefix("opd_"))]
    # the same states and budget as OPD: as many sequences per step, as many steps, the same lr
    sft_overrides = ["guidance_fraction=0", f"batch_size={recipe['batch_size'] * recipe['samples_per_state']}",
                     f"max_steps={recipe['max_steps']}", f"optim.lr={recipe['optim']['lr']}", "optim.warmup_ratio=0",
                     "optim.schedule=constant", "save_every=50"]
    sft = [*bench, *sft_overrides, "--recipes", "litegui_teacher_history_tiny", "--tag", "sft", *common]
    if condition == "sft":
        return [sft]
    # MD-GRPO from each seed's stage-1 model, paired against the student: Most-Matched OPD (the SFT-free pipeline) or
    # SFT on the same budget (SFT then MD-GRPO)
    if condition == "sft_mdgrpo":
        stage1 = Path(args.out) / f"litegui_teacher_history_tiny-{overrides_tag([*sft_overrides, f'model={args.student}'])}"
        first, tag = sft, f"after SFT, {args.mdgrpo_steps} steps"
    else:
        stage1 = Path(args.out) / f"litegui_opd_tiny-{overrides_tag(['guidance=most_matched', *teacher, f'model={args.student}'])}"
        first, tag = opd("most_matched"), f"after OPD, {args.mdgrpo_steps} steps"
    overrides = [f"max_steps={args.mdgrpo_steps}", f"save_every={max(args.mdgrpo_steps // 2, 1)}"]
    if condition == "opd_mdgrpo_no_rsub":
        md = yaml.safe_load((ROOT / "recipes" / "litegui_mdgrpo_tiny.yaml").read_text())["rewards"]
        md[0]["kwargs"]["w_subtask"] = 0.0
        overrides.append("rewards=" + json.dumps(md))
        tag += ", no R_sub"
    if condition == "opd_mdgrpo_single":  # the reward sees only the recorded action, not all of A*_t
        overrides.append("ground_truth=recorded")
        tag += ", single-solution reward"
    return [first, [*bench, *overrides, "--recipes", "litegui_mdgrpo_tiny", "--tag", tag,
                    "--start", f"{stage1}-seed{{seed}}/final", *common]]


def teacher_divergence(teacher: Path, splits: dict[str, list], student: Path, samples: int = 4,
                       states: int = 30) -> dict:
    """Per-token reverse KL(student || guided teacher) on the student's own samples (temperature 1, as OPD
    draws them) of held-out single-solution steps, the reference being the step's one valid action: over
    samples the world accepts, and over the others split at the first token where the sample leaves the
    reference as the model would write it (with its sub-goal thought first when the student thinks, as the
    teacher's SFT target: guirl.trainers.sft_examples.target_text). With the teacher's and the student's
    entropies at those tokens."""
    import torch

    from guirl.actions import Frame, parse_action
    from guirl.matching.step import match_action
    from guirl.models.guidance import Guidance
    from guirl.models.load import load_policy
    from guirl.models.scoring import score_completions
    from guirl.rollout.engine import SamplingParams
    from guirl.rollout.hf_engine import HFEngine
    from guirl.rollout.history import recorded_prompt
    from guirl.trainers.sft_examples import Example, step_thought, target_text

    student, guided = load_policy(student), load_policy(teacher)
    engine, tok, spec = HFEngine.from_policy(student), student.processor.tokenizer, student.prompt
    sums: dict[str, list[float]] = {}

    def add(key: str, values: torch.Tensor) -> None:
        total = sums.setdefault(key, [0.0, 0])
        total[0], total[1] = total[0] + float(values.sum()), total[1] + values.numel()

    accepted = drawn = 0
    for i, (episode, step, root) in enumerate(splits["single_solution"][:states]):
        prompt, image = recorded_prompt(spec, student.frame_for, episode, step, root)
        frame, screen = student.frame_for(*image.size), Frame.screen(*image.size)
        reference = Guidance(list(step.valid_actions))
        privileged, _ = recorded_prompt(spec, student.frame_for, episode, step, root,
                                        guidance=reference.text(spec.fmt, frame), image=image)
        thought = step_thought(episode, step, "sub_goal") if spec.reasoning else None
        ref = target_text(Example(episode, step, root, reference.actions[0], thought), spec.fmt, frame)
        ref_ids = tok(ref, add_special_tokens=False)["input_ids"]
        outs = engine.generate([prompt], SamplingParams(n=samples, temperature=1.0, max_new_tokens=96, seed=i))[0]
        ids = [c.token_ids for c in outs]
        with torch.no_grad():
            s = score_completions(student.model, student.processor, [prompt] * len(ids), ids, full_distribution=True)
            t = score_completions(guided.model, guided.processor, [privileged] * len(ids), ids, full_distribution=True)
        for k, c in enumerate(outs):
            n = len(c.token_ids)
            log_p, log_q = s.full_logprobs[k, :n], t.full_logprobs[k, :n]
            kl = (log_p.exp() * (log_p - log_q)).sum(-1)
            pred = parse_action(c.text, spec.fmt, frame)
            ok = bool(pred) and match_action(pred.to_frame(screen), step.valid_actions, screen_size=image.size,
                                             a11y=step.a11y).success
            drawn, accepted = drawn + 1, accepted + ok
            if ok:
                add("KL, accepted samples", kl)
                continue
            cut = next((j for j in range(n) if j >= len(ref_ids) or c.token_ids[j] != ref_ids[j]), n)
            add("KL, rejected samples, before leaving the reference", kl[:cut])
            add("KL, rejected samples, after leaving it", kl[cut:])
            add("teacher entropy after leaving it", -(log_q.exp() * log_q).sum(-1)[cut:])
            add("student entropy after leaving it", -(log_p.exp() * log_p).sum(-1)[cut:])
    out = {key: round(total / max(count, 1), 3) for key, (total, count) in sums.items()}
    out["samples"], out["accepted share"] = drawn, round(accepted / max(drawn, 1), 3)
    return out


def teacher_cost(teacher: Path, data: Path, states: int = 8) -> None:
    """Teacher scoring per sample, batched over the distinct privileged prompts against one call per sample."""
    import torch

    from guirl.rollout.hf_engine import HFEngine
    from guirl.trainers.grpo import load_rl_policy
    from guirl.trainers.opd import OPDConfig, OPDSampler, Teacher, teacher_scores
    from guirl.trainers.rl_common import load_states

    cfg = OPDConfig(model=str(ROOT / "checkpoints" / "base-agent-tiny"), teacher=str(teacher), samples_per_state=4,
                    train_data=[str(data / "trajectories/train.jsonl")], batch_size=states, num_threads=2)
    torch.set_num_threads(2)
    policy = load_rl_policy(cfg)
    t = Teacher(cfg.teacher, cfg.model, policy.processor)
    all_states = load_states(cfg.train_data)
    sampler = OPDSampler(cfg, policy, HFEngine.from_policy(policy), t)
    batches, logged = sampler(policy.model, 0, [random.Random(0).sample(all_states, states)])
    samples = [s for b in batches for s in b]
    timings = {}
    for name, groups in (("batched over distinct prompts", [samples]), ("one call per sample", [[s] for s in samples])):
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            for g in groups:
                teacher_scores(t, policy.model, g, top_k=1)
            best = min(best, time.perf_counter() - start)
        timings[name] = best / len(samples)
    print(f"teacher scoring, {len(samples)} samples of {states} states, "
          f"{logged['guidance/teacher_prompts_per_state']:.2f} distinct teacher prompts per state (most_matched):")
    for name, value in timings.items():
        print(f"  {name:<32} {value * 1000:8.1f} ms per sample")
    print(f"  ratio: {timings['one call per sample'] / timings['batched over distinct prompts']:.2f}x")


def print_following(rows: dict, splits: dict[str, list], seed: int = 7) -> None:
    print(f"guidance following on data seed {seed}'s unseen-seed steps "
          f"(n = {', '.join(f'{k} {len(v)}' for k, v in splits.items())}):")
    for label, row in rows.items():
        print(f"  {label:<44} " + "  ".join(f"{k} {v:.3f}" for k, v in row.items()))


def teacher_rows(args, teacher: Path, student: Path, splits: dict[str, list]) -> None:
    """``--teacher-only`` / ``--divergence``: the teacher's row (following, divergence) kept in ``--json`` under
    ``--label`` and the data seed, with the command and commit that measured it."""
    from base_agent import commit, write_result

    path = Path(args.json)
    result = json.loads(path.read_text()) if path.is_file() else {"teachers": {}}
    row = result["teachers"].setdefault(args.label or str(teacher), {}).setdefault(f"seed{args.eval_seed}", {})
    row |= {"teacher": str(teacher.relative_to(ROOT) if teacher.is_relative_to(ROOT) else teacher),
            "student": str(student.relative_to(ROOT) if student.is_relative_to(ROOT) else student),
            "n": {k: len(v) for k, v in splits.items()}}
    command = " ".join(["python", "benchmarks/litegui_opd.py", *sys.argv[1:]])
    if args.teacher_only:
        row["following"] = teacher_following(teacher, splits, student)
        row["following_command"] = command
        print_following(row["following"], splits, args.eval_seed)
    if args.divergence:
        row["divergence"] = teacher_divergence(teacher, splits, student)
        row["divergence_command"] = command
        for key, value in row["divergence"].items():
            print(f"{key:<52} {value}")
    result["commit"] = commit()
    write_result(path, result)


def flips(args) -> dict:
    """``--flips``: on the held-out steps the conditions were scored on (rl_recipes' order), the steps each run
    lost (the student right, the run wrong) and gained, with the teacher's own success on those steps given the
    block (all of A*_t, Multi-GT's shape) and without it: whether OPD moves the student towards its teacher's
    mistakes."""
    from base_agent import commit
    from rl_recipes import _portable, scored_steps

    from guirl.eval.steps import evaluate_steps
    from guirl.models.load import load_policy
    from guirl.rollout.hf_engine import HFEngine

    results = json.loads((Path(args.out) / "results.json").read_text())
    data = ensure_data(Path(args.out), args.eval_seed, args.per_task)
    held = scored_steps(data / "trajectories/test_seed.jsonl")
    base = results["base"]["per_step"]["steps_unseen_seeds"]
    if len(base) != len(held):
        print(f"litegui_opd: error: {args.out}/results.json scored {len(base)} steps, data seed {args.eval_seed} with "
              f"--per-task {args.per_task} has {len(held)}; pass the run's --per-task", file=sys.stderr)
        raise SystemExit(2)
    policy = load_policy(args.teacher)
    engine = HFEngine.from_policy(policy)
    teacher = {}
    for label, guidance in (("no block", None), ("block", [st.valid_actions for _, st, _ in held])):
        predictions: list = []
        evaluate_steps(engine, policy.prompt, policy.frame_for, held, 96, predictions, guidance=guidance)
        teacher[label] = [int(m.success) for _, m, _ in predictions]
    share = lambda idx, v: round(sum(v[i] for i in idx) / len(idx), 4) if idx else None  # noqa: E731
    rows = {}
    for key, info in sorted(results.items()):
        after = info.get("scores", {}).get("per_step", {}).get("steps_unseen_seeds") if isinstance(info, dict) else None
        if "/" not in key or after is None:
            continue
        lost = [i for i, (b, a) in enumerate(zip(base, after, strict=True)) if b and not a]
        gained = [i for i, (b, a) in enumerate(zip(base, after, strict=True)) if a and not b]
        rows[key] = {"lost": len(lost), "gained": len(gained),
                     **{f"teacher {label} on {name}": share(idx, teacher[label])
                        for name, idx in (("lost", lost), ("gained", gained)) for label in teacher}}
        print(key, json.dumps(rows[key]), flush=True)
    everywhere = {f"teacher {label}, all steps": round(sum(v) / len(v), 4) for label, v in teacher.items()}
    print(json.dumps(everywhere))
    return {"command": " ".join(["python", "benchmarks/litegui_opd.py", *sys.argv[1:]]), "commit": commit(),
            "teacher": _portable(args.teacher), "eval_seed": args.eval_seed, "n": len(held), "student": round(sum(base) / len(base), 4), **everywhere,
            "runs": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conditions", nargs="+", default=CONDITIONS, choices=CONDITIONS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--out", default="runs/bench-litegui-opd")
    parser.add_argument("--per-task", type=int, default=24,
                        help="held-out episodes per trained family for the conditions (24: over 1,000 steps)")
    parser.add_argument("--mdgrpo-steps", type=int, default=640, help="MD-GRPO steps after OPD (the recipe's: 640)")
    parser.add_argument("--results", default=None, help="write the conditions' table here (results/litegui_opd.json)")
    parser.add_argument("--dry-run", action="store_true", help="print the conditions' rl_recipes.py runs only")
    parser.add_argument("--flips", default=None, metavar="JSON",
                        help="only: the steps each run lost and gained, beside the teacher's success there (JSON out)")
    parser.add_argument("--student", default=str(STUDENT), help="the starting point of every condition")
    parser.add_argument("--teacher", default=str(ROOT / "checkpoints" / "litegui-teacher-history-tiny"),
                        help="guidance-reading teacher (trained with recipes/litegui_teacher_history_tiny.yaml "
                             "when missing)")
    parser.add_argument("--eval-seed", type=int, default=7,
                        help="data seed of the scored steps (7: held out; 5, 6: validation, to choose a teacher)")
    parser.add_argument("--label", default=None,
                        help="with --teacher-only / --divergence: the teacher's row in --json (default its path)")
    parser.add_argument("--json", default="results/litegui_teacher.json",
                        help="with --teacher-only / --divergence: where the teacher's rows are kept")
    parser.add_argument("--samples", type=int, default=120, help="held-out steps per split (at most)")
    parser.add_argument("--teacher-only", action="store_true", help="only report how the teacher follows guidance")
    parser.add_argument("--cost", action="store_true", help="only time teacher scoring, batched vs one call per sample")
    parser.add_argument("--divergence", action="store_true",
                        help="only measure where the guided teacher disagrees with the student's own samples")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.flips:
        Path(args.flips).write_text(json.dumps(flips(args), indent=1))
        return
    train_data, eval_data = ensure_data(out, 3), ensure_data(out, args.eval_seed)
    teacher, student = Path(args.teacher).resolve(), Path(args.student).resolve()
    ensure_teacher(teacher, train_data)
    if args.cost:
        teacher_cost(teacher, train_data)
        return
    if args.divergence or args.teacher_only:
        teacher_rows(args, teacher, student, heldout(eval_data, args.samples))
        return
    for seed in args.seeds:  # seed-major: a partial run already compares every condition
        for condition in args.conditions:
            for cmd in condition_commands(condition, seed, args):
                print(" ".join(cmd[1:]), flush=True)
                if not args.dry_run:  # rl_recipes skips a finished (condition, seed) and resumes an interrupted run
                    subprocess.run(cmd, check=True, cwd=ROOT)
    if args.results and not args.dry_run:
        from base_agent import commit

        last = condition_commands(args.conditions[-1], args.seeds[-1], args)[-1]
        subprocess.run([*last, "--results", args.results, "--title", TITLE], check=True, cwd=ROOT)
        result = json.loads(Path(args.results).read_text())
        result |= {"command": " ".join(["python", "benchmarks/litegui_opd.py", *sys.argv[1:]]), "commit": commit()}
        Path(args.results).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
