"""docs/results.md is rendered from results/*.json, and is up to date."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import render_results  # noqa: E402


def _page_of(tmp_path, monkeypatch, name: str, result: dict) -> str:
    """docs/results.md as rendered from ``result`` alone, written as ``results/<name>.json``."""
    (tmp_path / f"{name}.json").write_text(json.dumps(result))
    monkeypatch.setattr(render_results, "RESULTS", tmp_path)
    return render_results.render()


def _rl_row(mean: float, split: str, n: int, base: float, wall_min: float, peak_rss_gb: float) -> dict:
    """One recipe's row of an ``rl_recipes.py`` table: 3 seeds, spread 0.01, one seed's paired interval."""
    return {"seeds": 3, "wall_min": wall_min, "peak_rss_gb": peak_rss_gb, "splits": {split: {
        "n": n, "base": base, "mean": mean, "gain": round(mean - base, 4), "spread": 0.01, "passes": False,
        "paired": {"seed0": {"diff": 0.0, "low": -0.01, "high": 0.01}}}}}


def test_results_page_is_up_to_date():
    run = subprocess.run([sys.executable, "scripts/render_results.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_every_figure_comes_from_the_json(tmp_path, monkeypatch):
    result = {"command": "python benchmarks/base_agent.py", "commit": "abc", "data_seed": 7, "models": {
        "m/new": {"trained_families": {"step_success": 0.6123, "n": 1000}, "unseen_families": {"step_success": 0.25, "n": 400},
                  "grounding": {"step_success": 0.8, "n": 300}, "type_steps": {"step_success": 0.5, "n": 90},
                  "unchanged_output": {"same_output": 0.1}}}, "paired": {}}
    page = _page_of(tmp_path, monkeypatch, "base_agent", result)
    assert "| multi-step steps, trained families | >= 0.55 | 0.612 |" in page
    assert "| sim episode success, trained families | >= 0.10 | - |" in page  # not measured: no figure
    assert "commit abc" in page


def test_the_litegui_pipeline_renders_its_table_pool_and_recall(tmp_path, monkeypatch):
    split = {"n": 105, "base": 0.1143, "mean": 0.1333, "spread": 0.0095, "gain": 0.019, "passes": False,
             "per_seed": {"seed0": 0.1238, "seed1": 0.1429},
             "paired": {"seed0": {"diff": 0.0124, "low": -0.03, "high": 0.049}, "seed1": {"diff": 0.0286, "low": -0.01,
                                                                                       "high": 0.067}}}
    result = {"title": "LiteGUI end to end from the history-reading agent", "base_model": "checkpoints/h",
              "command": "python benchmarks/litegui_pipeline.py --seeds 0 1", "commit": "abc", "versus_trl": {},
              "recipes": {"opd_mdgrpo": {"seeds": 2, "wall_min": 12.5, "peak_rss_gb": 2.25,
                                         "splits": {"episode_success": split}}},
              "setting": {"tasks": ["web.shopping", "mobile.add_contact"], "eval_episodes": 15,
                          "eval_world_seed": 9500000, "eval_max_steps": 16, "auto_terminate": False},
              "pool": {"episodes": 16, "atg_share": 0.1875, "per_task": {
                  "web.shopping": {"atg": 3, "oracle_seed": 5}, "mobile.add_contact": {"atg": 0, "oracle_seed": 8}},
                  "verification": {"multi_solution_steps": 40, "hidden_other_solutions": 50,
                                   "recovered_other_solutions": 15, "recall_other_solutions": 0.3}}}
    page = _page_of(tmp_path, monkeypatch, "litegui_pipeline", result)  # found by its name's prefix
    assert "## LiteGUI end to end from the history-reading agent (`checkpoints/h`)" in page
    assert "2 families (web.shopping, mobile.add_contact), 15 each on world seeds 9500000 + i" in page
    assert "an episode ends on the agent's finish action" in page
    assert ("| opd_mdgrpo | episode_success | 105 | 0.114 | 0.133 +- 0.009 | +0.019 | +0.012 [-0.030, +0.049]; "
            "+0.029 [-0.010, +0.067] | miss | 12.5 | 2.25 |") in page
    assert ("Pool: 16 episodes, ATG fills 0.188 of it without oracle seeding (web.shopping 3 of 8; "
            "mobile.add_contact 0 of 8). Verification recovers 15 of the oracle's 50 other solutions on 40 "
            "multi-solution steps (recall 0.300).") in page
    assert "`python benchmarks/litegui_pipeline.py --seeds 0 1` (commit abc)" in page


def test_a_rendered_block_in_a_doc_quotes_its_json_and_only_it():
    import pytest
    from render_findings import fill

    def row(mean: float, spread: float) -> dict:
        return {"seeds": 3, "wall_min": 5.25, "peak_rss_gb": 1.5, "splits": {"episode_success": {
            "n": 105, "base": 0.0667, "mean": mean, "gain": round(mean - 0.0667, 4), "spread": spread, "passes": False,
            "paired": {"seed0": {"diff": 0.02, "low": -0.01, "high": 0.05}}}}}

    result = {"recipes": {"r[t]": row(0.0953, 0.01), "r[offline]": row(0.0553, 0.005)}}
    doc = ("# T\n\nprose stays\n<!-- rendered from results/rl_recipes_ccpo.json -->\nstale 0.999\n"
           "<!-- end rendered -->\nmore prose\n")
    out = fill(doc, lambda stem: result)
    assert out.startswith("# T\n\nprose stays\n<!-- rendered from results/rl_recipes_ccpo.json -->\n")
    assert "0.999" not in out and out.endswith("<!-- end rendered -->\nmore prose\n")
    assert ("- `r[t]` (3 seeds, 5.2 min training, 1.50 GB): live episode success (n=105, start 0.067) +0.029 +- 0.010, "
            "misses the bar.") in out
    assert ("- `r[offline]` against `r[t]`, after training: live episode success -0.040 (below the two spreads, "
            "0.015).") in out
    assert fill(out, lambda stem: result) == out  # rendering twice changes nothing
    with pytest.raises(SystemExit, match="no findings renderer for results/nope.json"):
        fill("<!-- rendered from results/nope.json -->\n<!-- end rendered -->", lambda stem: result)


def test_computersd_findings_read_each_run_against_outcome_only_grpo():
    from render_findings import rl_recipes_computersd

    def row(mean: float) -> dict:
        return _rl_row(mean, "episode_progress", n=105, base=0.2, wall_min=20.0, peak_rss_gb=2.0)

    lines = rl_recipes_computersd({"recipes": {"computersd_history_tiny": row(0.25),
                                               "computersd_history_tiny[grpo]": row(0.21)}})
    assert lines[2] == ("- `computersd_history_tiny` against `computersd_history_tiny[grpo]`, after training: live "
                        "episode progress +0.040 (above the two spreads, 0.020).")
    assert lines[-1].startswith("- The paper's ordering: ComputerSD > GRPO + PRM")
    one = {"computersd_history_tiny": row(0.25) | {"seeds": 1}, "computersd_history_tiny[grpo]": row(0.21) | {"seeds": 1}}
    lines = rl_recipes_computersd({"recipes": one})
    assert ("(1 seed, 20.0 min training, 2.00 GB): live episode progress (n=105, start 0.200) +0.000 [-0.010, +0.010] "
            "(paired 95% interval), no verdict from one seed.") in lines[0]
    assert lines[2].endswith("live episode progress +0.040 (one seed: no spread to compare with).")


def test_computersd_signal_renders_in_the_page_and_in_prose(tmp_path, monkeypatch):
    from render_findings import computersd_signal

    result = {"command": "python benchmarks/computersd_signal.py", "commit": "abc", "runs": {"cs/seed0": {
        "steps": 40, "outcome_steps": 0.275, "grad_norm_outcome": 0.12, "grad_norm_silent": 0.003, "opsd_loss": 0.0105,
        "good_steps": 0.15, "gate": 0.5, "rollout_success": {"first_half": 0.062, "last_half": 0.023}}}}
    assert computersd_signal(result) == [
        "- `cs/seed0`: 28% of its 40 steps had a group whose outcomes differ; median gradient norm 0.1200 on those, "
        "0.0030 on the others, 40x; the analyzer judged 15% of executed steps good (mean value gate 0.50); training "
        "episodes' success 0.062 in the first half of the steps, 0.023 in the second."]
    assert "| cs/seed0 | 40 | 0.28 | 0.1200 | 0.0030 | 0.0105 | 0.15 | 0.062 | 0.023 |" in _page_of(
        tmp_path, monkeypatch, "computersd_signal", result)


def test_the_kl_pearson_findings_state_the_papers_ordering_from_the_json():
    from render_findings import guilibra_kl_pearson

    def row(r_success, r_progress):
        return {"seeds": 1, "points": 6, "pearson": {"online": r_success, "progress": r_progress},
                "final": {"offline": {"mean": 0.7}, "online": {"mean": 0.1}, "progress": {"mean": 0.4}}}

    lines = guilibra_kl_pearson({"conditions": {"kl": row(0.2, 0.9), "no_kl": row(None, 0.5)}})
    assert lines[0] == ("- `kl` (1 seed, 6 points): r(offline, online) success +0.200, progress +0.900; at its last "
                        "checkpoint offline 0.700, success 0.100, progress 0.400.")
    assert "r(offline, online) success undefined" in lines[1]
    assert lines[2] == "- With success as the online score, r is undefined for one condition (a constant side)."
    assert lines[3] == ("- With progress as the online score: r +0.900 with KL against +0.500 without (Fisher z "
                        "difference +0.92, 95% half-width 1.60 at 6 and 6 points); the paper's ordering (0.89 against "
                        "0.63) points the paper's way, inside the noise.")
    many = {"kl": row(0.2, 0.9) | {"points": 40}, "no_kl": row(0.3, 0.5) | {"points": 40}}
    assert guilibra_kl_pearson({"conditions": many})[3].endswith("comes out.")  # z 0.92 > 1.96 * sqrt(2 / 37)
    assert guilibra_kl_pearson({"conditions": many})[2].endswith("does not come out.")
    within = {"online": {"r": 0.25, "points": 15, "steps": 5}, "progress": {"r": None, "points": 15, "steps": 5}}
    assert guilibra_kl_pearson({"conditions": {"kl": row(0.2, 0.9) | {"pearson_within_step": within}}})[0].endswith(
        "progress 0.400. Across seeds at the same step (each point minus its step's mean, 15 points): r success +0.250, "
        "progress undefined.")
    both = {"kl": row(0.2, 0.9) | {"pearson_within_step": within},
            "no_kl": row(0.3, 0.5) | {"pearson_within_step": within | {"online": {"r": -0.5, "points": 15, "steps": 5}}}}
    lines = guilibra_kl_pearson({"conditions": both})
    assert lines[3] == ("- Across seeds at each step, success: r +0.250 with KL against -0.500 without (Fisher z "
                        "difference +0.80, 95% half-width 0.98 at 11 and 11 effective points: the points less one per "
                        "step, plus one); the ordering points the paper's way, inside the noise.")
    assert not any(line.startswith("- Across seeds at each step, progress") for line in lines)  # r undefined


def test_render_findings_doctests():
    import doctest

    import render_findings

    assert doctest.testmod(render_findings).failed == 0


def test_error_escape_findings_average_each_condition_over_its_seeds(tmp_path, monkeypatch):
    from render_findings import rl_action_types

    def row(escaped: float, ignored: float, keys: int) -> dict:
        return {"model": "m", "steps": 100, "success": escaped, "truth": {}, "predicted": {"click": 100 - keys, "key": keys},
                "twinned": {"steps": 100, "escaped": escaped, "as_if_no_mistake": ignored}}

    result = {"command": "python benchmarks/rl_action_types.py", "commit": "abc", "seed": 7, "split": "r.jsonl",
              "labels": ["error_escape"], "models": {"start": row(0.5, 0.1, 20), "rl-seed0": row(0.4, 0.2, 10),
                                                     "rl-seed1": row(0.3, 0.2, 12)}}
    assert rl_action_types(result) == [
        "- `start`: escapes 0.500, does the replaced action instead (as if no mistake) 0.100; answers with a key press "
        "0.200 of 100 steps.",
        "- `rl` (2 seeds): escapes 0.350 +- 0.071, does the replaced action instead (as if no mistake) 0.200 +- 0.000; "
        "answers with a key press 0.110 +- 0.014 of 100 steps."]
    assert "| rl-seed1 (`m`) | 100 | 0.300 | 0.300 | 0.200 |  | click 88, key 12 |" in _page_of(
        tmp_path, monkeypatch, "rl_action_types_x", result)


def test_action_type_rows_of_ordinary_steps_show_success_by_true_type(tmp_path, monkeypatch):
    from render_findings import rl_action_types

    truth = {"terminate": {"steps": 40, "success": 2, "type_ok": 3}, "click": {"steps": 60, "success": 30, "type_ok": 55}}
    result = {"command": "python benchmarks/rl_action_types.py", "commit": "abc", "seed": 5, "split": "t.jsonl",
              "labels": ["correct"], "models": {"opsd": {"model": "m", "steps": 100, "success": 0.32, "truth": truth,
                                                         "predicted": {"click": 95, "key": 5}}}}
    assert rl_action_types(result) == ["- `opsd`: step success 0.320, on the 40 steps whose answer is the finish "
                                       "action 0.050; answers with a key press 0.050 of 100 steps."]
    page = _page_of(tmp_path, monkeypatch, "rl_action_types_x", result)
    assert "| opsd (`m`) | 100 | 0.320 | click 30/60, terminate 2/40 | click 95, key 5 |" in page
    assert "escaped" not in page.lower()


def test_prompt_only_reads_as_an_evaluation_not_a_one_seed_run():
    from render_findings import rl_recipes_computersd

    split = {"n": 105, "base": 0.2, "mean": 0.1, "gain": -0.1, "spread": 0.0, "passes": None,
             "paired": {"seed0": {"diff": -0.1, "low": -0.15, "high": -0.05}}}
    lines = rl_recipes_computersd({"recipes": {
        "computersd_history_tiny[grpo]": {"seeds": 3, "wall_min": 14.0, "peak_rss_gb": 4.0, "splits": {
            "episode_progress": split | {"passes": False, "spread": 0.01}}},
        "prompt_only": {"seeds": 1, "wall_min": 1.0, "peak_rss_gb": 5.0, "splits": {"episode_progress": split}}}})
    assert lines[1] == ("- `prompt_only` (no training: the start with ComputerSD's fixed guidance in every prompt; greedy, "
                        "so one run stands for every seed): live episode progress (n=105, start 0.200) -0.100 "
                        "[-0.150, -0.050] (paired 95% interval).")
    assert not any("`prompt_only` against" in line for line in lines)


def test_litegui_findings_read_each_row_against_the_sft_free_pipeline():
    from render_findings import litegui_opd

    def row(mean: float) -> dict:
        return _rl_row(mean, "steps_unseen_seeds", n=1301, base=0.7, wall_min=2.0, peak_rss_gb=1.0)

    recipes = {"md[after OPD, 200 steps, single-solution reward]": row(0.695), "md[after OPD, 200 steps]": row(0.71),
               "t[sft]": row(0.70)}
    lines = litegui_opd({"recipes": recipes})
    assert ("- `md[after OPD, 200 steps, single-solution reward]` against `md[after OPD, 200 steps]`, after training: "
            "all multi-step steps -0.015 (within the two spreads, 0.020).") in lines
    assert any(line.startswith("- `t[sft]` against `md[after OPD, 200 steps]`") for line in lines)
    del recipes["md[after OPD, 200 steps]"]  # no pipeline row: SFT is the reference
    assert any(line.startswith("- `md[after OPD, 200 steps, single-solution reward]` against `t[sft]`")
               for line in litegui_opd({"recipes": recipes}))


def test_reasoning_injection_pilots_read_each_against_the_agent_only():
    """One-seed pilots of reasoning injection: each row's paired interval over the agent, split names in words, and
    no row set up as a reference for the others (they are settings, not ablations of one recipe)."""
    from render_findings import rl_recipes_reasoning_injection

    split = {"n": 648, "base": 0.221, "mean": 0.204, "gain": -0.017, "spread": 0.0, "passes": None,
             "paired": {"seed0": {"diff": -0.017, "low": -0.054, "high": 0.02}}}
    row = {"seeds": 1, "wall_min": 10.9, "peak_rss_gb": 1.59, "splits": {"steps_unseen_tasks": split}}
    lines = rl_recipes_reasoning_injection({"recipes": {"ri": row, "ri[compact]": row}})
    assert lines[0] == ("- `ri` (1 seed, 10.9 min training, 1.59 GB): unseen-family steps (n=648, start 0.221) -0.017 "
                        "[-0.054, +0.020] (paired 95% interval), no verdict from one seed.")
    assert len(lines) == 3 and not any("against" in line for line in lines)


def test_infigui_pipeline_compares_the_rloo_ablations_with_the_full_rloo_recipe_only():
    """Reasoning injection then RLOO in one table: the RLOO ablations are read against the full RLOO row (not against
    the SFT row), and the SFT rows are not compared with the RLOO reference."""
    from render_findings import rl_recipes_infigui_ri

    def row(mean):
        split = {"n": 1301, "base": 0.7, "mean": mean, "gain": round(mean - 0.7, 4), "spread": 0.01, "passes": False,
                 "paired": {"seed0": {"diff": mean - 0.7, "low": -0.1, "high": 0.0}}}
        return {"seeds": 3, "wall_min": 4.0, "peak_rss_gb": 1.4, "splits": {"steps_unseen_seeds": split}}

    recipes = {"reasoning_injection_history_tiny[compact]": row(0.63), "infigui_rloo_tiny[after RI, own recovery]":
               row(0.60), "infigui_rloo_tiny[after RI, no recovery states]": row(0.61)}
    lines = rl_recipes_infigui_ri({"recipes": recipes})
    assert ("- `infigui_rloo_tiny[after RI, no recovery states]` against `infigui_rloo_tiny[after RI, own recovery]`, "
            "after training: all multi-step steps +0.010 (within the two spreads, 0.020).") in lines
    assert not any(line.startswith("- `reasoning_injection_history_tiny[compact]` against") for line in lines)


def test_rl_room_with_several_models_reads_each_against_the_first():
    """``rl_room.py --models``: the table and the quoted lines pair every later model with the first (greedy and
    sample success), and the first model's own line carries no comparison."""
    from render_findings import rl_room
    from render_results import render_rl_room

    row = {"k": 8, "temperature": 1.0, "greedy": 0.6, "pass_at_k": 0.9, "room": 0.3, "informative": 0.5,
           "sample_success": 0.5, "n": 200}
    pair = {"diff": -0.05, "low": -0.08, "high": -0.02, "n": 200}
    result = {"states": 200, "train_data_seed": 3, "k": 8, "max_new_tokens": 160, "command": "c", "commit": "x",
              "models": {"start": {"model": "a", "rows": [row]},
                         "after": {"model": "b", "rows": [row | {"sample_success": 0.45}],
                                   "versus_first": {"against": "start", "greedy": pair,
                                                    "sample_success": {"1.0": pair}}}}}
    lines = rl_room(result)
    assert lines[0] == "- `start` at temperature 1: greedy 0.600, sample success 0.500, pass@8 0.900 on 200 training states."
    assert lines[1].endswith("against `start`: greedy -0.050 [-0.080, -0.020], sample success -0.050 [-0.080, -0.020] "
                             "(paired 95% intervals).")
    table = render_rl_room(result)
    assert "| after (`b`) | 1 | 0.600 | -0.050 [-0.080, -0.020] | 0.450 | -0.050 [-0.080, -0.020] | 0.900 | 0.500 |" in table
    assert any(line.startswith("| start (`a`) | 1 | 0.600 | - |") for line in table)


