"""The figures quoted in the prose of the method docs, rendered from ``results/*.json`` (called by
``scripts/render_results.py``, which also checks them).

A doc quotes a result between two markers::

    <!-- rendered from results/ccpo_casc.json -->
    ... (replaced on every render) ...
    <!-- end rendered -->

and the text between them is what ``FINDINGS[<file stem>]`` makes of that JSON: the sentences that carry numbers
(and the words that depend on them, such as "within the two spreads") are written here, once, so a rerun of the
benchmark changes the doc with the table.
"""

from __future__ import annotations

import math
import re

U, M, S = "steps_unseen_seeds", "multi_solution", "single_solution"
SPLIT_NAMES = {U: "all multi-step steps", M: "multi-solution", S: "single-solution", "episode_success": "live episode success",
              "episode_progress": "live episode progress", "steps_unseen_tasks": "unseen-family steps",
              "recovery": "error-recovery steps",
              "error_escape": "error-escape steps", "back_on_track": "back-on-track steps",
              "own_recovery": "recovery steps at the start's own mistakes", "own_error_escape": "their error-escape steps",
              "own_back_on_track": "their back-on-track steps"}


def _s(x: float) -> str:
    return f"{x:+.3f}"


def _u(x: float) -> str:
    return f"{x:.3f}"


def _interval(p: dict) -> str:
    return f"{_s(p['diff'])} [{_s(p['low'])}, {_s(p['high'])}]"


def clears_bar(row: dict) -> bool:
    """The issues' bar: a gain above twice the spread over seeds, every seed's paired interval above 0."""
    return row["gain"] > 2 * row["spread"] and all(p["low"] > 0 for p in row["paired"].values())


def _against(d: float, spreads: float) -> str:
    return "within" if abs(d) <= spreads else ("above" if d > 0 else "below")


def _gain_text(row: dict) -> str:
    return f"{_s(row['gain'])} +- {_u(row['spread'])}"


