"""MiniWoB++ step latency with settling on and off, and pool throughput.

Latency (always): two environments in this process, one that settles after
each action (the default) and one that does not (``settle=False``), play the
same episodes: the same tasks and seeds, and random clicks that depend only
on the seed and the step index, one step on each in turn so that both see
the same machine load. Prints, per setting, the distribution of the wall
time of ``env.step`` (action + settle + screenshot + DOM read): n, p50, p90,
max, mean; then, for settle on, how many steps waited and for what
(``info["settle_reason"]``: a timer due, an animation, a DOM change made
asynchronously, ...), and the slowest tasks.

Throughput (``--workers N ...``): random clicks through ``run_parallel`` on
N pool workers; environment steps per second (wall clock, resets included),
step latency measured inside the workers, and reset latency.

    .venv/bin/python benchmarks/pool_miniwob_throughput.py                 # latency, 12 tasks x 3 seeds
    .venv/bin/python benchmarks/pool_miniwob_throughput.py --workers 1 2 4 --episodes 40
"""

from __future__ import annotations

import argparse
import collections
import random
import statistics
import time

from guirl.actions.types import Action, ActionType
from guirl.envs import make_env
from guirl.envs.pool import EnvPool
from guirl.rollout import EpisodeRunner, EpisodeSpec, PolicyInput
from guirl.rollout.parallel import run_parallel

#: Throughput mix.
TASKS = ["click-test-2", "click-checkboxes", "enter-text", "click-dialog"]

#: Latency mix: simple forms and buttons, a dialog, tabs, hover-swapped icons
#: (social-media), a jQuery UI accordion that animates (click-collapsible) and
#: a jQuery UI autocomplete whose menu widget delays every document click by a
#: 300 ms timer (use-autocomplete; about 1 registered task in 13 has such a
#: menu widget).
LATENCY_TASKS = [
    "click-test-2",
    "click-checkboxes",
    "enter-text",
    "click-dialog",
    "click-button",
    "login-user",
    "focus-text",
    "click-link",
    "click-tab-2",
    "social-media",
    "click-collapsible",
    "use-autocomplete",
]


def click_at(seed: int, step: int, width: int, height: int) -> tuple[float, float]:
    """A random point below the instruction, fixed by (seed, step)."""
    rng = random.Random(seed * 1000 + step)
    return rng.uniform(0, width), rng.uniform(50, height)


def random_clicks(inputs: PolicyInput) -> Action:
    width, height = inputs.screenshot.size
    point = click_at(inputs.episode.get("seed") or 0, inputs.step_index, width, height)
    return Action(type=ActionType.CLICK, point=point, frame=inputs.frame)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def measure_latency(tasks: list[str], seeds: int, max_steps: int) -> dict[str, dict]:
    """Step wall times (ms) and infos with settle on and off, on the same episodes and actions."""
    envs = {"on": make_env("miniwob", task=tasks[0]), "off": make_env("miniwob", task=tasks[0], settle=False)}
    results: dict[str, dict] = {name: {"ms": [], "task": [], "info": []} for name in envs}
    try:
        for seed in range(seeds):
            for task in tasks:
                obs = {name: env.reset(seed=seed, options={"task": task}) for name, env in envs.items()}
                live = set(envs)
                for step in range(max_steps):
                    for name in sorted(live):  # "off", then "on": one step each, in turn
                        width, height = obs[name].screenshot.size
                        action = Action(
                            type=ActionType.CLICK, point=click_at(seed, step, width, height), frame=obs[name].frame
                        )
                        start = time.perf_counter()
                        obs[name], _, terminated, truncated, info = envs[name].step(action)
                        results[name]["ms"].append(1000 * (time.perf_counter() - start))
                        results[name]["task"].append(task)
                        results[name]["info"].append(info)
                        if terminated or truncated:
                            live.discard(name)
                    if not live:
                        break
    finally:
        for env in envs.values():
            env.close()
    return results


def print_latency(results: dict[str, dict]) -> None:
    print(f"{'settle':>6} {'n':>5} {'p50 ms':>7} {'p90 ms':>7} {'max ms':>7} {'mean ms':>8}")
    for name in ("on", "off"):
        ms = results[name]["ms"]
        print(
            f"{name:>6} {len(ms):>5} {percentile(ms, 50):>7.1f} {percentile(ms, 90):>7.1f} {max(ms):>7.1f} "
            f"{statistics.mean(ms):>8.1f}"
        )
    infos = results["on"]["info"]
    waited = collections.Counter(i.get("settle_reason") for i in infos if i.get("settle_reason"))
    capped = sum(bool(i.get("settle_capped")) for i in infos)
    settle_ms = [i.get("settle_ms", 0.0) for i in infos]
    print(
        f"settle on: {sum(waited.values())} of {len(infos)} steps waited (first reason: "
        + ", ".join(f"{reason} {count}" for reason, count in waited.most_common())
        + f"); {capped} hit the cap; settle p50 {percentile(settle_ms, 50):.1f} ms, "
        f"p90 {percentile(settle_ms, 90):.1f} ms"
    )
    by_task: dict[str, list[float]] = collections.defaultdict(list)
    for task, ms in zip(results["on"]["task"], results["on"]["ms"]):
        by_task[task].append(ms)
    slowest = sorted(by_task, key=lambda t: -statistics.median(by_task[t]))[:4]
    print(
        "slowest tasks (settle on, step p50 ms): "
        + ", ".join(f"{t} {statistics.median(by_task[t]):.0f}" for t in slowest)
    )


def measure_throughput(workers: int, episodes: int, max_steps: int) -> dict[str, float]:
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
    parser.add_argument("--tasks", nargs="+", default=LATENCY_TASKS, help="latency: tasks")
    parser.add_argument("--seeds", type=int, default=3, help="latency: episodes per task (seeds 0..N-1)")
    parser.add_argument("--latency-steps", type=int, default=5, help="latency: step limit per episode")
    parser.add_argument("--workers", type=int, nargs="*", default=[], help="throughput: worker counts (none: skip)")
    parser.add_argument("--episodes", type=int, default=40, help="throughput: episodes per measurement")
    parser.add_argument("--max-steps", type=int, default=5, help="throughput: step limit per episode")
    args = parser.parse_args()
    print(
        f"step latency, settle on and off: {len(args.tasks)} tasks x {args.seeds} seeds, random clicks, "
        f"at most {args.latency_steps} steps per episode",
        flush=True,
    )
    print_latency(measure_latency(args.tasks, args.seeds, args.latency_steps))
    if not args.workers:
        return
    print(
        f"\n{'workers':>7} {'episodes':>8} {'steps':>6} {'steps/s':>8} {'p50 ms':>7} {'p90 ms':>7} {'p99 ms':>7} "
        f"{'reset ms':>8} {'crashed':>7}"
    )
    for workers in args.workers:
        row = measure_throughput(workers, args.episodes, args.max_steps)
        print(
            f"{row['workers']:>7} {row['episodes']:>8} {row['steps']:>6} {row['steps_per_s']:>8.1f} "
            f"{row['step_p50_ms']:>7.1f} {row['step_p90_ms']:>7.1f} {row['step_p99_ms']:>7.1f} "
            f"{row['reset_mean_ms']:>8.1f} {row['crashed']:>7}",
            flush=True,
        )


if __name__ == "__main__":
    main()
