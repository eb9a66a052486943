"""``benchmarks/rl_recipes.py``'s helpers: run-directory tags and per-run peak RSS (each run's own, not the
largest of every run the benchmark process started before it)."""

from __future__ import annotations

import doctest
import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import base_agent  # noqa: E402
import rl_recipes  # noqa: E402


def test_doctests():
    assert doctest.testmod(rl_recipes).failed == 0
    assert doctest.testmod(base_agent).failed == 0  # live_seed: validation data plays other episodes


def test_an_online_recipe_gets_no_train_data_override():
    data = Path("D")
    assert rl_recipes._data_overrides("computersd_history_tiny", data) == []
    assert rl_recipes._data_overrides("infigui_rloo_tiny", data)[0].startswith("train_data=[D/")


def test_a_small_run_after_a_large_one_reports_its_own_peak():
    big = [sys.executable, "-c", "b = bytearray(400 * 2**20); b[::4096] = b'x' * len(b[::4096])"]
    _, first, _ = rl_recipes.run_measured(big)
    _, second, _ = rl_recipes.run_measured([sys.executable, "-c", "pass"])
    assert first > 400 and second < first / 2


def test_a_failed_run_raises_with_its_exit_code():
    with pytest.raises(subprocess.CalledProcessError) as err:
        rl_recipes.run_measured([sys.executable, "-c", "raise SystemExit(3)"])
    assert err.value.returncode == 3


def test_a_run_does_not_inherit_the_benchmark_process_peak():
    held = bytearray(500 * 2**20)  # the benchmark process after generating data and evaluating in-process
    held[::4096] = b"x" * len(held[::4096])
    _, peak, _ = rl_recipes.run_measured([sys.executable, "-c", "pass"])
    assert peak < 200
    del held


def test_a_run_reports_the_cpu_it_used():
    """CPU seconds over wall seconds tell a run that kept a core busy from one that waited (or shared the cores)."""
    wall, _, cpu = rl_recipes.run_measured([sys.executable, "-c", "import time\nt = time.perf_counter()\n"
                                            "while time.perf_counter() - t < 0.6: pass"])
    assert cpu > 0.4 and cpu <= wall + 0.05
    wall, _, cpu = rl_recipes.run_measured([sys.executable, "-c", "import time; time.sleep(0.6)"])
    assert wall > 0.6 and cpu < 0.3


def test_summary_pairs_every_seed_with_the_base_steps():
    base = {"steps_unseen_seeds": 0.5, "per_step": {"steps_unseen_seeds": [0, 1] * 50}}

    def run(flips: int) -> dict:  # ``flips`` failed base steps turned into successes
        after = [0, 1] * 50
        for i in range(0, 2 * flips, 2):
            after[i] = 1
        return {"wall_s": 600.0, "peak_rss_mb": 2048.0,
                "scores": {"steps_unseen_seeds": sum(after) / 100, "per_step": {"steps_unseen_seeds": after}}}

    results = {"base": base, "setting": {"base_model": "checkpoints/x"},
               "r/seed0": run(20), "r/seed1": run(22), "r/seed2": run(21)}
    row = rl_recipes.summarise(results)["recipes"]["r"]["splits"]["steps_unseen_seeds"]
    assert row["gain"] == 0.21 and row["n"] == 100 and row["passes"] is True
    assert row["paired"]["seed0"]["diff"] == 0.2 and row["paired"]["seed0"]["low"] > 0
    results["r/seed2"] = run(0)  # one seed without a gain: its interval holds 0 and the spread grows
    assert rl_recipes.summarise(results)["recipes"]["r"]["splits"]["steps_unseen_seeds"]["passes"] is False


