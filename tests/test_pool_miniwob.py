"""A MiniWoB++ pool survives a killed chromedriver: the episode it was running
is recorded as failed with the reason, the browser is restarted, and every
other episode completes."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from guirl.data.io import read_episodes
from guirl.envs.miniwob.scripted import scripted_policy
from guirl.envs.pool import EnvPool
from guirl.rollout import EpisodeRunner, EpisodeSpec, PolicyInput, TrajectoryRecorder
from guirl.rollout.parallel import run_parallel

pytestmark = pytest.mark.browser  # no browser: skipped, or failed under GUIRL_REQUIRE_BROWSER=1 (conftest.py)


def process_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except FileNotFoundError:
        return ""


def test_killed_browser_fails_one_episode_and_the_pool_recovers(tmp_path):
    killed: list[int] = []
    with EnvPool("miniwob", 2, {"task": "login-user"}) as pool:

        def policy(inputs: PolicyInput):
            # mid-episode: after the username is typed, kill this worker's chromedriver
            if inputs.episode["seed"] == 2 and inputs.step_index == 1 and not killed:
                for pid in pool.worker_pids(inputs.episode["worker"]):
                    if process_name(pid) == "chromedriver":
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
            return scripted_policy(inputs)

        with TrajectoryRecorder(tmp_path, source="env:miniwob", platform="web") as recorder:
            runner = EpisodeRunner(policy, max_steps=6, on_episode=recorder.record)
            rollouts = run_parallel(runner, pool, [EpisodeSpec(task="login-user", seed=s) for s in range(5)])
        survivors = {pid for w in range(pool.num_workers) for pid in pool.worker_pids(w)}
    assert len(killed) == 1 and killed[0] not in survivors
    assert [r.spec.seed for r in rollouts if not r.success] == [2]
    failed = rollouts[2]
    assert failed.extra["crashed"] and "BrowserCrashed" in failed.failure_reason
    assert len(failed.steps) == 2  # the typed username, then the step that found the browser gone
    assert all(r.success and len(r.steps) == 3 for r in rollouts if r.spec.seed != 2)
    episodes = read_episodes(tmp_path / "episodes.jsonl")
    assert len(episodes) == 5
    recorded = next(e for e in episodes if e.extra["seed"] == 2)
    assert recorded.success is False and "BrowserCrashed" in recorded.failure_reason