def test_rl_fit_reads_each_run_on_its_own_states_and_on_others_against_the_start():
    """``rl_fit.py``: per run, the fit set and the rest, each paired with the start; the start's rows carry none."""
    from render_findings import rl_fit
    from render_results import render_rl_fit

    row = {"k": 8, "temperature": 1.0, "greedy": 0.7, "pass_at_k": 0.9, "room": 0.2, "informative": 0.5,
           "sample_success": 0.6, "n": 100}
    up = {"diff": 0.2, "low": 0.15, "high": 0.25, "n": 100}
    down = {"diff": -0.05, "low": -0.09, "high": -0.01, "n": 200}

    def part(states, pair, after):
        return {"states": states, "k": 8, "models": {
            "start": {"model": "a", "rows": [row]},
            "lr1e-05": {"model": "b", "rows": [row | after],
                        "versus_first": {"against": "start", "greedy": pair, "sample_success": {"1.0": pair}}}}}

    result = {"recipe": "r", "start": "a", "train_data_seed": 3, "episodes_per_task": 2, "batch_size": 4, "steps": 200,
              "seed": 0, "temperature": 1.0, "command": "c", "commit": "x",
              "runs": {"lr1e-05": {"lr": 1e-5, "wall_s": 600.0, "peak_rss_mb": 2048, "cpu_s": 1100.0}},
              "fit": part(100, up, {"sample_success": 0.8, "greedy": 0.9}),
              "rest": part(200, down, {"sample_success": 0.55, "greedy": 0.65})}
    (line,) = rl_fit(result)
    assert line == ("- `lr1e-05` (4 states x 200 steps at lr 1e-05, 10.0 min, 2.00 GB): on the 100 states it trained on "
                    "sample success 0.600 -> 0.800 (+0.200 [+0.150, +0.250]), greedy 0.700 -> 0.900 (+0.200 [+0.150, "
                    "+0.250]); on 200 states of other episodes sample success 0.600 -> 0.550 (-0.050 [-0.090, -0.010]), "
                    "greedy 0.700 -> 0.650 (-0.050 [-0.090, -0.010]) (paired 95% intervals).")
    table = render_rl_fit(result)
    assert "| start | - | - | - | fit | 0.700 | - | 0.600 | - |" in table
    assert "| lr1e-05 | 1e-05 | 10.0 | 2.00 | rest | 0.650 | -0.050 [-0.090, -0.010] | 0.550 | -0.050 [-0.090, -0.010] |" in table