def ccpo_casc(result: dict) -> list[str]:
    """``benchmarks/ccpo_casc.py``: accuracy with CASC, compression and speed, the gain of semi-online RL over
    each start, and the measured diagnosis (steps won / lost, training reward)."""
    rows = result["rows"]
    seeds = sorted({r["seeds"] for r in rows.values()})
    starts = "; ".join(f"{c.upper()} {_interval(rows[c]['start_vs_off'])}" for c in ("max", "min"))

    def after(c: str) -> str:
        vs = rows[c]["vs_off"]
        return f"{c.upper()}: " + ", ".join(
            f"{SPLIT_NAMES[s]} {_s(vs[s]['after'])} ({_against(vs[s]['after'], vs[s]['spreads'])} the two spreads, "
            f"{_u(vs[s]['spreads'])})" for s in (U, M, S))

    def fewer(x: float) -> str:
        return f"{abs(x):.0%} {'fewer' if x < 0 else 'more'}"

    vmax, vmin = rows["max"]["vs_off"], rows["min"]["vs_off"]
    gains = "; ".join(f"{'CASC off' if c == 'off' else c.upper()} " + ", ".join(
        f"{_gain_text(r['splits'][s])} on {SPLIT_NAMES[s]}" for s in (U, M, S)) for c, r in rows.items())
    above = "; ".join(f"{'CASC off' if c == 'off' else c.upper()} " + ", ".join(
        f"{sum(p['low'] > 0 for p in r['splits'][s]['paired'].values())}/{len(r['splits'][s]['paired'])} on "
        f"{SPLIT_NAMES[s]}" for s in (U, M, S)) for c, r in rows.items())
    passed = [f"{c} on {SPLIT_NAMES[s]}" for c, r in rows.items() for s in (U, M, S) if clears_bar(r["splits"][s])]
    moved = [r["splits"][U]["won"] + r["splits"][U]["lost"] for r in rows.values()]
    off = rows["off"]["splits"][U]
    reward = "; ".join(f"{c} {_u(r['reward_first'])} -> {_u(r['reward_last'])}" for c, r in rows.items())
    rises = [c for c, r in rows.items() if r["reward_last"] > r["reward_first"]]
    match = [r["match_rate"] for r in rows.values()]
    n = off["n"]
    return [
        f"Training seeds: {', '.join(map(str, result['seeds']))} ({' / '.join(map(str, seeds))} per mode), "
        f"{result['rl_steps']} semi-online steps each, greedy on the same {n} held-out steps of data seed "
        f"{result['eval_seed']}.",
        "",
        f"- **Accuracy with CASC.** The starts SFT'd on cropped histories against the full-screenshot start (paired, "
        f"all steps): {starts}. After RL, against CASC off: {after('max')}; {after('min')}.",
        f"- **Compression and speed.** The tiny model's own prompt tokens: MAX {vmax['tokens']:+.1%}, MIN "
        f"{vmin['tokens']:+.1%} against CASC off. At Qwen2.5-VL's default pixel budget the same images need "
        f"{fewer(vmax['qwen25vl_image_tokens'])} (MAX) and {fewer(vmin['qwen25vl_image_tokens'])} (MIN) image tokens. "
        f"Training steps run at {vmax['speed']:.2f}x (MAX) and {vmin['speed']:.2f}x (MIN) the speed of CASC off.",
        f"- **Semi-online RL against its start** (gain +- spread over seeds): {gains}. Seeds whose paired 95% "
        f"interval lies above 0: {above}. "
        + ("Clearing the bar (a gain above twice the spread, every seed's paired interval above 0): "
           + ", ".join(passed) + "." if passed else
           "No mode clears the bar (a gain above twice the spread, every seed's paired interval above 0) on any split."),
        f"- **Steps moved.** Per seed, a run flips the outcome of {min(moved):.1f}-{max(moved):.1f} of the {n} "
        f"held-out steps (CASC off: {off['won']:.1f} won, {off['lost']:.1f} lost, mean per seed).",
        f"- **Training reward**, first and last quarter of the logged steps: {reward} "
        f"({'rises for ' + ', '.join(rises) if rises else 'no mode rises'}). The sampled action matches the "
        f"recorded one on {min(match):.0%}-{max(match):.0%} of the step samples (the match rate).",
    ]


