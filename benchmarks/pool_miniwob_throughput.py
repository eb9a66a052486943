"""MiniWoB++ environment throughput with 1, 2 and 4 pool workers.

Runs random clicks (a policy that costs nothing) on a mix of tasks through
``run_parallel`` and prints, per worker count, environment steps per second
(wall clock, resets included) and the per-step latency percentiles measured
inside the workers (action + screenshot + DOM read), plus reset latency.

    .venv/bin/python benchmarks/pool_miniwob_throughput.py --workers 1 2 4 --episodes 40
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from guirl.actions.types import Action, ActionType
from guirl.envs.pool import EnvPool
from guirl.rollout import EpisodeRunner, EpisodeSpec, PolicyInput
from guirl.rollout.parallel import run_parallel

TASKS = ["click-test-2", "click-checkboxes", "enter-text", "click-dialog"]


def random_clicks(inputs: PolicyInput) -> Action:
    rng = random.Random(hash((inputs.episode.get("seed"), inputs.step_index)))
    width, height = inputs.screenshot.size
    return Action(type=ActionType.CLICK, point=(rng.uniform(0, width), rng.uniform(50, height)), frame=inputs.frame)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def measure(workers: int, episodes: int, max_steps: int) -> dict[str, float]:
    runner = EpisodeRunner(random_clicks, max_steps=max_steps)
    with EnvPool("miniwob", workers) as pool:
        warmup = [EpisodeSpec(task=TASKS[w % len(TASKS)], seed=10_000 + w) for w in range(workers)]
        run_parallel(runner, pool, warmup)  # start every browser before timing
        specs = [EpisodeSpec(task=TASKS[i % len(TASKS)], seed=i) for i in range(episodes)]
        start = time.perf_counter()
        rollouts = run_parallel(runner, pool, specs)
        wall = time.perf_counter() - start
    step_s = [s.timings["env"] for r in rollouts for s in r.steps if s.timings.get("env", 0) > 0]
    reset_s = [r.timings["reset"] for r in rollouts]
    crashed = sum(bool(r.extra.get("crashed")) for r in rollouts)
    return {
        "workers": workers,
        "episodes": len(rollouts),
        "steps": len(step_s),
        "crashed": crashed,
        "wall_s": wall,
        "steps_per_s": len(step_s) / wall,
        "step_p50_ms": 1000 * percentile(step_s, 50),
        "step_p90_ms": 1000 * percentile(step_s, 90),
        "step_p99_ms": 1000 * percentile(step_s, 99),
        "reset_mean_ms": 1000 * statistics.mean(reset_s),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4], help="worker counts to measure")
    parser.add_argument("--episodes", type=int, default=40, help="episodes per measurement")
    parser.add_argument("--max-steps", type=int, default=5, help="step limit per episode")
    args = parser.parse_args()
    print(f"{'workers':>7} {'episodes':>8} {'steps':>6} {'steps/s':>8} {'p50 ms':>7} {'p90 ms':>7} {'p99 ms':>7} "
          f"{'reset ms':>8} {'crashed':>7}")
    for workers in args.workers:
        row = measure(workers, args.episodes, args.max_steps)
        print(f"{row['workers']:>7} {row['episodes']:>8} {row['steps']:>6} {row['steps_per_s']:>8.1f} "
              f"{row['step_p50_ms']:>7.1f} {row['step_p90_ms']:>7.1f} {row['step_p99_ms']:>7.1f} "
              f"{row['reset_mean_ms']:>8.1f} {row['crashed']:>7}", flush=True)


if __name__ == "__main__":
    main()
