"""LiteGUI ATG (generate-verify-correct) in the built-in world: what the verify-correct loop buys.

    python benchmarks/litegui_atg.py run --condition loop --tasks desktop.open_file --root /tmp/atg_bench
    python benchmarks/litegui_atg.py report --root /tmp/atg_bench
    python benchmarks/litegui_atg.py all --root /tmp/atg_bench       # every condition and task, then the report

The proposer is the shipped tiny base agent (``checkpoints/base-agent-tiny``,
trained on sim data of world seed 0; here world seeds 9000000 + i, which
gen-data never uses). Conditions, on the same episodes (task, world seed):

- ``no_loop``: the first (greedy) proposal is always executed (``retries=0``;
  the ground-truth verifier still votes, for the labels);
- ``loop``: ground-truth verifier (``ground_truth_verify``), 3 votes, commit
  on 2 Yes, up to 3 retries with the rejected actions and reasons in the prompt;
- ``loop_no_feedback``: the same, retries without the negative constraints
  (plain resampling), to separate resampling from feedback;
- ``http_model``: the loop with a model verifier: a tiny checkpoint judge
  (``--judge-model``) served by guirl's judge server on loopback, asked
  through the ``openai`` client; its votes are compared with the
  ground-truth verdict of the same proposals (agreement over readable votes).

Printed per condition: episode success, proposal accuracy before correction
(first proposals the world's oracle accepts, ``is_advancing``) and after
(executed actions the oracle accepts), mean retries per step, committed
steps, masked votes, verifier-oracle agreement. ``run`` writes
``ROOT/<condition>/<task>/`` (the ATG output); ``report`` sums the counts of
every manifest found, so a long benchmark can run in short pieces.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from pathlib import Path

TRAINED_TASKS = ("desktop.open_file", "desktop.change_settings", "desktop.save_document", "web.search_open",
                 "web.shopping", "mobile.toggle_setting", "mobile.add_contact")
CONDITIONS = ("no_loop", "loop", "loop_no_feedback", "http_model")
SHOWN = ("success_rate", "first_proposal_accuracy", "executed_accuracy", "retries_per_step", "committed_rate",
         "unparsed_rate", "masked_vote_rate", "verifier_oracle_agreement", "episodes", "steps", "proposals")


def config_for(condition: str, args: argparse.Namespace):
    from guirl.datagen.atg import ATGConfig

    return ATGConfig(retries=0 if condition == "no_loop" else args.retries, feedback=condition != "loop_no_feedback",
                     temperature=args.temperature, history_steps=args.history_steps,
                     history_images=min(args.history_images, args.history_steps), max_steps=args.max_steps,
                     seed=args.seed)


def run_condition(condition: str, tasks: list[str], args: argparse.Namespace) -> None:
    import torch

    from guirl.datagen.atg import Proposer, generate_atg
    from guirl.judges import make_judge
    from guirl.models.load import load_policy

    torch.set_num_threads(args.threads)
    proposer = Proposer.from_policy(load_policy(args.model))
    server = None
    if condition == "http_model":
        from guirl.judges.serve import serve_judge

        server = serve_judge(make_judge("checkpoint", model_dir=args.judge_model, max_new_tokens=args.judge_tokens))
        host, port = server.server_address
        verifier = make_judge("openai", base_url=f"http://{host}:{port}/v1", model="tiny-judge", max_retries=0,
                              timeout_s=120, max_workers=1)
    else:
        verifier = make_judge("ground_truth_verify")
    try:
        for task in tasks:
            start = time.perf_counter()
            out = Path(args.root) / condition / task
            metrics = generate_atg("sim", [task], args.episodes, proposer, verifier, out, config_for(condition, args),
                                   world_seed=args.world_seed, env_kwargs={"preset": "coarse"})
            print(f"{condition} {task}: {metrics['atg/episodes']:.0f} episodes, success "
                  f"{metrics['atg/success_rate']:.2f}, {time.perf_counter() - start:.0f}s", flush=True)
    finally:
        if server is not None:
            server.shutdown()
            server.server_close()


def ground_truth_agreement(root: Path) -> Counter:
    """Votes of a model verifier vs the ground-truth verdict of the same proposal (from the written files)."""
    from guirl.actions import Action
    from guirl.data import read_episodes
    from guirl.judges.verify import ground_truth_verdict

    counts: Counter = Counter()
    for path in sorted(root.glob("*/*.jsonl")):
        for episode in read_episodes(path, check_images=False):
            for step in episode.steps:
                size = (step.screenshot.width, step.screenshot.height)
                for it in step.extra["atg"]["iterations"]:
                    action = Action.model_validate(it["action"]) if it["action"] else None
                    truth = ground_truth_verdict(action, step.valid_actions, size, step.a11y,
                                                 it["parse_failure"])["verdict"] == "Yes"
                    counts["proposals"] += 1
                    counts["truth_yes"] += truth
                    for vote in it["votes"]:
                        counts["votes"] += 1
                        if vote["yes"] is None:
                            counts["masked"] += 1
                        else:
                            counts["readable"] += 1
                            counts["agree"] += vote["yes"] == truth
                            counts["said_yes"] += vote["yes"]
    return counts


def report(root: Path) -> None:
    from guirl.datagen.atg import atg_metrics

    print(f"{'condition':<18}" + "".join(f"{name:>{max(10, len(name) + 2)}}" for name in SHOWN))
    for condition in CONDITIONS:
        manifests = sorted((root / condition).glob("*/atg_manifest.json"))
        if not manifests:
            continue
        counts: Counter = Counter()
        for path in manifests:
            counts.update(json.loads(path.read_text())["counts"])
        metrics = atg_metrics(counts)
        print(f"{condition:<18}" + "".join(f"{metrics[f'atg/{name}']:>{max(10, len(name) + 2)}.3f}" for name in SHOWN))
        if condition == "http_model":
            agree = ground_truth_agreement(root / condition)
            readable = agree["readable"]
            agreement = (f"{agree['agree'] / readable:.3f}, it said Yes to {agree['said_yes'] / readable:.1%}"
                         if readable else "n/a")
            print(f"  model verifier vs ground truth: {agree['votes']} votes on {agree['proposals']} proposals, "
                  f"{agree['masked']} masked ({agree['masked'] / max(1, agree['votes']):.1%}); agreement over "
                  f"{readable} readable votes: {agreement} (ground truth Yes for "
                  f"{agree['truth_yes'] / max(1, agree['proposals']):.1%} of proposals)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=("run", "report", "all"))
    parser.add_argument("--root", default="/tmp/atg_bench", help="where each condition's ATG output is written")
    parser.add_argument("--condition", choices=CONDITIONS, default="loop", help="the condition `run` runs")
    parser.add_argument("--tasks", default=",".join(TRAINED_TASKS), help="comma-separated sim task families")
    parser.add_argument("--episodes", type=int, default=5, help="episodes per task (world seeds world_seed + i)")
    parser.add_argument("--world-seed", type=int, default=9_000_000, help="first world seed")
    parser.add_argument("--model", default="checkpoints/base-agent-tiny", help="proposer checkpoint")
    parser.add_argument("--judge-model", default="checkpoints/base-agent-tiny", help="checkpoint served as verifier")
    parser.add_argument("--judge-tokens", type=int, default=32, help="answer length of the checkpoint verifier")
    parser.add_argument("--retries", type=int, default=3, help="N retries of the loop conditions")
    parser.add_argument("--temperature", type=float, default=0.3, help="retry temperature (tiny agent: 0.3)")
    parser.add_argument("--history-steps", type=int, default=0,
                        help="dialogue history shown (default 0: the base agent was trained without history)")
    parser.add_argument("--history-images", type=int, default=2, help="history screenshots (capped by history steps)")
    parser.add_argument("--max-steps", type=int, default=18, help="step cap per episode")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    root, tasks = Path(args.root), [t for t in args.tasks.split(",") if t]
    start = time.perf_counter()
    if args.mode in ("run", "all"):
        for condition in (args.condition,) if args.mode == "run" else CONDITIONS:
            run_condition(condition, tasks, args)
    if args.mode in ("report", "all"):
        report(root)
    print(f"wall time {time.perf_counter() - start:.0f}s")


if __name__ == "__main__":
    main()