def test_litegui_pipeline_findings_read_each_condition_against_the_start_and_sft():
    """``litegui_pipeline.py``: every condition's gain over the start, OPD and OPD + MD-GRPO against SFT after
    training (beside the two spreads), the pool's sources, and the paper's claim."""
    from render_findings import litegui_pipeline

    def row(mean, spread):
        split = {"base": 0.1, "mean": mean, "spread": spread, "gain": round(mean - 0.1, 4), "n": 105, "passes": False,
                 "per_seed": {"seed0": mean, "seed1": mean},
                 "paired": {f"seed{i}": {"diff": round(mean - 0.1, 4), "low": -0.02, "high": 0.05, "n": 105}
                            for i in (0, 1)}}
        return {"splits": {"episode_success": split}, "seeds": 2, "wall_min": 3.0, "peak_rss_gb": 2.0}

    pool = {"episodes": 16, "atg": 4, "oracle_seed": 12, "atg_share": 0.25,
            "per_task": {"a": {"atg": 4, "oracle_seed": 4}, "b": {"atg": 0, "oracle_seed": 8}},
            "verification": {"recovered_other_solutions": 3, "hidden_other_solutions": 6, "multi_solution_steps": 5,
                             "recall_other_solutions": 0.5}}
    endings = {"base": {"episodes": 105, "success": 8, "finished_early": 82, "step_cap": 3, "other": 12},
               "sft": {"episodes": 105, "seeds": 3, "success": 8, "finished_early": 81, "step_cap": 1.67,
                       "other": 14.33, "won": 3, "lost": 3}}
    lines = litegui_pipeline({"recipes": {"sft": row(0.12, 0.01), "opd_mdgrpo": row(0.2, 0.02)}, "pool": pool,
                              "endings": endings})
    assert lines[4] == ("- How the 105 live episodes end: the start 8 successes, 82 finish actions before the goal, 3 "
                        "at the step cap, 12 ended by the world after another action; runs (mean over seeds): `sft` 8 "
                        "successes, 81 finish actions before the goal, 1.7 at the step cap, 14.3 ended by the world "
                        "after another action, 3 won and 3 lost against the start.")
    assert lines[0].startswith("- `sft` (2 seeds, 3.0 min training, 2.00 GB): live episode success (n=105, start 0.100)")
    assert lines[2] == ("- `opd_mdgrpo` against `sft`, after training: live episode success +0.080 (above the two "
                        "spreads, 0.030).")
    assert lines[3].startswith("- The pool: 16 episodes, 4 from ATG") and "fills 0.250 of it" in lines[3]
    assert "a 4 of 8, b 0 of 8" in lines[3] and "(recall 0.500)" in lines[3]
    assert lines[-1].startswith("- The paper's claim:")


