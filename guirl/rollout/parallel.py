"""Run many episodes over an :class:`~guirl.envs.pool.EnvPool`.

Every worker runs one episode at a time; while workers reset and step their
environments, the policy is called in this process for whichever episode
has a new observation. A worker failure (crashed browser, dead process,
timeout) fails only the episode it was running, with the pool's reason; the
pool restarts the worker and it takes the next episode.

Departure (kept simple on purpose): the policy is called one observation at
a time; a batched model policy would gather the ready observations first.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from guirl.envs.pool import EnvPool, PoolResult
from guirl.rollout.runner import EpisodeRunner, EpisodeSpec, EpisodeState, Rollout


def run_parallel(runner: EpisodeRunner, pool: EnvPool, specs: Iterable[EpisodeSpec]) -> list[Rollout]:
    """Run every spec on the pool; rollouts are returned in the order of ``specs``."""
    queue = deque(enumerate(specs))
    results: list[Rollout | None] = [None] * len(queue)
    active: dict[int, tuple[int, EpisodeState]] = {}

    def start(worker: int) -> None:
        if not queue:
            return
        index, spec = queue.popleft()
        active[worker] = (index, EpisodeState(runner, spec, {"worker": worker}))
        pool.submit(worker, "reset", spec.seed, spec.reset_options() or None)

    for worker in range(pool.num_workers):
        start(worker)
    while active:
        for answer in pool.wait():
            index, state = active[answer.worker]
            _advance(state, answer, pool)
            if state.result is not None:
                results[index] = runner.finish_episode(state)
                del active[answer.worker]
                start(answer.worker)
    return [r for r in results if r is not None]


def _advance(state: EpisodeState, answer: PoolResult, pool: EnvPool) -> None:
    """Take the worker's answer, then call the policy until an action must be executed."""
    if not answer.ok:
        step = f"step {len(state.steps)}" if answer.command == "step" else answer.command
        state.fail(f"{step} failed on worker {answer.worker}: {answer.error}")
        return
    if answer.command == "reset":
        state.begin(answer.value, answer.elapsed_s)
    elif state.observe(answer.value, answer.elapsed_s):
        return
    while state.result is None:
        action = state.decide()
        if action is not None:
            pool.submit(answer.worker, "step", action)
            return
        state.observe(None, 0.0)


def steps_per_second(rollouts: list[Rollout], wall_s: float) -> float:
    """Environment steps executed per wall-clock second."""
    executed = sum(1 for r in rollouts for s in r.steps if "env" in s.timings and s.timings["env"] > 0)
    return executed / wall_s if wall_s > 0 else 0.0


__all__ = ["run_parallel", "steps_per_second"]
