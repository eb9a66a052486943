"""The same runner, unchanged, on the built-in GUI world (make_env("sim")):
an oracle policy that plays the first valid action reaches every goal, both
in-process and over a 2-worker EnvPool, and the trajectories are readable."""

from __future__ import annotations

import pytest

from guirl.data.io import read_episodes
from guirl.envs import available_envs, make_env
from guirl.envs.pool import EnvPool
from guirl.eval.online import evaluate_online
from guirl.rollout import EpisodeRunner, TrajectoryRecorder, WindowHistory, group_specs
from guirl.rollout.parallel import run_parallel
from guirl.rollout.policy import oracle_policy

assert "sim" in available_envs(), "the built-in sim world must be registered"

TASKS = ["web.search_open", "web.fill_form", "web.shopping"]  # one sim env serves one domain


def test_oracle_reaches_every_goal_in_process(tmp_path):
    env = make_env("sim", domain="web")
    with TrajectoryRecorder(tmp_path, source="env:sim") as recorder:
        runner = EpisodeRunner(
            oracle_policy, max_steps=30, history=WindowHistory(steps=2, images=1), on_episode=recorder.record
        )
        rollouts = runner.run_many(env, group_specs(TASKS, seeds=range(2)))
    env.close()
    assert [(r.spec.task, r.success) for r in rollouts] == [(t, True) for t in TASKS for _ in range(2)]
    assert all(r.steps[-1].action.type.value == "terminate" for r in rollouts)  # sim ends on terminate
    episodes = read_episodes(tmp_path / "episodes.jsonl")
    multi = max(episodes, key=lambda e: len(e.steps))
    assert len(multi.steps) >= 3
    last = multi.steps[-1]
    assert last.valid_actions and last.sub_goal and last.subtasks  # sim's ground truth is kept
    assert [h.screenshot is not None for h in last.history] == [False, True]


def test_oracle_over_a_pool_and_online_eval(tmp_path):
    with EnvPool("sim", 2, {"domain": "web"}) as pool:
        rollouts = run_parallel(EpisodeRunner(oracle_policy, max_steps=30), pool, group_specs(TASKS, seeds=[5]))
    assert all(r.success for r in rollouts) and len(rollouts) == 3
    rows, _ = evaluate_online(
        "sim", TASKS[:1], 3, oracle_policy, max_steps=30, out_dir=tmp_path, env_kwargs={"domain": "web"}
    )
    (row,) = rows
    assert (row.task, row.episodes, row.successes, row.crashed) == ("web.search_open", 3, 3, 0)
    # Wilson 95% interval for 3/3: low = 3/(3 + 1.96^2) = 3/6.84 = 0.4385, high = 1
    assert row.ci_low == pytest.approx(0.4385, abs=1e-4) and row.ci_high == 1.0
    assert (tmp_path / "summary.json").is_file()


def test_task_chosen_by_the_env_is_recorded_and_summarised(tmp_path):
    from guirl.eval.online import summarize
    from guirl.rollout import EpisodeSpec

    env = make_env("sim", domain="web")
    with TrajectoryRecorder(tmp_path, source="env:sim") as recorder:
        runner = EpisodeRunner(oracle_policy, max_steps=30, on_episode=recorder.record)
        rollouts = runner.run_many(env, [EpisodeSpec(task=None, seed=s) for s in range(4)])
    env.close()
    # no task asked for: the world picks a web family per seed and says which at reset
    played = [r.task for r in rollouts]
    assert all(t is not None and t.startswith("web.") for t in played), played
    assert [e.task for e in read_episodes(tmp_path / "episodes.jsonl")] == played
    rows = summarize(rollouts)
    assert sorted(r.task for r in rows) == sorted(set(played))
    assert sum(r.episodes for r in rows) == 4 and all(r.success_rate == 1.0 for r in rows)