def test_a_second_stage_is_paired_against_each_seeds_own_start():
    """``--start`` with ``{seed}``: each run is also paired against its own first-stage model (scored into
    ``results["starts"]``), and the bar is applied to those gains; the docs render both rows."""
    sys.path.insert(0, str(Path(rl_recipes.ROOT) / "scripts"))
    import render_findings
    import render_results

    def scores(ones: int) -> dict:  # the first ``ones`` of 100 steps succeed
        v = [1] * ones + [0] * (100 - ones)
        return {"steps_unseen_seeds": ones / 100, "per_step": {"steps_unseen_seeds": v}}

    results = {"base": scores(60), "setting": {"base_model": "checkpoints/x", "eval_seed": 7},
               "starts": {f"/r/stage1-seed{i}/final": scores(40 + i) for i in range(3)}}
    for i, after in enumerate((50, 52, 51)):  # each seed gains 9-11 over its own start, loses 8-10 to the base
        results[f"r/seed{i}"] = {"wall_s": 60.0, "peak_rss_mb": 1024.0, "scores": scores(after),
                                 "start": f"/r/stage1-seed{i}/final"}
    row = rl_recipes.summarise(results)["recipes"]["r"]["splits"]["steps_unseen_seeds"]
    assert row["gain"] == -0.09 and row["passes"] is False
    own = row["own_start"]
    assert own["start"] == 0.41 and own["gain"] == 0.1 and own["spread"] == 0.01 and own["passes"] is True
    assert [p["diff"] for p in own["paired"].values()] == [0.1, 0.11, 0.09]
    results["r/seed2"]["start"] = "/r/never-scored"  # a seed whose start was not scored: no own-start row
    assert "own_start" not in rl_recipes.summarise(results)["recipes"]["r"]["splits"]["steps_unseen_seeds"]
    results["r/seed2"]["start"] = "/r/stage1-seed2/final"
    summary = rl_recipes.summarise(results)
    table = "\n".join(render_results.render_rl_recipes(summary))
    assert "| r, over each seed's start | steps_unseen_seeds | 100 | 0.410 |" in table and "+0.100 +- 0.010" in table
    prose = "\n".join(render_findings._against_reference(summary, lambda n: False))
    assert "over each seed's own start: all multi-step steps (its starts 0.410) +0.100 +- 0.010, clears the bar" in prose


@pytest.mark.parametrize("split,rel,parts", [
    ("steps_unseen_seeds", "trajectories/test_seed.jsonl",
     {"multi_solution": lambda s: len(s.step.valid_actions) >= 2, "single_solution": lambda s: len(s.step.valid_actions) == 1}),
    ("recovery", "trajectories/recovery.jsonl",
     {"error_escape": lambda s: s.step.label.value == "error_escape", "back_on_track": lambda s: s.step.label.value == "back_on_track"}),
])
def test_sub_splits_partition_their_split(tmp_path, split, rel, parts):
    """LiteGUI's ``multi_solution`` / ``single_solution`` (several valid actions, one) partition the trained-family
    steps and InfiGUI-R1's ``error_escape`` / ``back_on_track`` the recovery steps: each part's per-step vector is
    its steps' outcomes, in the split's order, and together they are every step."""
    from guirl.envs.sim import generate_dataset
    from guirl.trainers.rl_common import load_states

    generate_dataset(out_dir=str(tmp_path), seed=5, train_per_task=1, test_per_task=2, grounding_train=1,
                     grounding_test=1, tasks=["desktop.open_file", "mobile.toggle_setting"], heldout_tasks=[],
                     recovery_prob=1.0)
    model = Path(rl_recipes.ROOT) / "checkpoints" / "base-agent-history-tiny"
    scores = rl_recipes.evaluate_model(model, tmp_path, 0, 0, splits=[split])
    steps = [s for s in load_states([str(tmp_path / rel)]) if s.step.valid_actions]
    import random

    order = random.Random(0).sample(steps, len(steps))  # evaluate_model's order (seed 0)
    vector = scores["per_step"][split]
    members = {part: [keep(s) for s in order] for part, keep in parts.items()}
    assert all(any(m) and not all(m) for m in members.values())
    assert [sum(col) for col in zip(*members.values(), strict=True)] == [1] * len(order)  # a partition
    for part, member in members.items():
        assert scores["per_step"][part] == [ok for ok, m in zip(vector, member, strict=True) if m]
        assert scores[part] == sum(scores["per_step"][part]) / member.count(True)
    assert "grounding" not in scores and "episode_success" not in scores