def _against_reference(result: dict, is_reference, compared=lambda name: True) -> list[str]:
    """Each row of an ``rl_recipes.py`` table: its gain over the start on every split it was scored on; then every
    other row for which ``compared(name)`` against the reference row (the first for which ``is_reference(name)``):
    the difference of the means after training beside the two spreads."""
    recipes = result["recipes"]
    lines = []
    for name, row in recipes.items():
        verdicts = {True: "clears the bar", False: "misses the bar", None: "no verdict from one seed"}
        parts = [f"{SPLIT_NAMES.get(s, s)} (n={r['n']}, start {_u(r['base'])}) "
                 + (f"{_gain_text(r)}, {verdicts[r['passes']]}" if row["seeds"] > 1 else
                    f"{_interval(next(iter(r['paired'].values())))} (paired 95% interval), {verdicts[None]}")
                 for s, r in row["splits"].items()]
        if name == "prompt_only":  # rl_recipes --prompt-only: an evaluation, greedy, so one run stands for every seed
            lines.append("- `prompt_only` (no training: the start with ComputerSD's fixed guidance in every prompt; "
                         "greedy, so one run stands for every seed): "
                         + "; ".join(p.replace(f", {verdicts[None]}", "") for p in parts) + ".")
            continue
        lines.append(f"- `{name}` ({row['seeds']} seed{'s' if row['seeds'] != 1 else ''}, {row['wall_min']:.1f} min training, "
                     f"{row['peak_rss_gb']:.2f} GB): " + "; ".join(parts) + ".")
        own = [f"{SPLIT_NAMES.get(s, s)} (its starts {_u(o['start'])}) "
               + (f"{_gain_text(o)}, {verdicts[o['passes']]}" if row["seeds"] > 1 else
                  f"{_interval(next(iter(o['paired'].values())))} (paired 95% interval)")
               for s, r in row["splits"].items() if (o := r.get("own_start"))]
        if own:
            lines.append(f"- `{name}` over each seed's own start: " + "; ".join(own) + ".")
    ref = next((n for n in recipes if is_reference(n)), None)
    for name, row in recipes.items():
        if ref is None or name in (ref, "prompt_only") or not compared(name):
            continue
        parts = []
        for s, r in row["splits"].items():
            other = recipes[ref]["splits"].get(s)
            if other is None:
                continue
            d, spreads = r["mean"] - other["mean"], r["spread"] + other["spread"]
            if s == "episode_success" and abs(d) * r["n"] < 0.99:  # success moves by whole episodes (the means
                parts.append(f"{SPLIT_NAMES[s]} {_s(d)} (less than one episode of {r['n']})")  # are rounded: 0.99)
            elif row["seeds"] < 2 or recipes[ref]["seeds"] < 2:
                parts.append(f"{SPLIT_NAMES.get(s, s)} {_s(d)} (one seed: no spread to compare with)")
            else:
                parts.append(f"{SPLIT_NAMES.get(s, s)} {_s(d)} ({_against(d, spreads)} the two spreads, {_u(spreads)})")
        if parts:
            lines.append(f"- `{name}` against `{ref}`, after training: " + "; ".join(parts) + ".")
    return lines


def rl_recipes_ccpo(result: dict) -> list[str]:
    """``benchmarks/rl_recipes.py`` from the CCPO 3AO start: semi-online with the binary and the distance
    coordinate reward, offline GRPO, on held-out steps and live episodes; each variant against semi-online RL
    with the binary reward (the first row whose name has neither "distance" nor "offline")."""
    return _against_reference(result, lambda n: "distance" not in n and "offline" not in n)


def litegui_pipeline(result: dict) -> list[str]:
    """``benchmarks/litegui_pipeline.py``: each condition on live episodes against the start, then guided OPD and
    OPD + MD-GRPO (the SFT-free pipeline) against SFT on the same verified pool; the pool's sources."""
    pool = result.get("pool", {})
    lines = _against_reference(result, lambda n: n == "sft")
    if pool.get("episodes"):
        shares = ", ".join(f"{t} {c['atg']} of {c['atg'] + c['oracle_seed']}" for t, c in pool["per_task"].items())
        v = pool.get("verification", {})
        lines.append(f"- The pool: {pool['episodes']} episodes, {pool['atg']} from ATG (the agent proposing, the "
                     f"ground-truth verifier voting) and {pool['oracle_seed']} oracle-seeded: ATG fills "
                     f"{_u(pool['atg_share'])} of it without oracle seeding ({shares}). Verification recovers "
                     f"{v.get('recovered_other_solutions')} of the oracle's {v.get('hidden_other_solutions')} other "
                     f"solutions on {v.get('multi_solution_steps')} multi-solution steps (recall "
                     f"{_u(v.get('recall_other_solutions'))}).")
    endings = result.get("endings", {})
    if "base" in endings:
        def how(e: dict) -> str:
            return (f"{_n(e['success'])} successes, {_n(e['finished_early'])} finish actions before the goal, "
                    f"{_n(e['step_cap'])} at the step cap, {_n(e['other'])} ended by the world after another action")

        runs = "; ".join(f"`{n}` {how(e)}, {_n(e['won'])} won and {_n(e['lost'])} lost against the start"
                         for n, e in endings.items() if n != "base")
        lines.append(f"- How the {endings['base']['episodes']} live episodes end: the start {how(endings['base'])}; "
                     f"runs (mean over seeds): {runs}.")
    return lines + ["- The paper's claim: guided OPD then MD-GRPO, without SFT, gives the best agent (LiteGUI's "
                    "SFT-free pipeline)."]