def test_the_scoreboard_reads_each_methods_row_from_its_json_and_refuses_a_row_it_lacks(tmp_path, monkeypatch):
    """The page's first table: a row per method from its results file, against the base or each seed's own start."""
    row = _rl_row(0.75, "episode_success", 105, 0.70, 20.0, 5.0)
    row["splits"]["episode_success"]["paired"] = {f"seed{i}": {"diff": 0.05, "low": 0.01, "high": 0.09} for i in range(3)}
    row["splits"]["episode_success"]["passes"] = True
    (tmp_path / "rl_recipes_computersd.json").write_text(json.dumps({
        "base_model": "ckpt/start", "recipes": {"computersd_history_tiny": row}}))
    lines = render_results.render_scoreboard(tmp_path)
    [csd] = [line for line in lines if line.startswith("| ComputerSD")]
    assert "| `ckpt/start` | live episode success | 105 | 0.700 | 0.750 | +0.050 +- 0.010 |" in csd
    assert csd.count("+0.050 [+0.010, +0.090]") == 3 and "| pass |" in csd
    own = _rl_row(0.68, "steps_unseen_seeds", 1301, 0.70, 3.0, 1.3)
    own["splits"]["steps_unseen_seeds"]["own_start"] = {"start": 0.66, "gain": 0.02, "spread": 0.015, "passes": False,
                                                        "paired": {"seed0": {"diff": 0.02, "low": -0.001, "high": 0.04}}}
    (tmp_path / "rl_recipes_guilibra.json").write_text(json.dumps({
        "base_model": "b", "recipes": {"guilibra_kl_grpo_sngs_tiny[from ASFT]": own}}))
    [gl] = [line for line in render_results.render_scoreboard(tmp_path) if line.startswith("| GUI-Libra")]
    assert "| each seed's first-stage model | all multi-step steps | 1301 | 0.660 | 0.680 | +0.020 +- 0.015 |" in gl
    assert "| miss |" in gl
    (tmp_path / "rl_recipes_ccpo.json").write_text(json.dumps({"base_model": "b", "recipes": {}}))
    with pytest.raises(SystemExit, match="ccpo_semi_online_tiny"):
        render_results.render_scoreboard(tmp_path)
    assert render_results.render_scoreboard(tmp_path / "none") == []


