"""RayEnvPool (guirl.envs.ray_pool) on a local Ray cluster started here: the same episodes as the
process pool, and the same failure handling (env error, dead actor, timeout). The backend-choice
tests at the top need no Ray; the others need it, and setup installs it (the ``ray`` extra), so
without it they fail instead of skipping."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType
from guirl.envs.backends import make_pool
from guirl.envs.base import make_env
from guirl.envs.pool import EnvPool
from guirl.rollout import EpisodeRunner, EpisodeSpec, PolicyInput
from guirl.rollout.parallel import run_parallel
from guirl.rollout.policy import oracle_policy

SIM = {"domain": "desktop", "preset": "coarse", "task": "multi"}


# -- choosing the backend (no Ray needed) -------------------------------------------------------
def test_unknown_backend_names_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown pool backend 'dask'; choose one of \['process', 'ray'\]"):
        make_pool("sim", 1, backend="dask")


def test_ray_backend_without_ray_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(ImportError, match=r"needs ray, which is not installed: pip install -e '\.\[ray\]'"):
        make_pool("sim", 1, backend="ray")


def test_the_process_pool_and_rollouts_do_not_import_ray():
    code = "import sys, guirl.envs.pool, guirl.rollout.parallel; assert 'ray' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# -- a local Ray cluster ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def ray_cluster():
    import ray  # installed by setup (the ``ray`` extra of `make test`): a missing ray fails, never skips
    # the test environments below live in this module, which Ray workers cannot import: ship them by value
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


class FaultySim:
    """The sim world, failing on purpose at step ``at_step`` of the episodes whose seed is in ``seeds``:
    ``fault`` raise (a crashed browser), exit (the worker process dies) or hang."""

    def __init__(self, fault: str = "raise", seeds: tuple[int, ...] = (), at_step: int = 1, **sim_kwargs):
        self.env = make_env("sim", **sim_kwargs)
        self.fault, self.seeds, self.at_step = fault, set(seeds), at_step
        self.ident = uuid.uuid4().hex  # a new one each time the environment is (re)built
        self.seed, self.steps = None, 0

    def reset(self, seed=None, options=None):
        self.seed, self.steps = seed, 0
        return self.env.reset(seed=seed, options=options)

    def step(self, action):
        self.steps += 1
        if self.seed in self.seeds and self.steps == self.at_step:
            if self.fault == "raise":
                raise ConnectionError("the browser went away")
            if self.fault == "exit":
                os._exit(3)
            time.sleep(600)  # a hung browser: the pool's timeout must end this
        return self.env.step(action)

    def identity(self):
        return os.getpid(), self.ident

    def close(self):
        self.env.close()


def detour_policy(inputs: PolicyInput) -> Action:
    """Deterministic: odd seeds first click the top-left corner (a wasted step), then follow the oracle."""
    if inputs.episode["seed"] % 2 and inputs.step_index == 0:
        return Action(type=ActionType.CLICK, point=(2, 2), frame=Frame.screen(*inputs.observation.screenshot.size))
    return oracle_policy(inputs)


def summary(rollouts):
    return [
        (r.spec.seed, r.task, r.instruction, [s.action for s in r.steps], [s.reward for s in r.steps], r.success,
         r.failure_reason, r.total_reward)
        for r in rollouts
    ]


def test_ray_backend_runs_the_same_episodes_as_the_process_pool(ray_cluster):
    specs = [EpisodeSpec(seed=s) for s in range(6)]
    runner = EpisodeRunner(detour_policy, max_steps=14)
    with make_pool("sim", 2, SIM, backend="process") as pool:
        assert isinstance(pool, EnvPool)
        local = run_parallel(runner, pool, specs)
    with make_pool("sim", 2, SIM, backend="ray") as pool:
        assert type(pool).__name__ == "RayEnvPool" and pool.num_workers == 2
        remote = run_parallel(runner, pool, specs)
        assert pool.call(0, "call", "snapshot").ok  # the "call" command reaches the env
        pids = [pool.worker_pids(w)[0] for w in range(2)]
    assert summary(remote) == summary(local)
    assert [r.spec.seed for r in remote] == list(range(6))
    assert all(r.success for r in remote) and any(len(r.steps) > 3 for r in remote)
    assert len({r.task for r in remote}) > 1  # several task families, several lengths
    assert {r.extra["worker"] for r in remote} == {0, 1}
    assert len(set(pids)) == 2 and os.getpid() not in pids
    # elapsed_s is measured in the actor and reaches the rollout timings
    assert all(s.timings["env"] > 0 for r in remote for s in r.steps)


def test_env_error_fails_the_episode_and_the_actor_rebuilds_its_env(ray_cluster):
    kwargs = {"fault": "raise", "seeds": (0,), "at_step": 2, **SIM}
    with make_pool(FaultySim, 1, kwargs, backend="ray") as pool:
        before = pool.call(0, "call", "identity").value
        runner = EpisodeRunner(oracle_policy, max_steps=14)
        rollouts = run_parallel(runner, pool, [EpisodeSpec(seed=s) for s in range(3)])
        after = pool.call(0, "call", "identity").value
        restarts = pool.restarts
    first, rest = rollouts[0], rollouts[1:]
    assert not first.success and first.extra["crashed"] and len(first.steps) == 2
    assert first.failure_reason == "step 1 failed on worker 0: ConnectionError: the browser went away"
    assert all(r.success for r in rest)
    assert after[0] == before[0] and after[1] != before[1]  # same actor process, a fresh environment
    assert restarts == [0]


@pytest.mark.parametrize("how", ["ray.kill", "SIGKILL", "os._exit"])
def test_dead_actor_is_replaced_and_only_its_episode_fails(ray_cluster, how):
    kwargs = {"fault": "exit" if how == "os._exit" else "none", "seeds": (2,), "at_step": 1, **SIM}
    with make_pool(FaultySim, 2, kwargs, backend="ray") as pool:

        def killer(inputs: PolicyInput):
            if inputs.episode["seed"] == 2 and inputs.step_index == 0:
                worker = inputs.episode["worker"]
                if how == "ray.kill":
                    ray_cluster.kill(pool.actor(worker))
                elif how == "SIGKILL":
                    os.kill(pool.worker_pids(worker)[0], signal.SIGKILL)
            return oracle_policy(inputs)

        rollouts = run_parallel(EpisodeRunner(killer, max_steps=14), pool, [EpisodeSpec(seed=s) for s in range(5)])
        restarts = sum(pool.restarts)
    failed = [r for r in rollouts if not r.success]
    assert [r.spec.seed for r in failed] == [2]
    assert failed[0].extra["crashed"]
    assert "failed on worker" in failed[0].failure_reason
    assert "worker actor died during step (ActorDiedError" in failed[0].failure_reason
    if how == "ray.kill":
        assert "killed by `ray.kill`" in failed[0].failure_reason
    assert len(rollouts) == 5 and restarts == 1


def test_hung_actor_times_out_and_is_replaced(ray_cluster):
    kwargs = {"fault": "hang", "seeds": (0,), "at_step": 1, **SIM}
    # the actor is started and its world built before the hang, so the timeout measures the hang; 20 s: the
    # replacement actor's first reset (actor start + world build) must fit in it on a loaded 2-core machine
    with make_pool(FaultySim, 1, kwargs, timeout_s=20, backend="ray") as pool:
        assert pool.call(0, "reset", 5, None).ok
        hung = pool.actor(0)
        started = time.monotonic()
        first, second = run_parallel(EpisodeRunner(oracle_policy, max_steps=14), pool, [EpisodeSpec(seed=0), EpisodeSpec(seed=1)])
        took = time.monotonic() - started
        assert pool.restarts == [1] and pool.actor(0) is not hung
    assert not first.success
    assert first.failure_reason == "step 0 failed on worker 0: worker did not answer step within 20 s"
    assert second.success
    assert took < 90