def test_add_episodes_scores_the_base_and_finished_runs_on_the_same_live_episodes(tmp_path, capsys):
    """``--add-episodes``: the base model and each finished run play the same live episodes (a real model in the
    real sim world), merged into their scores so that the ``episode_success`` row pairs them; a second call with
    another count is refused with one line."""
    from guirl.envs.sim import generate_dataset

    data = tmp_path / "data"
    generate_dataset(out_dir=str(data), seed=5, train_per_task=1, test_per_task=1, grounding_train=1,
                     grounding_test=1, tasks=["desktop.open_file", "mobile.toggle_setting"], heldout_tasks=[])
    model = Path(rl_recipes.ROOT) / "checkpoints" / "base-agent-history-tiny"
    run = tmp_path / "r-seed0"
    run.mkdir()
    (run / "final").symlink_to(model)
    results = {"base": {"steps_unseen_seeds": 0.5, "per_step": {"steps_unseen_seeds": [0, 1]}},
               "setting": {"base_model": "checkpoints/x", "episodes": 0},
               "r/seed0": {"run": str(run), "wall_s": 60.0, "peak_rss_mb": 100.0,
                           "scores": {"steps_unseen_seeds": 1.0, "per_step": {"steps_unseen_seeds": [1, 1]}}}}
    path = tmp_path / "results.json"
    rl_recipes.add_episodes(results, path, ["r/seed0", "r/seed1"], data, 2, str(model))
    assert results["setting"]["episodes"] == 2
    base, after = results["base"]["per_step"]["episode_success"], results["r/seed0"]["scores"]["per_step"]["episode_success"]
    assert len(base) == len(after) == 4 and base == after  # the same model on the same episodes, greedy
    progress = results["base"]["per_step"]["episode_progress"]
    assert len(progress) == 4 and all(0.0 <= p <= 1.0 for p in progress)
    assert all(p == 1.0 for p, ok in zip(progress, base, strict=True) if ok)
    assert results["r/seed0"]["scores"]["steps_unseen_seeds"] == 1.0  # the step scores are kept
    row = rl_recipes.summarise(results)["recipes"]["r"]["splits"]["episode_success"]
    assert row["n"] == 4 and row["paired"]["seed0"]["diff"] == 0.0
    import json

    assert json.loads(path.read_text())["r/seed0"]["scores"]["episode_success"] == results["r/seed0"]["scores"]["episode_success"]
    with pytest.raises(SystemExit) as refused:
        rl_recipes.add_episodes(results, path, ["r/seed0"], data, 3, str(model))
    assert refused.value.code == 2
    assert capsys.readouterr().err.strip().endswith("already holds 2 live episodes per family; use --episodes 2")


