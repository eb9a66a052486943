"""Speed of the built-in GUI world: env steps per second (render included) and dataset generation rate.

Usage: .venv/bin/python benchmarks/sim_speed.py [--episodes 20]

For each size, expert action sequences are recorded first (untimed), then
replayed through fresh envs and timed (text-mask caches cleared first): ``oracle=False`` measures world +
rendering (the screenshot of every step), ``oracle=True`` adds computing A*_t,
the sub-goal and the plan at every step. Target: >= 300 steps/s without the
oracle on one core. Then a small ``generate_dataset`` run is timed (PNG
writing included).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time

from guirl.envs.sim import SimEnv, available_tasks, generate_dataset
from guirl.envs.sim.render import _fitted, _text_mask

SIZES = {"desktop 1280x800": ("desktop", "realistic"), "web 1280x800": ("web", "realistic"),
         "phone 540x1200": ("mobile", "realistic"), "phone 1080x2400": ("mobile", "hd"),
         "coarse desktop 512x512": ("desktop", "coarse"), "coarse phone 384x512": ("mobile", "coarse")}


def record(domain: str, preset: str, episodes: int) -> list[tuple[str, int, list]]:
    runs = []
    tasks = [t for t in available_tasks(domain) if not t.endswith(".ground")]
    for i in range(episodes):
        task = tasks[i % len(tasks)]
        env = SimEnv(domain=domain, preset=preset, task=task)
        obs, rng, actions, done = env.reset(seed=i), random.Random(i), [], False
        while not done:
            action = rng.choice(obs.valid_actions)
            actions.append(action)
            obs, _, term, trunc, _ = env.step(action)
            done = term or trunc
        runs.append((task, i, actions))
    return runs


def replay(domain: str, preset: str, runs: list, oracle: bool) -> tuple[float, float]:
    """(steps per CPU second of this process, steps per wall-clock second)."""
    steps, cpu, wall = 0, 0.0, 0.0
    _text_mask.cache_clear()  # start cold: text masks are cached across episodes
    _fitted.cache_clear()
    for task, seed, actions in runs:
        env = SimEnv(domain=domain, preset=preset, task=task, oracle=oracle)
        start, start_cpu = time.perf_counter(), time.process_time()
        env.reset(seed=seed)
        for action in actions:
            env.step(action)
        wall += time.perf_counter() - start
        cpu += time.process_time() - start_cpu
        steps += len(actions) + 1  # reset renders a screen too
    return steps / cpu, steps / wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=20, help="recorded expert episodes per size")
    args = parser.parse_args()
    print("steps/s per CPU second of this one process (wall-clock rate in brackets; lower on a shared machine)")
    print(f"{'screen':<24} {'world+render':>20} {'+ oracle A*_t':>20}")
    for name, (domain, preset) in SIZES.items():
        runs = record(domain, preset, args.episodes)
        plain = replay(domain, preset, runs, oracle=False)
        full = replay(domain, preset, runs, oracle=True)
        print(f"{name:<24} {plain[0]:>10.0f} ({plain[1]:>6.0f}) {full[0]:>10.0f} ({full[1]:>6.0f})")
    with tempfile.TemporaryDirectory() as out:
        start, start_cpu = time.perf_counter(), time.process_time()
        manifest = generate_dataset(out_dir=out, preset="coarse", train_per_task=4, test_per_task=1,
                                    grounding_train=20, grounding_test=5, recovery_prob=0.3)
        seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    episodes = sum(manifest["counts"].values())
    print(f"gen-data (coarse, PNGs written): {manifest['steps']} steps, {episodes} episodes in {cpu:.1f} CPU s "
          f"({seconds:.1f} s wall) = {manifest['steps'] / cpu:.0f} steps/s, {episodes / cpu:.1f} episodes/s per CPU s")


if __name__ == "__main__":
    main()
