"""Render docs/results.md from the benchmark results under results/ (no figure in that page is typed by hand).

    python scripts/render_results.py [--check]

Each ``results/<name>.json`` written by a benchmark has a renderer here (the benchmark's name); every table
says the command that printed it, the commit and the data seeds. ``--check`` exits 1 when docs/results.md
is not what the results render to (the test suite runs it). The figures the method docs quote in their prose are
rendered too, between ``<!-- rendered from results/<name>.json -->`` and ``<!-- end rendered -->``
(``scripts/render_findings.py``), and checked the same way.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from render_findings import BLOCK, SPLIT_NAMES, _interval, by_prefix, fill  # noqa: E402

RESULTS, PAGE = ROOT / "results", ROOT / "docs" / "results.md"


def _f(value, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _get(d: dict, *keys):
    for key in keys:
        if not isinstance(d, dict) or key not in d:
            return None
        d = d[key]
    return d


def _provenance(result: dict) -> list[str]:
    return [f"Command: `{result.get('command', '?')}` (commit {result.get('commit', '?')})."]


BASE_AGENT_ROWS = (
    ("multi-step steps, trained families", ("trained_families", "step_success"), ">= 0.55"),
    ("multi-step steps, unseen families", ("unseen_families", "step_success"), ">= 0.20"),
    ("grounding screens", ("grounding", "step_success"), ">= 0.75"),
    ("TYPE steps (trained families)", ("type_steps", "step_success"), ">= 0.5"),
    ("sim episode success, trained families", ("episode_success", "success"), ">= 0.10"),
    ("right action changes but the output does not", ("unchanged_output", "same_output"), "<= 0.20"),
    ("pass@8 minus greedy on training states", ("pass_at_k", "room"), ">= 0.15"),
)


def render_base_agent(result: dict) -> list[str]:
    models = list(result["models"])
    lines = ["## Base agents (held-out data seed %s)" % result.get("data_seed"), ""]
    lines.append("| measure | target | " + " | ".join(f"`{Path(m).name}`" for m in models) + " |")
    lines.append("|---|---|" + "---|" * len(models))
    for label, keys, target in BASE_AGENT_ROWS:
        lines.append(f"| {label} | {target} | " + " | ".join(_f(_get(result["models"][m], *keys)) for m in models)
                     + " |")
    first = result["models"][models[0]]
    counts = [_get(first, k, "n") for k in ("trained_families", "unseen_families", "grounding", "type_steps")]
    episodes = _get(first, "episode_success", "n")
    lines += ["", f"Steps: {' / '.join(str(c) for c in counts)} (trained families / unseen families / grounding / "
              f"TYPE); live episodes: {episodes}. Greedy, batched."]
    for model, diffs in result.get("paired", {}).items():
        lines.append(f"Paired `{Path(model).name}` minus `{Path(models[0]).name}`: " + "; ".join(
            f"{k} {d['diff']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]" for k, d in diffs.items()) + ".")
    for model in models:
        train = _get(result["models"][model], "training")
        if train and train.get("wall_time_s"):
            over = f" over {train['processes']} processes" if train.get("processes") else ""
            lines.append(f"`{Path(model).name}` training: {train['wall_time_s'] / 60:.0f} min{over}, peak RSS "
                         f"{train.get('peak_rss_mb') or 0:.0f} MB, {train.get('steps')} steps (`{train.get('command')}`).")
    return lines + [""] + _provenance(result)


def render_base_agent_levers(result: dict) -> list[str]:
    lines = [f"## Base-agent levers (validation seeds {', '.join(map(str, result.get('seeds', [])))})", "",
             f"Each setting: {result.get('steps')} SFT steps of the multi-step stage from `{result.get('start')}`."
             + (f" {result['note']}." if result.get("note") else ""), "",
             "| setting | history window | thought | trajectories per family | recovery + grounding mixed in | seed "
             "| trained families | unseen families | grounding | TYPE | output unchanged | train min |"
             + (" error recovery (paired vs start) |" if (recovery := _has_recovery(result)) else ""),
             "|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if recovery else "")]
    for name, entry in result.get("settings", {}).items():
        lever = entry["lever"]
        wall = _get(entry, "training", "wall_s")
        for seed, s in sorted(entry.get("validation", {}).items()):
            volume = "-" if lever.get("steps") == 0 else lever.get("train_per_task", 300)  # the recipe's 300
            aux = "-" if lever.get("steps") == 0 else ("yes" if lever.get("auxiliary", True) else "no")
            lines.append(f"| {name} | {lever['history_window']} | {lever['thought']} | {volume} | {aux} | {seed} | "
                         f"{_f(_get(s, 'trained_families', 'step_success'))} | "
                         f"{_f(_get(s, 'unseen_families', 'step_success'))} | {_f(_get(s, 'grounding', 'step_success'))} | "
                         f"{_f(_get(s, 'type_steps', 'step_success'))} | {_f(_get(s, 'unchanged_output', 'same_output'))} | "
                         f"{_f(wall / 60 if wall else None, 1)} |" + (f" {_recovery_cell(s)} |" if recovery else ""))
    first = next((v for e in result.get("settings", {}).values() for v in e.get("validation", {}).values()), None)
    if first:
        lines += ["", f"Validation steps per seed: {_get(first, 'trained_families', 'n')} (trained families) / "
                  f"{_get(first, 'unseen_families', 'n')} (unseen families) / {_get(first, 'grounding', 'n')} "
                  f"(grounding) / {_get(first, 'type_steps', 'n')} (TYPE)"
                  + (f" / {_get(first, 'recovery', 'n')} (error recovery)" if recovery else "") + "; greedy."]
    return lines + [""] + _provenance(result)


def _has_recovery(result: dict) -> bool:
    return any("recovery" in v for e in result.get("settings", {}).values() for v in e.get("validation", {}).values())


def _recovery_cell(scores: dict) -> str:
    own = scores.get("recovery")
    if not own:
        return "-"
    pair = own.get("paired_vs_start")
    return _f(own["step_success"]) + (f" ({pair['diff']:+.3f} [{pair['low']:+.3f}, {pair['high']:+.3f}])" if pair else "")


def render_rl_recipes(result: dict) -> list[str]:
    setting = result.get("setting", {})
    seed = setting.get("eval_seed")
    kind = "held-out" if seed == 7 else "validation"
    lines = [f"## {result.get('title', 'RL recipes')} from `{result.get('base_model')}` ({kind} data seed {seed})", "",
             "Training on data seed 3; greedy evaluation of the same steps before and after. The bar: a gain above "
             "twice the spread over seeds with every seed's paired 95% interval above 0.", "", *_recipes_table(result)]
    versus = result.get("versus_trl") or {}
    if versus:
        lines += ["", "guirl against TRL's GRPOTrainer on the same recipe (the bar: guirl's gain is not below TRL's by "
                  "more than the two spreads):", "",
                  "| recipe | split | guirl gain | TRL gain | guirl train min | TRL train min | bar |", "|---|---|---|---|---|---|---|"]
        for name, v in versus.items():
            lines.append(f"| {name} | {v['split']} | {v['guirl_gain']:+.3f} +- {_f(v['guirl_spread'])} | "
                         f"{v['trl_gain']:+.3f} +- {_f(v['trl_spread'])} | {_f(v['guirl_wall_min'], 1)} | "
                         f"{_f(v['trl_wall_min'], 1)} | {'pass' if v['passes'] else 'miss'} |")
    return lines + [""] + _provenance(result)


def _recipes_table(result: dict) -> list[str]:
    """The table of ``rl_recipes.summarise``'s output: a row per recipe (or condition) and split."""
    lines = ["| recipe | split | n | start | after (mean +- spread) | gain | paired per seed | bar | train min | RSS GB |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, row in result.get("recipes", {}).items():
        for split, r in row["splits"].items():
            pairs = "; ".join(_interval(p) for p in r["paired"].values())
            bar = {True: "pass", False: "miss", None: "-"}[r["passes"]]
            lines.append(f"| {name} | {split} | {r['n']} | {_f(r['base'])} | {_f(r['mean'])} +- {_f(r['spread'])} | "
                         f"{r['gain']:+.3f} | {pairs} | {bar} | {_f(row['wall_min'], 1)} | {_f(row['peak_rss_gb'], 2)} |")
            own = r.get("own_start")
            if own:  # a second stage against each seed's own first-stage model (the start column: their mean)
                pairs = "; ".join(_interval(p) for p in own["paired"].values())
                lines.append(f"| {name}, over each seed's start | {split} | {r['n']} | {_f(own['start'])} | "
                             f"{_f(r['mean'])} +- {_f(r['spread'])} | {own['gain']:+.3f} +- {_f(own['spread'])} | {pairs} | "
                             f"{ {True: 'pass', False: 'miss', None: '-'}[own['passes']]} | | |")
    return lines


def render_litegui_pipeline(result: dict) -> list[str]:
    s = result.get("setting", {})
    tasks = s.get("tasks", [])
    ending = ("an episode that reaches its goal ends with success" if s.get("auto_terminate")
              else "an episode ends on the agent's finish action")
    lines = [f"## {result.get('title', 'LiteGUI end to end')} (`{result.get('base_model')}`)", "",
             f"`benchmarks/litegui_pipeline.py`: ATG, the pool, exploration, verification over the app's HTTP API, then "
             f"per training seed SFT, guided OPD and OPD + MD-GRPO on the verified pool; live episodes of "
             f"{len(tasks)} families ({', '.join(tasks)}), {s.get('eval_episodes')} each on world seeds "
             f"{s.get('eval_world_seed')} + i, at most {s.get('eval_max_steps')} steps ({ending}), the same for the "
             "start and every run, paired episode by episode; the outcome is the environment's success. The bar: a "
             "gain above twice the spread over seeds with every seed's paired 95% interval above 0.", "",
             *_recipes_table(result), "", _pool_line(result.get("pool", {}))]
    return lines + [""] + _provenance(result)


def _pool_line(pool: dict) -> str:
    v = pool.get("verification", {})
    per_task = "; ".join(f"{t} {c['atg']} of {c['atg'] + c['oracle_seed']}" for t, c in pool.get("per_task", {}).items())
    return (f"Pool: {pool.get('episodes')} episodes, ATG fills {_f(pool.get('atg_share'))} of it without oracle "
            f"seeding ({per_task}). Verification recovers {v.get('recovered_other_solutions', '-')} of the oracle's "
            f"{v.get('hidden_other_solutions', '-')} other solutions on {v.get('multi_solution_steps', '-')} "
            f"multi-solution steps (recall {_f(v.get('recall_other_solutions'))}).")


def render_rl_visited(result: dict) -> list[str]:
    lines = ["## RL runs on the training states they drew and on those they did not", "",
             "Greedy success of the start and of each run's final model on the training states the run's trainer "
             "drew (visited) and on as many training states it never drew (unvisited), paired step by step.", "",
             "| run | B x steps | lr | visited: start -> after | paired | unvisited: start -> after | paired |",
             "|---|---|---|---|---|---|---|"]
    for r in result.get("rows", []):
        cells = []
        for k in ("visited", "unvisited"):
            p = r[k]["paired"]
            cells += [f"{_f(r[k]['before'])} -> {_f(r[k]['after'])} (n {r[k]['n']})",
                      _interval(p)]
        lines.append(f"| {r['run']} | {r['batch_size']} x {r['max_steps']} | {r['lr']:g} | " + " | ".join(cells) + " |")
    return lines + [""] + _provenance(result)


def render_rl_room(result: dict) -> list[str]:
    if "models" in result:
        return _render_rl_room_models(result)
    lines = [f"## What a GRPO group can learn from, by sampling temperature (`{result.get('model')}`)", "",
             f"{result.get('states')} training states of data seed {result.get('train_data_seed')} (where the tiny RL "
             f"recipes draw theirs), {result.get('k')} samples each: a state is informative when its samples are "
             "neither all right nor all wrong (under a 0/1 step reward only such a group has a non-zero advantage).", "",
             "| temperature | greedy | pass@k | pass@k - greedy | informative states | sample success |",
             "|---|---|---|---|---|---|"]
    for r in result.get("rows", []):
        lines.append(f"| {r['temperature']:g} | {_f(r['greedy'])} | {_f(r['pass_at_k'])} | {_f(r['room'])} | "
                     f"{_f(r['informative'])} | {_f(r['sample_success'])} |")
    return lines + [""] + _provenance(result)


def _render_rl_room_models(result: dict) -> list[str]:
    """``rl_room.py --models``: several models on the same training states, each after the first paired with it."""
    models = result["models"]
    first = next(iter(models))
    lines = [f"## {result.get('title', 'Greedy and sampled success on RL training states')}", "",
             f"{result.get('states')} training states of data seed {result.get('train_data_seed')}, {result.get('k')} "
             f"samples each, {result.get('max_new_tokens')} new tokens; every model after `{first}` is paired with it "
             "state by state (difference and 95% interval).", "",
             "| model | temperature | greedy | greedy vs first | sample success | sample success vs first | pass@k | "
             "informative states |", "|---|---|---|---|---|---|---|---|"]
    for name, m in models.items():
        versus = m.get("versus_first", {})
        for r in m["rows"]:
            g, smp = versus.get("greedy"), versus.get("sample_success", {}).get(str(r["temperature"]))
            lines.append(f"| {name} (`{m['model']}`) | {r['temperature']:g} | {_f(r['greedy'])} | {_pair_cell(g)} | "
                         f"{_f(r['sample_success'])} | {_pair_cell(smp)} | {_f(r['pass_at_k'])} | {_f(r['informative'])} |")
    return lines + [""] + _provenance(result)


def render_rl_fit(result: dict) -> list[str]:
    """``benchmarks/rl_fit.py``: an RL recipe trained on a small fixed set of states, measured on them and on others."""
    fit, rest = result["fit"], result["rest"]
    lines = [f"## Can RL fit a few training states? `{result.get('recipe')}` on {fit.get('states')} states "
             f"(`{result.get('start')}`)", "",
             f"The first {result.get('episodes_per_task')} episodes of every family of data seed "
             f"{result.get('train_data_seed')} are the only training states ({result.get('batch_size')} states x "
             f"{result.get('steps')} steps, training seed {result.get('seed')}); each run is measured on those states "
             f"(fit) and on {rest.get('states')} states of the other episodes (rest), greedy and {fit.get('k')} samples "
             f"a state at temperature {result.get('temperature'):g}, each state paired with the start (difference and "
             "95% interval).", "",
             "| run | lr | train min | peak RSS GB | set | greedy | greedy vs start | sample success | "
             "sample success vs start |", "|---|---|---|---|---|---|---|---|---|"]
    temperature = str(float(result.get("temperature", 1.0)))
    for name in fit["models"]:
        run = result.get("runs", {}).get(name, {})
        cost = ([f"{run['lr']:g}", f"{run['wall_s'] / 60:.1f}", f"{run['peak_rss_mb'] / 1024:.2f}"] if run
                else ["-", "-", "-"])
        for part, measured in (("fit", fit), ("rest", rest)):
            m = measured["models"][name]
            (r,) = m["rows"]
            versus = m.get("versus_first", {})
            lines.append(f"| {name} | {' | '.join(cost)} | {part} | {_f(r['greedy'])} | {_pair_cell(versus.get('greedy'))} | "
                         f"{_f(r['sample_success'])} | {_pair_cell(versus.get('sample_success', {}).get(temperature))} |")
    return lines + [""] + _provenance(result)


def _pair_cell(p: dict | None) -> str:
    return _interval(p) if p else "-"


def render_base_agent_vision_levers(result: dict) -> list[str]:
    lines = [f"## Base-agent vision levers (validation seeds {', '.join(map(str, result.get('seeds', [])))})", "",
             f"Each setting: the recipe's grounding stages from scratch, {result.get('locate_steps')} steps on one "
             f"labelled button then {result.get('grounding_steps')} on sim grounding screens; scored on validation "
             "grounding screens, greedy.", "",
             "| setting | vision tower (blocks x width) | text (layers x width) | visual tokens per screen | seed "
             "| grounding | screens | train min | peak RSS GB |", "|---|---|---|---|---|---|---|---|---|"]
    for name, entry in result.get("settings", {}).items():
        lever, wall, rss = entry["lever"], _get(entry, "training", "wall_s"), _get(entry, "training", "peak_rss_mb")
        for seed, s in sorted(entry.get("validation", {}).items()):
            lines.append(f"| {name} | {lever['vision']} | {lever['text']} | {lever['max_visual_tokens']} | {seed} | "
                         f"{_f(_get(s, 'grounding', 'step_success'))} | {_get(s, 'grounding', 'n')} | "
                         f"{_f(wall / 60 if wall else None, 1)} | {_f(rss / 1024 if rss else None, 1)} |")
    runs = {}  # the settings each command measured (older results name one command for all)
    for name, entry in result.get("settings", {}).items():
        if entry.get("command"):
            runs.setdefault((entry["command"], entry.get("commit")), []).append(name)
    if not runs:
        return lines + [""] + _provenance(result)
    return lines + [""] + [f"{', '.join(names)}: `{command}` (commit {commit})." for (command, commit), names
                            in runs.items()]


def render_computersd_signal(result: dict) -> list[str]:
    title = result.get("title", "Where ComputerSD's update comes from")
    lines = [f"## {title} (training logs)", "",
             "Per run: the share of optimiser steps with a group whose episodes' outcomes differ (only there is the "
             "GRPO advantage non-zero), the median gradient norm on those steps and on the others (OPSD times its "
             "coefficient, and KL, alone), the OPSD term before its coefficient, the share of executed steps the "
             "analyzer judged good, and training episodes' success in the first and last half of the steps.", "",
             "| run | steps | outcome steps | grad norm, outcome | grad norm, others | OPSD | good steps | "
             "success 1st half | success 2nd half |", "|---|---|---|---|---|---|---|---|---|"]
    for name, r in result.get("runs", {}).items():
        rs = r["rollout_success"]
        lines.append(f"| {name} | {r['steps']} | {_f(r['outcome_steps'], 2)} | {_f(r['grad_norm_outcome'], 4)} | "
                     f"{_f(r['grad_norm_silent'], 4)} | {_f(r['opsd_loss'], 4)} | {_f(r['good_steps'], 2)} | "
                     f"{_f(rs['first_half'])} | {_f(rs['last_half'])} |")
    mix = result.get("analyzer_mix") or []
    if mix:
        lines += ["", "The ground-truth analyzer on a model's own live steps (seven multi-step families, world seeds 500+, "
                  "16 steps at most):", "",
                  "| model | temperature | episodes | steps | consistent | effective | both (+1) | neither | success |",
                  "|---|---|---|---|---|---|---|---|---|"]
        lines += [f"| {m['model']} | {m['temperature']:g} | {m['episodes']} | {m['steps']} | {_f(m['consistent'], 2)} | "
                  f"{_f(m['effective'], 2)} | {_f(m['good'], 2)} | {_f(m['neither'], 2)} | {_f(m['success'])} |" for m in mix]
    return lines + [""] + _provenance(result)


def render_computersd_async(result: dict) -> list[str]:
    a, b = result.get("cpus", ["?", "?"])
    alone = result.get("alone", {})
    lines = [f"## ComputerSD asynchronous pipeline on separated cores (CPUs {a} and {b})", "",
             f"`{result.get('recipe')}`, {result.get('steps')} optimiser steps per run, the first "
             f"{result.get('warmup')} left out, {_f(result.get('trajectories_per_batch'), 0)} trajectories per batch. "
             f"{str(result.get('definition', '')).capitalize()}." + (" CPUs A and B are SMT siblings of one core."
                                                                    if result.get("smt_siblings") else ""), "",
             "| run | overrides | traj/h | rollout s | analysis s | rescore s | update s | wait s | staleness | dropped |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in result.get("runs", {}).items():
        lines.append(f"| {name} | `{' '.join(r.get('overrides', []))}` | {_f(r.get('traj_per_hour'), 0)} | "
                     f"{_f(r.get('rollout_s'), 2)} | {_f(r.get('analysis_s'), 3)} | {_f(r.get('rescore_s'), 2)} | "
                     f"{_f(r.get('update_s'), 2)} | {_f(r.get('wait_s'), 2)} | {_f(r.get('staleness_mean'), 2)} | "
                     f"{_f(r.get('dropped'), 0)} |")
    share, target = result.get("async_share_of_bound"), result.get("target_share", 0.8)
    lines += ["", f"Alone on one core, one thread: rollout side {_f(alone.get('rollout_side_s'), 2)} s per batch "
              f"({_f(alone.get('rollout_side_traj_per_hour'), 0)} traj/h), trainer {_f(alone.get('trainer_s'), 2)} s "
              f"({_f(alone.get('trainer_traj_per_hour'), 0)} traj/h); pipeline bound "
              f"{_f(result.get('bound_traj_per_hour'), 0)} traj/h. Async pinned / sync ({result.get('sync_baseline')}): "
              f"{_f(result.get('async_over_sync'), 2)}x; async pinned reaches {_f(share and 100 * share, 0)}% of the "
              f"bound (target {100 * target:.0f}%: {'met' if share is not None and share >= target else 'not met'}); "
              f"async threads on the same two cores: {_f((result.get('threads_share_of_bound') or 0) * 100, 0)}%."]
    return lines + [""] + _provenance(result)


def render_grounding_errors(result: dict) -> list[str]:
    lines = [f"## Where grounding misses land (validation seeds {', '.join(map(str, result.get('seeds', [])))})", "",
             "Shares of all grounding screens; a miss's distance is from its point to the target's box, in screen "
             "pixels (512 x 512 screens).", "",
             "| model | screens | success | miss: another element | miss: no element | miss: unparsed / wrong type "
             "| median miss distance (px) | misses within 32 px |", "|---|---|---|---|---|---|---|---|"]
    for r in result.get("rows", []):
        m = r["misses"]
        other = sum(m.get(k, 0.0) for k in ("unparsed", "wrong type", "no point"))
        lines.append(f"| `{r['model']}` | {r['screens']} | {_f(r['success'])} | {_f(m.get('another element', 0.0))} | "
                     f"{_f(m.get('no element', 0.0))} | {_f(other)} | {_f(r['median_miss_px'], 1)} | "
                     f"{_f(r['misses_within_32px'])} |")
    return lines + [""] + _provenance(result)


def _pair(row: dict | None) -> str:
    return " / ".join(_f(_get(row, k)) for k in ("multi_solution", "single_solution")) if row else "-"


def render_litegui_teacher(result: dict) -> list[str]:
    lines = ["## LiteGUI's guidance-reading teachers", "",
             "Following: greedy, how often the model writes the reference it is given in the privileged block "
             "(multi-solution steps: the last of A*_t, not the recorded first choice; multi / single-solution "
             "steps), beside the student's rate (it never saw the block). Divergence: per-token KL(student || "
             "guided teacher) on the student's own samples (temperature 1) of single-solution steps, over samples "
             "the world accepts and over the others before and after the first token where they leave the "
             "reference.", "",
             "| teacher | data seed | student | follows: student | follows: teacher | teacher, no block | "
             "KL accepted | KL rejected, before leaving | KL after leaving | teacher entropy after | samples "
             "| accepted share |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    commands = []
    for label, seeds in result.get("teachers", {}).items():
        for seed, row in sorted(seeds.items()):
            f, d = row.get("following", {}), row.get("divergence", {})
            lines.append(f"| {label} | {seed.removeprefix('seed')} | `{row.get('student')}` | "
                         f"{_pair(f.get('base agent: follows the given reference'))} | "
                         f"{_pair(f.get('teacher: follows the given reference'))} | "
                         f"{_pair(f.get('teacher: step success, no block'))} | {_f(d.get('KL, accepted samples'))} | "
                         f"{_f(d.get('KL, rejected samples, before leaving the reference'))} | "
                         f"{_f(d.get('KL, rejected samples, after leaving it'))} | "
                         f"{_f(d.get('teacher entropy after leaving it'))} | {d.get('samples', '-')} | "
                         f"{_f(d.get('accepted share'))} |")
            commands += [c for c in (row.get("following_command"), row.get("divergence_command")) if c]
    return lines + ["", "Commands: " + "; ".join(f"`{c}`" for c in dict.fromkeys(commands))
                    + f" (commit {result.get('commit', '?')})."]


def render_litegui_opd_flips(result: dict) -> list[str]:
    kind = "held-out" if result.get("eval_seed") == 7 else "validation"
    lines = [f"## Where guided OPD gains and loses, beside its teacher ({kind} data seed {result.get('eval_seed')})", "",
             f"On the {result.get('n')} trained-family steps of the LiteGUI table (student {_f(result.get('student'))}): "
             "the steps each run lost (the student right, the run wrong) and gained, and how often the guidance-reading "
             f"teacher `{result.get('teacher')}` is right on them with the block (all of A*_t) and without it "
             f"(on all steps: {_f(result.get('teacher block, all steps'))} with, "
             f"{_f(result.get('teacher no block, all steps'))} without).", "",
             "| run | lost | teacher with block, on lost | teacher without, on lost | gained | "
             "teacher with block, on gained | teacher without, on gained |", "|---|---|---|---|---|---|---|"]
    for run, r in result.get("runs", {}).items():
        lines.append(f"| {run} | {r['lost']} | {_f(r.get('teacher block on lost'))} | {_f(r.get('teacher no block on lost'))} "
                     f"| {r['gained']} | {_f(r.get('teacher block on gained'))} | {_f(r.get('teacher no block on gained'))} |")
    return lines + [""] + _provenance(result)


def render_ccpo_casc(result: dict) -> list[str]:
    seed = result.get("eval_seed")
    lines = [f"## CCPO's CASC at {result.get('history', '3AO')}: semi-online RL from each mode's own start "
             f"({'held-out' if seed == 7 else 'validation'} data seed {seed})", "",
             f"Each CASC mode trains {result.get('rl_steps')} semi-online steps (training data seed "
             f"{result.get('train_data_seed')}, {len(result.get('seeds', []))} training seed"
             f"{'' if len(result.get('seeds', [])) == 1 else 's'}) from the start SFT'd with that "
             "history scheme; greedy held-out step success of the same steps before and after. Against off: the "
             "starts paired step by step, the trained models by their means (within the two spreads or not); "
             "tokens and step time are those of the training runs (tokens per step sample; Qwen2.5-VL: the image "
             "tokens its default pixel budget spends on the same images); won / lost: held-out steps the run got right "
             "that its start missed and the reverse, mean per seed. Settings: "
             f"`{' '.join(result.get('overrides', [])) or 'the recipe'}`.", "",
             "| CASC | split | n | start | start - off (paired) | after (mean +- spread) | gain | paired per seed | "
             "won / lost | after - off (two spreads) | tokens (vs off) | Qwen2.5-VL image tokens (vs off) | step s (speed) | "
             "match rate | train reward first -> last quarter | train min | RSS GB |", "|" + "---|" * 17]
    for casc, row in result.get("rows", {}).items():
        vs = row.get("vs_off", {})
        for split, r in row["splits"].items():
            pairs = "; ".join(_interval(p) for p in r["paired"].values())
            d, sv = vs.get(split), row.get("start_vs_off") if split == "steps_unseen_seeds" else None
            start_off = _pair_cell(sv)
            after_off = f"{d['after']:+.3f} ({_f(d['spreads'])})" if d else "-"
            moved = f"{r['won']:.1f} / {r['lost']:.1f}" if "won" in r else "-"
            tok = f"{row['tokens']:.0f}" + (f" ({vs['tokens']:+.0%})" if vs else "")
            qwen = f"{row['qwen25vl_image_tokens']:.0f}" + (f" ({vs['qwen25vl_image_tokens']:+.0%})" if vs else "")
            step = f"{row['step_s']:.2f}" + (f" ({vs['speed']:.2f}x)" if vs else "")
            lines.append(f"| {casc} | {split} | {r['n']} | {_f(r['base'])} | {start_off} | {_f(r['mean'])} +- "
                         f"{_f(r['spread'])} | {r['gain']:+.3f} | {pairs} | {moved} | {after_off} | {tok} | {qwen} | {step} | "
                         f"{_f(row['match_rate'])} | {_f(row.get('reward_first'))} -> {_f(row.get('reward_last'))} | "
                         f"{_f(row['wall_min'], 1)} | {_f(row['peak_rss_gb'], 2)} |")
    return lines + [""] + _provenance(result)


def _within(row: dict) -> str:
    """The across-seeds-at-each-step r's of a Pearson row (``-`` before the benchmark computed them, or at 1 seed)."""
    within = row.get("pearson_within_step") or {}
    if not any(v.get("points") for v in within.values()):
        return "-"
    return " / ".join(f"{_f(within[s]['r'])}" for s in ("online", "progress") if s in within) + \
        f" ({max(v['points'] for v in within.values())} points)"


def render_guilibra_kl_pearson(result: dict) -> list[str]:
    start = result["start"]
    lines = ["## GUI-Libra: does offline step accuracy over checkpoints predict online success? (held-out data seed "
             f"{result.get('eval_seed')})", "",
             f"`recipes/guilibra_kl_grpo_sngs_tiny.yaml` per condition (training data seed {result.get('train_data_seed')}), "
             f"evaluated greedily at the start and every {result.get('eval_every')} steps: offline step success on "
             f"{result.get('samples')} held-out recorded steps, online success and milestone progress on "
             f"{result.get('episodes')} live episodes per family. Pearson's r pools every point of every seed, "
             f"the start included (start: offline {_f(start['offline'])}, success {_f(start['online'])}, progress "
             f"{_f(start.get('progress'))}).", "",
             "| condition | seeds | points | offline (final) | success (final) | progress (final) | r (offline, success) | "
             "r (offline, progress) | r across seeds at each step (success / progress) | train + eval min | "
             "peak RSS GB |", "|" + "---|" * 11]
    for name, row in result.get("conditions", {}).items():
        cells = [f"{_f(row['final'][s]['mean'])} +- {_f(row['final'][s]['spread'])}" if s in row["final"] else "-"
                 for s in ("offline", "online", "progress")]
        lines.append(f"| {name} | {row['seeds']} | {row['points']} | {' | '.join(cells)} | "
                     f"{_f(row['pearson'].get('online'))} | {_f(row['pearson'].get('progress'))} | {_within(row)} | "
                     f"{_f(row['wall_min'], 1)} | "
                     f"{_f(row.get('peak_rss_gb'), 2)} |")
    return lines + [""] + _provenance(result)


def render_infigui_subgoal(result: dict) -> list[str]:
    seed = result.get("eval_seed")
    data = f"held-out data seed {seed}" if seed == 7 else f"validation data seed {seed}"
    title = result.get("title", "Where InfiGUI-R1's sub-goal reward can act")
    lines = [f"## {title} ({data})", "",
             "`benchmarks/infigui_subgoal.py`: greedy answers on the held-out multi-step steps of the trained families; "
             "S (0..10) is the ground-truth sub-goal scorer's score of the reasoning against the step's recorded "
             f"sub-goal; a step names its sub-goal when S >= {result.get('named_at')}. Paired columns: against the "
             "first row, step by step (mean difference and 95% interval)."
             + (f" Each answer has room for {result['max_new_tokens']} new tokens." if result.get("max_new_tokens", 96) != 96
                else ""), "",
             "| model | steps | step success | S / 10 | names its sub-goal | success when named | success otherwise | "
             "failed steps that named it | success vs first | S / 10 vs first |", "|" + "---|" * 10]

    for label, r in result.get("models", {}).items():
        lines.append(f"| {label} (`{r['model']}`) | {r['steps']} | {_f(r['success'])} | {_f(r['subgoal'])} | "
                     f"{_f(r['named'])} | {_f(r['success_named'])} | {_f(r['success_not_named'])} | "
                     f"{_f(r['failed_named'])} | {_pair_cell(r.get('paired', {}).get('success'))} | "
                     f"{_pair_cell(r.get('paired', {}).get('subgoal'))} |")
    g = result.get("groups")
    if g:
        lines += ["", f"Where the term reaches RLOO's advantage (`--groups`): `{g['model']}` samples {g['group_size']} "
                  f"completions on each of {g['states']} training states, scored by the recipe's reward.", "",
                  "| groups with any advantage | sub-goal term varies | only it varies | its share of the advantage "
                  "mass | samples whose advantage sign it sets |", "|---|---|---|---|---|",
                  f"| {_f(g['moving'])} | {_f(g['subgoal_varies'])} | {_f(g['subgoal_alone'])} | "
                  f"{_f(g['subgoal_share'])} | {_f(g['sign_set'])} |"]
        if g.get("by_label"):
            lines += ["", "| kind of state | drawn | groups with any advantage | mean reward |", "|---|---|---|---|",
                      *(f"| {label} | {r['states']} | {_f(r['moving'])} | {_f(r['mean_reward'])} |"
                        for label, r in g["by_label"].items())]
    return lines + [""] + _provenance(result)


def render_rl_action_types(result: dict) -> list[str]:
    labels = " / ".join(result.get("labels", []))
    models = result.get("models", {})
    twinned = any(r.get("twinned") for r in models.values())  # error-escape steps: each has a back-on-track twin
    lines = [f"## Predicted action types on {result.get('split')} ({labels}; data seed {result.get('seed')})", "",
             "`benchmarks/rl_action_types.py`: greedy answers per model; success by the ground truth's action type "
             "(successes / steps)." + (" *Escaped*: the step's own target (undo the mistake); *as if no mistake*: "
                                       "the target of its back-on-track twin, the action the mistake replaced."
                                       if twinned else ""), ""]
    if twinned:
        lines += ["| model | steps | step success | escaped | as if no mistake | success by true type | predicted types |",
                  "|---|---|---|---|---|---|---|"]
    else:
        lines += ["| model | steps | step success | success by true type | predicted types |", "|---|---|---|---|---|"]
    for label, r in models.items():
        twin = r.get("twinned", {})
        types = ", ".join(f"{k} {v}" for k, v in r["predicted"].items())
        truth = ", ".join(f"{k} {v['success']}/{v['steps']}" for k, v in sorted(r.get("truth", {}).items()))
        middle = f"{_f(twin.get('escaped'))} | {_f(twin.get('as_if_no_mistake'))} | " if twinned else ""
        lines.append(f"| {label} (`{r['model']}`) | {r['steps']} | {_f(r['success'])} | {middle}{truth} | {types} |")
    return lines + [""] + _provenance(result)


RENDERERS = {"guilibra_kl_pearson": render_guilibra_kl_pearson, "litegui_teacher": render_litegui_teacher, "base_agent": render_base_agent, "grounding_errors": render_grounding_errors, "base_agent_levers": render_base_agent_levers,
             "base_agent_vision_levers": render_base_agent_vision_levers,
             "rl_recipes": render_rl_recipes, "rl_visited": render_rl_visited,
             "rl_room": render_rl_room, "computersd_async": render_computersd_async,
             "litegui_opd": render_rl_recipes, "litegui_opd_flips": render_litegui_opd_flips,
             "litegui_pipeline": render_litegui_pipeline, "rl_fit": render_rl_fit, "computersd_signal": render_computersd_signal,
             "ccpo_casc": render_ccpo_casc, "infigui_subgoal": render_infigui_subgoal, "ccpo_casc_validation": render_ccpo_casc,
             "rl_action_types": render_rl_action_types}


#: The question every method issue asks, one row per method: the run of its paper's pipeline, the split its paper
#: targets, and whether it beats its starting point. (method, run, results file stem, recipe key, split, versus):
#: ``versus`` is ``base`` (the run's start is the table's base model) or ``own_start`` (a second stage against each
#: seed's own first-stage model). The figures are read from the JSON; only the choice of rows is written here.
SCOREBOARD = (
    ("LiteGUI", "guided OPD (Most-Matched) then MD-GRPO, SFT-free", "litegui_opd",
     "litegui_mdgrpo_tiny[after OPD, 200 steps]", "multi_solution", "base"),
    ("LiteGUI", "guided OPD (Most-Matched) then MD-GRPO, SFT-free", "litegui_opd",
     "litegui_mdgrpo_tiny[after OPD, 200 steps]", "single_solution", "base"),
    ("LiteGUI", "guided OPD (Most-Matched) alone", "litegui_opd", "litegui_opd_tiny[most_matched]", "single_solution",
     "base"),
    ("ComputerSD", "online GRPO + value-gated OPSD", "rl_recipes_computersd", "computersd_history_tiny",
     "episode_success", "base"),
    ("GUI-Libra", "KL-GRPO + SNGS over its ASFT model", "rl_recipes_guilibra", "guilibra_kl_grpo_sngs_tiny[from ASFT]",
     "steps_unseen_seeds", "own_start"),
    ("InfiGUI-R1", "RLOO (sub-goal reward, own recovery states) over its reasoning-injection model",
     "rl_recipes_infigui_ri", "infigui_rloo_tiny[after RI, own recovery]", "steps_unseen_seeds", "own_start"),
    ("CCPO / UI-S1", "semi-online RL over its 3AO start", "rl_recipes_ccpo",
     "ccpo_semi_online_tiny[3AO-off 40 steps max_new_tokens=80 optim.lr=2e-5]", "steps_unseen_seeds", "base"),
    ("CCPO / UI-S1", "semi-online RL over its 3AO start", "rl_recipes_ccpo",
     "ccpo_semi_online_tiny[3AO-off 40 steps max_new_tokens=80 optim.lr=2e-5]", "episode_success", "base"),
)


#: How a scoreboard row names a start the JSON records only by the path it had on the machine that trained it.
SCOREBOARD_STARTS = {"rl_recipes_ccpo": "its 3AO start (`recipes/ccpo_start_tiny.yaml`, CASC off)"}


def render_scoreboard(results: Path) -> list[str]:
    """The rows of :data:`SCOREBOARD` whose results file exists; a row naming a recipe or split its file lacks is an
    error (the page would otherwise drop it silently)."""
    lines = []
    for method, run, stem, recipe, split, versus in SCOREBOARD:
        path = results / f"{stem}.json"
        if not path.is_file():
            continue
        result = json.loads(path.read_text())
        r = _get(result, "recipes", recipe, "splits", split)
        if r is None or (versus == "own_start" and "own_start" not in r):
            raise SystemExit(f"render_results: SCOREBOARD names {recipe!r} / {split} ({versus}), which "
                             f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} lacks")
        if versus == "own_start":
            own = r["own_start"]
            start, gain, spread, paired, passes = own["start"], own["gain"], own["spread"], own["paired"], own["passes"]
            frm = "each seed's first-stage model"
        else:
            start, gain, spread, paired, passes = r["base"], r["gain"], r["spread"], r["paired"], r["passes"]
            frm = SCOREBOARD_STARTS.get(stem, f"`{result.get('base_model')}`")
        pairs = "; ".join(_interval(p) for p in paired.values())
        lines.append(f"| {method} | {run} | {frm} | {SPLIT_NAMES.get(split, split)} | {r['n']} | {_f(start)} | {_f(r['mean'])} | "
                     f"{gain:+.3f} +- {_f(spread)} | {pairs} | {'pass' if passes else 'miss'} | `results/{stem}.json` |")
    if not lines:
        return []
    return ["## Does each method beat its starting point? (held-out data seed 7)", "",
            "Each paper's pipeline from the history-reading agent, on the split its paper targets: 3 training seeds, "
            "the gain of their mean over the start, the spread over seeds, and each seed's paired 95% interval on the "
            "same steps or episodes. The bar: a gain above twice the spread with every seed's interval above 0. The "
            "full tables, ablations and the measured reasons are below and in the linked files.", "",
            "| method | run | from | split | n | start | after (mean) | gain +- spread | paired per seed | bar | "
            "results |", "|" + "---|" * 11, *lines, ""]


def render() -> str:
    lines = ["# Results", "",
             "Rendered by `python scripts/render_results.py` from `results/*.json`, which the benchmarks write; "
             "do not edit by hand (a test checks this page is up to date).", "", *render_scoreboard(RESULTS)]
    for path in sorted(RESULTS.glob("*.json")) if RESULTS.is_dir() else []:
        renderer = by_prefix(RENDERERS, path.stem)  # e.g. base_agent_levers_600, rl_recipes_asft_validation
        if renderer is None:
            raise SystemExit(f"render_results: no renderer for {path.relative_to(ROOT)}; add one to RENDERERS")
        lines += renderer(json.loads(path.read_text())) + [""]
    return "\n".join(lines).rstrip() + "\n"


def render_docs() -> dict[Path, str]:
    """Every doc under docs/ with a rendered block, as it renders now (``scripts/render_findings.py``)."""
    def load(stem: str) -> dict:
        path = RESULTS / f"{stem}.json"
        if not path.is_file():
            raise SystemExit(f"render_results: a doc quotes {path.relative_to(ROOT)}, which does not exist")
        return json.loads(path.read_text())

    return {doc: fill(doc.read_text(), load) for doc in sorted((ROOT / "docs").glob("*.md"))
            if doc != PAGE and BLOCK.search(doc.read_text())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/results.md or a rendered block is out of date")
    args = parser.parse_args()
    pages = {PAGE: render(), **render_docs()}
    if args.check:
        stale = [p for p, text in pages.items() if not p.is_file() or p.read_text() != text]
        for p in stale:
            print(f"{p.relative_to(ROOT)} is out of date: run python scripts/render_results.py", file=sys.stderr)
        return 1 if stale else 0
    for p, text in pages.items():
        if not p.is_file() or p.read_text() != text:
            p.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