def _n(x: float) -> str:
    """A count, or a mean of counts over seeds (one decimal)."""
    return f"{x:g}" if float(x).is_integer() else f"{x:.1f}"


def rl_recipes_asft(result: dict) -> list[str]:
    """``benchmarks/rl_recipes.py`` runs of GUI-Libra's ASFT and plain SFT on the same data and budget; ASFT
    against plain SFT (the row whose name says "plain SFT")."""
    return _against_reference(result, lambda n: "plain SFT" in n)


def rl_recipes_computersd(result: dict) -> list[str]:
    """``benchmarks/rl_recipes.py`` runs of ComputerSD and its baselines from its start; each against outcome-only
    GRPO (the row tagged ``[grpo]``), with the paper's ordering beside them."""
    return [*_against_reference(result, lambda n: n.endswith("[grpo]")),
            "- The paper's ordering: ComputerSD > GRPO + PRM > outcome-only GRPO > prompt-only."]


def rl_recipes_computersd_gates(result: dict) -> list[str]:
    """ComputerSD's gate ablations (``opsd_gate=``, ``guidance=fixed``): each against the recipe as written (the
    sigmoid value gate and the analyzer's guidance, the untagged row), with the paper's Tables 3 and 4 beside them."""
    return [*_against_reference(result, lambda n: "[" not in n),
            "- The paper (Qwen3-VL-8B-Thinking on OSWorld-Verified, its Tables 3 and 4): ComputerSD 39.8 > outcome-only "
            "GRPO 37.9 > no gate 36.6 > reverse gate 36.0 > hard gate 35.2 > fixed guidance 35.0; every ablation "
            "falls below outcome-only GRPO."]


def rl_recipes_infigui(result: dict) -> list[str]:
    """``benchmarks/rl_recipes.py`` runs of InfiGUI-R1's RLOO with error-recovery states from the agent's own
    mistakes and its ablations; each ablation against the full recipe (the row tagged ``[own recovery]``)."""
    return [*_against_reference(result, lambda n: n.endswith("[own recovery]")),
            "- The paper reports no ablation of either part; it credits sub-goal guidance and the error-recovery "
            "scenarios together for its trajectory results (AndroidControl)."]


def rl_recipes_infigui_ri(result: dict) -> list[str]:
    """InfiGUI-R1's two stages: the reasoning-injection SFT seeds against the agent, RLOO from each seed's SFT model
    (its own start) and the RLOO ablations against the full recipe (the RLOO row whose name ends "own recovery]")."""
    rloo = lambda n: n.startswith("infigui_rloo")  # noqa: E731
    return [*_against_reference(result, lambda n: rloo(n) and n.endswith("own recovery]"), compared=rloo),
            "- InfiGUI-R1's bar for its RLOO stage is the reasoning-injection model it starts from (the lines \"over "
            "each seed's own start\"); the paper reports no ablation of the sub-goal reward or the recovery states."]


