"""EnvPool failure handling with the tiny CellsEnv (no browser): an env error,
a killed worker process and a hung worker each fail only their own episode."""

from __future__ import annotations

import os
import re
import signal

from test_rollout_runner import CellsEnv, click_cell

from guirl.envs.pool import EnvPool
from guirl.rollout import EpisodeRunner, EpisodeSpec, PolicyInput
from guirl.rollout.parallel import run_parallel
from guirl.rollout.policy import oracle_policy


def two_step_policy(inputs: PolicyInput):
    """A wrong click first, then the right one: every episode takes 2 steps."""
    right = inputs.observation.valid_actions[0]
    if inputs.step_index == 0:
        return click_cell((int(right.point[0] // 10) + 1) % 4)  # the next cell: wrong on purpose
    return right


def test_parallel_rollouts_come_back_in_spec_order():
    specs = [EpisodeSpec(seed=s) for s in range(5)]
    with EnvPool(CellsEnv, 2) as pool:
        rollouts = run_parallel(EpisodeRunner(two_step_policy, max_steps=4), pool, specs)
    assert [r.spec.seed for r in rollouts] == [0, 1, 2, 3, 4]
    assert all(r.success and len(r.steps) == 2 for r in rollouts)
    assert {r.extra["worker"] for r in rollouts} == {0, 1}


def test_env_error_fails_the_episode_and_the_env_is_rebuilt():
    # every fresh CellsEnv crashes at its 2nd step; episode 0 takes 2 steps and crashes,
    # the rebuilt env then serves the 1-step episodes 1 and 2 (its step counter restarts at reset).
    with EnvPool(CellsEnv, 1, {"crash_at_step": 2}) as pool:
        runner = EpisodeRunner(two_step_policy, max_steps=4)
        first = run_parallel(runner, pool, [EpisodeSpec(seed=0)])[0]
        rest = run_parallel(EpisodeRunner(oracle_policy, max_steps=4), pool, [EpisodeSpec(seed=1), EpisodeSpec(seed=2)])
    assert not first.success and first.extra["crashed"]
    assert "ConnectionError: the browser went away" in first.failure_reason
    assert all(r.success for r in rest)


def test_killed_worker_is_restarted_and_only_its_episode_fails():
    with EnvPool(CellsEnv, 2) as pool:

        def killer(inputs: PolicyInput):
            if inputs.episode["seed"] == 2 and inputs.step_index == 0:
                os.kill(pool.worker_pids(inputs.episode["worker"])[0], signal.SIGKILL)
            return inputs.observation.valid_actions[0]

        rollouts = run_parallel(EpisodeRunner(killer, max_steps=3), pool, [EpisodeSpec(seed=s) for s in range(5)])
        restarts = sum(pool.restarts)
    failed = [r for r in rollouts if not r.success]
    assert [r.spec.seed for r in failed] == [2]
    # The kill lands before the step is sent; whether the pool sees the broken pipe on send ("while
    # idle") or on the answer ("during step") is a race, and both must name the death and its signal.
    assert re.search(r"worker process died (during step|while idle) \(exit code -9\)", failed[0].failure_reason)
    assert len(rollouts) == 5 and restarts == 1


def test_hung_worker_times_out():
    with EnvPool(CellsEnv, 1, {"hang_at_step": 1}, timeout_s=3) as pool:
        (rollout,) = run_parallel(EpisodeRunner(oracle_policy), pool, [EpisodeSpec(seed=0)])
    assert not rollout.success
    assert "did not answer step within 3 s" in rollout.failure_reason