@pytest.mark.parametrize("args,says", [
    (["--recipes", "no_such_recipe"], "--recipes: no recipes/no_such_recipe.yaml; choose from"),
    (["--recipes", "infigui_rloo_tiny", "--base", "no/such/model"], "--base no/such/model: not a model directory"),
    (["--recipes", "infigui_rloo_tiny", "--max-new-tokens", "0"], "--max-new-tokens 0: give a positive number"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, says):
    """A wrong recipe name or model path is refused before any data is generated: one line, exit 2."""
    done = subprocess.run([sys.executable, str(Path(rl_recipes.ROOT) / "benchmarks" / "rl_recipes.py"), *args,
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_recipe_whose_training_data_is_not_built_is_refused_in_one_line(tmp_path, capsys):
    """Reasoning injection trains on `guirl reasoning-data`'s output, which the benchmark does not generate: the run
    is refused before it starts, naming the missing file and what to do."""
    with pytest.raises(SystemExit) as refused:
        rl_recipes.train("reasoning_injection_history_tiny", 0, tmp_path / "out", tmp_path / "data", [])
    assert refused.value.code == 2
    err = capsys.readouterr().err.strip()
    assert str(tmp_path / "data" / "reasoning-history" / "episodes.jsonl") in err and "build it first" in err
    assert not (tmp_path / "out").exists()


def test_add_splits_scores_the_base_runs_and_starts_on_a_split_made_later(tmp_path, capsys):
    """``--add-splits``: a split written after the runs (here the recovery steps) is scored for the base, each
    finished run and its scored start, on the same steps, so its rows pair; a wrong split is refused in one line."""
    from guirl.envs.sim import generate_dataset

    data = tmp_path / "data"
    generate_dataset(out_dir=str(data), seed=5, train_per_task=1, test_per_task=2, grounding_train=1,
                     grounding_test=1, tasks=["desktop.open_file", "mobile.toggle_setting"], heldout_tasks=[],
                     recovery_prob=1.0)
    model = Path(rl_recipes.ROOT) / "checkpoints" / "base-agent-history-tiny"
    run = tmp_path / "run"
    run.mkdir()
    (run / "final").symlink_to(model)  # the run's model: the base itself, so every paired difference is 0
    first = rl_recipes.evaluate_model(model, data, 0, 0, splits=["steps_unseen_seeds"])
    results = {"base": first, "setting": {"base_model": "checkpoints/x", "samples": 0},
               "starts": {str(model): json.loads(json.dumps(first))},
               "r/seed0": {"run": str(run), "wall_s": 1.0, "peak_rss_mb": 1.0, "scores": json.loads(json.dumps(first)),
                           "start": str(model)}}
    path = tmp_path / "results.json"
    rl_recipes.add_splits(results, path, ["r/seed0"], data, ["recovery"], str(model))
    for scores in (results["base"], results["r/seed0"]["scores"], results["starts"][str(model)]):
        assert {"recovery", "error_escape", "back_on_track", "steps_unseen_seeds"} <= set(scores)
        assert scores["per_step"]["recovery"] == results["base"]["per_step"]["recovery"]
    row = rl_recipes.summarise(results)["recipes"]["r"]["splits"]
    assert row["recovery"]["paired"]["seed0"]["diff"] == 0 and row["recovery"]["own_start"]["gain"] == 0
    assert json.loads(path.read_text())["base"]["recovery"] == results["base"]["recovery"]
    for split, says in (("grounding_x", "--add-splits grounding_x: not a step split"),
                        ("own_recovery", "own_recovery/episodes.jsonl does not exist")):
        with pytest.raises(SystemExit) as refused:
            rl_recipes.add_splits(results, path, ["r/seed0"], data, [split], str(model))
        assert refused.value.code == 2 and says in capsys.readouterr().err


def test_prompt_only_plays_the_base_episodes_with_the_fixed_guidance(tmp_path, capsys, monkeypatch):
    """``--prompt-only``: the base model plays the same live episodes as its evaluation (a real model in the real sim
    world) with ComputerSD's fixed guidance in every prompt, stored as the row ``prompt_only`` that pairs with the
    base on the episode splits only; a directory without live episodes, or of another count, is refused in one
    line."""
    from guirl.envs.sim import generate_dataset
    from guirl.rollout import online
    from guirl.trainers.computersd import FIXED_GUIDANCE

    data = tmp_path / "data"
    generate_dataset(out_dir=str(data), seed=5, train_per_task=1, test_per_task=1, grounding_train=1,
                     grounding_test=1, tasks=["desktop.open_file", "mobile.toggle_setting"], heldout_tasks=[])
    model = Path(rl_recipes.ROOT) / "checkpoints" / "base-agent-history-tiny"
    base = rl_recipes.evaluate_model(model, data, 0, 1, splits=["steps_unseen_seeds", "episode_success"])
    results = {"base": base, "setting": {"base_model": rl_recipes._portable(str(model)), "episodes": 1}}
    path = tmp_path / "results.json"
    seen, real = [], online.run_online
    monkeypatch.setattr(online, "run_online", lambda *a, **k: seen.append(k.get("guidance")) or real(*a, **k))
    rl_recipes.prompt_only(results, path, data, 1, str(model))
    assert seen == [FIXED_GUIDANCE]
    scores = results["prompt_only/seed0"]["scores"]
    assert len(scores["per_step"]["episode_success"]) == len(base["per_step"]["episode_success"]) == 2
    row = rl_recipes.summarise(results)["recipes"]["prompt_only"]["splits"]
    assert set(row) == {"episode_success", "episode_progress"} and row["episode_success"]["n"] == 2
    assert json.loads(path.read_text())["prompt_only/seed0"]["guidance"] == FIXED_GUIDANCE
    rl_recipes.prompt_only(results, path, data, 1, str(model))  # done: nothing played again
    assert seen == [FIXED_GUIDANCE]
    with pytest.raises(SystemExit) as refused:
        rl_recipes.prompt_only(results, path, data, 2, str(model))
    assert refused.value.code == 2 and "pass that --base and --episodes" in capsys.readouterr().err
    del results["base"]["episode_success"]
    with pytest.raises(SystemExit) as refused:
        rl_recipes.prompt_only(results, path, data, 1, str(model))
    assert refused.value.code == 2 and "no live evaluation of the base" in capsys.readouterr().err