def infigui_subgoal(result: dict) -> list[str]:
    """``benchmarks/infigui_subgoal.py``: how often each model names its step's sub-goal, its success with and
    without it, and (after the first) the paired change in both."""
    lines = []
    for label, r in result["models"].items():
        failed = 1 - r["success"]
        line = (f"- `{label}`: names the step's sub-goal on {r['named']:.0%} of {r['steps']} steps (mean S / 10 "
                f"{_u(r['subgoal'])}); step success {_u(r['success_named'])} when it does, {_u(r['success_not_named'])} "
                f"when it does not" + (f"; of its failed steps ({failed:.0%} of all) {1 - r['failed_named']:.0%} come "
                                        "with a wrong or missing sub-goal" if r["failed_named"] is not None else ""))
        if "paired" in r:
            line += (f"; against `{next(iter(result['models']))}`: success {_interval(r['paired']['success'])}, "
                     f"S / 10 {_interval(r['paired']['subgoal'])} (paired 95% intervals)")
        lines.append(line + ".")
    g = result.get("groups")
    if g:
        lines.append(f"- In training (`{g['model']}`, groups of {g['group_size']} on {g['states']} of the recipe's "
                     f"states): {g['moving']:.0%} of groups have any advantage; the sub-goal term varies in "
                     f"{g['subgoal_varies']:.0%} and is the only part that varies in {g['subgoal_alone']:.0%}; it "
                     f"carries {g['subgoal_share']:.0%} of the advantage mass and sets the advantage's sign of "
                     f"{g['sign_set']:.0%} of the samples." + (" By kind of state: " + "; ".join(
                         f"{label.replace('_', '-')} {r['states']} drawn, {r['moving']:.0%} with any advantage, mean "
                         f"reward {_u(r['mean_reward'])}" for label, r in g["by_label"].items()) + "."
                         if g.get("by_label") else ""))
    return lines


def rl_action_types(result: dict) -> list[str]:
    """``benchmarks/rl_action_types.py`` on error-escape steps: per condition (labels ``<condition>-seedN`` averaged
    over their seeds, mean +- spread), how often the output escapes the mistake and how often it does the action
    the mistake replaced instead, and its share of key presses."""
    import statistics

    groups: dict[str, list[dict]] = {}
    for label, r in result["models"].items():
        groups.setdefault(re.sub(r"-seed\d+$", "", label), []).append(r)
    lines = []
    for name, rows in groups.items():
        def stat(values: list[float]) -> str:
            spread = f" +- {statistics.stdev(values):.3f}" if len(values) > 1 else ""
            return f"{statistics.mean(values):.3f}{spread}"

        twins = [r["twinned"] for r in rows if "twinned" in r]
        keys = [r["predicted"].get("key", 0) / r["steps"] for r in rows]
        seeds = f" ({len(rows)} seeds)" if len(rows) > 1 else ""
        line = f"- `{name}`{seeds}: step success {stat([r['success'] for r in rows])}"
        if twins:  # on error-escape steps step success is escaping
            line = (f"- `{name}`{seeds}: escapes {stat([t['escaped'] for t in twins])}, does the replaced action "
                    f"instead (as if no mistake) {stat([t['as_if_no_mistake'] for t in twins])}")
        finish = [r["truth"]["terminate"] for r in rows if "terminate" in r.get("truth", {})]
        if finish and not twins:  # how often it finishes where the task is done (a collapse away from it shows here)
            line += (f", on the {finish[0]['steps']} steps whose answer is the finish action "
                     f"{stat([f['success'] / f['steps'] for f in finish])}")
        lines.append(line + f"; answers with a key press {stat(keys)} of {rows[0]['steps']} steps.")
    return lines


def litegui_opd(result: dict) -> list[str]:
    """``benchmarks/litegui_opd.py`` runs: each against the student, MD-GRPO over each seed's own stage-1 model, and
    every row against LiteGUI's SFT-free pipeline (MD-GRPO after Most-Matched OPD, the row tagged ``[after OPD, N
    steps]``; else SFT on the OPD budget, ``[sft]``), with the paper's ordering beside them."""
    names = list(result["recipes"])
    pipeline = next((n for n in names if re.search(r"\[after OPD, \d+ steps\]$", n)), None)
    return [*_against_reference(result, lambda n: n == pipeline if pipeline else n.endswith("[sft]")),
            "- The paper's ordering (its Table 4): SFT falls below the off-the-shelf model and SFT then RL stays below "
            "it; guided OPD beats plain OPD, and guided OPD then MD-GRPO (the SFT-free pipeline) is best."]