def test_guided_opd_kl_forms_read_each_against_the_full_vocabulary_row():
    from render_findings import litegui_opd_kl

    rows = {"litegui_opd_tiny[most_matched]": _rl_row(0.69, "multi_solution", 436, 0.70, 5.0, 2.1),
            "litegui_opd_tiny[most_matched, top-k KL]": _rl_row(0.72, "multi_solution", 436, 0.70, 5.0, 2.1)}
    lines = litegui_opd_kl({"recipes": rows})
    assert lines[2] == ("- `litegui_opd_tiny[most_matched, top-k KL]` against `litegui_opd_tiny[most_matched]`, after "
                        "training: multi-solution +0.030 (above the two spreads, 0.020).")
    assert lines[-1].startswith("- The paper gives the loss as GKD's reverse KL")


def test_computersd_gate_ablations_read_each_against_the_recipe_as_written():
    from render_findings import FINDINGS, by_prefix

    rows = {"computersd_history_tiny": _rl_row(0.05, "episode_success", 105, 0.03, 20.0, 5.0),
            "computersd_history_tiny[gate none]": _rl_row(0.02, "episode_success", 105, 0.03, 20.0, 5.0)}
    lines = by_prefix(FINDINGS, "rl_recipes_computersd_gates")({"recipes": rows})
    assert lines[2] == ("- `computersd_history_tiny[gate none]` against `computersd_history_tiny`, after training: "
                        "live episode success -0.030 (below the two spreads, 0.020).")
    assert lines[-1].startswith("- The paper (Qwen3-VL-8B-Thinking on OSWorld-Verified")