def litegui_opd_kl(result: dict) -> list[str]:
    """Guided OPD's reverse-KL forms (``loss=``): each against the recipe's full-vocabulary form (the row tagged
    ``[most_matched]``), every row against the student."""
    return [*_against_reference(result, lambda n: n.endswith("[most_matched]")),
            "- The paper gives the loss as GKD's reverse KL over the vocabulary and, in its eq. 12, as a sum over the "
            "sampled tokens; it reports no comparison of the two (the top-k form is ComputerSD's code's)."]


def rl_recipes_guilibra(result: dict) -> list[str]:
    """``benchmarks/rl_recipes.py`` runs of GUI-Libra's KL-GRPO + SNGS from each seed's ASFT model (``--start``):
    against the base agent and against each seed's own ASFT start; ablations against the row tagged
    ``[from ASFT]``."""
    return [*_against_reference(result, lambda n: n.endswith("[from ASFT]")),
            "- The paper's pipeline: ASFT, then KL-regularised GRPO with SNGS, each stage raising its start."]


def computersd_signal(result: dict) -> list[str]:
    """``benchmarks/computersd_signal.py``: per run, how often the outcome term had a signal and how large the update
    was with it and without it."""
    lines = []
    for name, r in result["runs"].items():
        loud, quiet = r["grad_norm_outcome"], r["grad_norm_silent"]
        ratio = f", {loud / quiet:.0f}x" if loud and quiet else ""
        rs = r["rollout_success"]
        analyzer = "no analyzer (OPSD off)"
        if r["good_steps"] is not None:
            gate = f" (mean value gate {r['gate']:.2f})" if r.get("gate") is not None else ""
            analyzer = f"the analyzer judged {_opt_pct(r['good_steps'])} of executed steps good{gate}"
        lines.append(f"- `{name}`: {r['outcome_steps']:.0%} of its {r['steps']} steps had a group whose outcomes "
                     f"differ; median gradient norm {_opt_u(loud)} on those, {_opt_u(quiet)} on the others{ratio}; "
                     f"{analyzer}; training episodes' success {_u(rs['first_half'])} in the first half of the steps, "
                     f"{_u(rs['last_half'])} in the second.")
    for m in result.get("analyzer_mix") or []:
        lines.append(f"- `{m['model']}`'s own live steps at temperature {m['temperature']:g} ({m['steps']} steps of "
                     f"{m['episodes']} episodes): effective {m['effective']:.0%}, consistent {m['consistent']:.0%}, "
                     f"both (a +1 step) {m['good']:.0%}, neither {m['neither']:.0%}; episode success {_u(m['success'])}.")
    return lines


def _opt_u(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def _opt_pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def rl_recipes_reasoning_injection(result: dict) -> list[str]:
    """InfiGUI-R1's reasoning-injection SFT from the agent, one run a setting: each against the agent before it (no
    reference row: the settings are pilots of the data and the budget, compared by their gains)."""
    return [*_against_reference(result, lambda n: False),
            "- InfiGUI-R1 puts reasoning injection before RLOO; the bar for a start of RLOO here is the agent's own step "
            "success before it."]


def rl_recipes_computersd_validation(result: dict) -> list[str]:
    """The OPSD-coefficient pilot on validation data: each coefficient against the recipe's own (the untagged row)."""
    return _against_reference(result, lambda n: "[" not in n)


def _within_step(within: dict) -> str:
    """The r across seeds at each step (the trend the seeds share removed), when there were seeds to compare."""
    if not any(v.get("points") for v in within.values()):
        return ""
    rs = ", ".join(f"{'success' if side == 'online' else side} {_opt(v['r'])}" for side, v in within.items())
    return (f" Across seeds at the same step (each point minus its step's mean, {max(v['points'] for v in within.values())}"
            f" points): r {rs}.")


def _fisher_ordering(a: float, b: float, n1: int, n2: int) -> tuple[float, float, str]:
    """Whether r ``a`` (with KL, ``n1`` points) exceeds r ``b`` (without, ``n2``): the Fisher z difference of two
    independent r's, its 95% half-width, and the verdict on the paper's ordering."""
    half = 1.96 * math.sqrt(1 / max(n1 - 3, 1) + 1 / max(n2 - 3, 1))
    dz = math.atanh(max(min(a, 0.999), -0.999)) - math.atanh(max(min(b, 0.999), -0.999))
    return dz, half, ("comes out" if dz > half else "does not come out" if a <= b else
                      "points the paper's way, inside the noise")


def guilibra_kl_pearson(result: dict) -> list[str]:
    """``benchmarks/guilibra_kl_pearson.py``: Pearson's r between offline step success and each online score over
    the checkpoints, with and without KL, and whether the paper's ordering (higher with KL) comes out."""
    conditions = result["conditions"]
    lines = []
    for name, row in conditions.items():
        rs = ", ".join(f"{'success' if side == 'online' else side} {_opt(row['pearson'].get(side))}"
                       for side in ("online", "progress"))
        fin = row["final"]
        lines.append(f"- `{name}` ({row['seeds']} seed{'s' if row['seeds'] > 1 else ''}, {row['points']} points): "
                     f"r(offline, online) {rs}; at its last checkpoint offline {_u(fin['offline']['mean'])}, "
                     f"success {_u(fin['online']['mean'])}"
                     + (f", progress {_u(fin['progress']['mean'])}" if "progress" in fin else "") + "."
                     + _within_step(row.get("pearson_within_step") or {}))
    if "kl" in conditions and "no_kl" in conditions:
        n1, n2 = conditions["kl"]["points"], conditions["no_kl"]["points"]
        for side, label in (("online", "success"), ("progress", "progress")):
            a, b = conditions["kl"]["pearson"].get(side), conditions["no_kl"]["pearson"].get(side)
            if a is None or b is None:
                lines.append(f"- With {label} as the online score, r is undefined for one condition (a constant side).")
                continue
            dz, half, verdict = _fisher_ordering(a, b, n1, n2)
            lines.append(f"- With {label} as the online score: r {_s(a)} with KL against {_s(b)} without (Fisher z "
                         f"difference {dz:+.2f}, 95% half-width {half:.2f} at {n1} and {n2} points); the paper's "
                         f"ordering (0.89 against 0.63) {verdict}.")
            wa, wb = (conditions[c].get("pearson_within_step", {}).get(side) or {} for c in ("kl", "no_kl"))
            if wa.get("r") is not None and wb.get("r") is not None and wa.get("steps") and wb.get("steps"):
                # centring on each step's mean spends a degree of freedom per step: n - steps + 1 plays the role of n
                e1, e2 = wa["points"] - wa["steps"] + 1, wb["points"] - wb["steps"] + 1
                dz, half, verdict = _fisher_ordering(wa["r"], wb["r"], e1, e2)
                lines.append(f"- Across seeds at each step, {label}: r {_s(wa['r'])} with KL against {_s(wb['r'])} "
                             f"without (Fisher z difference {dz:+.2f}, 95% half-width {half:.2f} at {e1} and {e2} "
                             f"effective points: the points less one per step, plus one); the ordering {verdict}.")
    return lines


def rl_room(result: dict) -> list[str]:
    """``benchmarks/rl_room.py --models``: each model's greedy and sampled success on the RL training states, and
    every model after the first against it, paired state by state."""
    models = result["models"]
    first = next(iter(models))
    lines = []
    for name, m in models.items():
        for r in m["rows"]:
            line = (f"- `{name}` at temperature {r['temperature']:g}: greedy {_u(r['greedy'])}, sample success "
                    f"{_u(r['sample_success'])}, pass@{r['k']} {_u(r['pass_at_k'])} on {r['n']} training states")
            versus = m.get("versus_first")
            if versus:
                line += (f"; against `{first}`: greedy {_interval(versus['greedy'])}, sample success "
                         f"{_interval(versus['sample_success'][str(r['temperature'])])} (paired 95% intervals)")
            lines.append(line + ".")
    return lines


def rl_fit(result: dict) -> list[str]:
    """``benchmarks/rl_fit.py``: each run on the states it trained on and on states of other episodes, against the
    start, paired state by state."""
    t = str(float(result.get("temperature", 1.0)))
    fit, rest = result["fit"]["models"], result["rest"]["models"]
    start = next(iter(fit))
    lines = []
    for name, run in result.get("runs", {}).items():
        parts = []
        for label, models in (("on the %d states it trained on" % result["fit"]["states"], fit),
                              ("on %d states of other episodes" % result["rest"]["states"], rest)):
            (r0,), (r,) = models[start]["rows"], models[name]["rows"]
            vs = models[name]["versus_first"]
            parts.append(f"{label} sample success {_u(r0['sample_success'])} -> {_u(r['sample_success'])} "
                         f"({_interval(vs['sample_success'][t])}), greedy {_u(r0['greedy'])} -> {_u(r['greedy'])} "
                         f"({_interval(vs['greedy'])})")
        lines.append(f"- `{name}` ({result['batch_size']} states x {result['steps']} steps at lr {run['lr']:g}, "
                     f"{run['wall_s'] / 60:.1f} min, {run['peak_rss_mb'] / 1024:.2f} GB): " + "; ".join(parts)
                     + " (paired 95% intervals).")
    return lines


def _opt(x: float | None) -> str:
    return "undefined" if x is None else _s(x)


FINDINGS = {"ccpo_casc": ccpo_casc, "rl_recipes_ccpo": rl_recipes_ccpo, "rl_recipes_asft": rl_recipes_asft,
            "rl_recipes_computersd": rl_recipes_computersd, "rl_recipes_computersd_gates": rl_recipes_computersd_gates,
            "rl_recipes_infigui": rl_recipes_infigui,
            "rl_recipes_infigui_ri": rl_recipes_infigui_ri,
            "rl_recipes_guilibra": rl_recipes_guilibra, "rl_recipes_reasoning_injection": rl_recipes_reasoning_injection,
            "rl_recipes_computersd_validation": rl_recipes_computersd_validation, "computersd_signal": computersd_signal,
            "infigui_subgoal": infigui_subgoal, "rl_action_types": rl_action_types, "litegui_opd": litegui_opd, "litegui_opd_kl": litegui_opd_kl,
            "guilibra_kl_pearson": guilibra_kl_pearson, "rl_room": rl_room,
            "rl_fit": rl_fit, "litegui_pipeline": litegui_pipeline}
BLOCK = re.compile(r"(<!-- rendered from results/(?P<stem>[\w-]+)\.json -->\n)(?P<body>.*?)(<!-- end rendered -->)",
                   re.DOTALL)


def by_prefix(table: dict, stem: str):
    """The entry of ``table`` under the longest prefix of ``stem`` cut at underscores (``rl_recipes_asft_validation``
    finds ``rl_recipes_asft``, else ``rl_recipes``); None when no prefix is known.

    >>> by_prefix({"a": 1, "a_b": 2}, "a_b_c"), by_prefix({"a": 1}, "b_a")
    (2, None)
    """
    parts = stem.split("_")
    return next((table[k] for k in ("_".join(parts[:i]) for i in range(len(parts), 0, -1)) if k in table), None)


def fill(text: str, load) -> str:
    """``text`` with every rendered block replaced by what its JSON renders to (``load(stem)`` reads
    ``results/<stem>.json``); an unknown stem stops with one line naming it."""
    def replace(m: re.Match) -> str:
        stem = m.group("stem")
        findings = by_prefix(FINDINGS, stem)
        if findings is None:
            raise SystemExit(f"render_results: no findings renderer for results/{stem}.json; add one to FINDINGS")
        return m.group(1) + "\n".join(findings(load(stem))) + "\n" + m.group(4)

    return BLOCK.sub(replace, text)
