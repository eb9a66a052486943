"""Hypothesis profiles: the default run (CI) is derandomized, so a test run is
reproducible and never fails on a new random example by chance;
``HYPOTHESIS_PROFILE=explore`` draws fresh random examples (run it when
changing parsers, rewards or losses, and fix what it finds).

Tests marked ``browser`` need Chromium and chromedriver: without them they are
skipped, or fail under ``GUIRL_REQUIRE_BROWSER=1`` (``.ci/run`` sets it;
tests/browser_check.py)."""

import os

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_runtest_setup(item):
    """A ``browser`` test without a browser: skipped, or failed under ``GUIRL_REQUIRE_BROWSER=1``
    (before its fixtures start one)."""
    if item.get_closest_marker("browser") is not None:
        from browser_check import require_miniwob_browser

        require_miniwob_browser()


@pytest.fixture(scope="module")
def sim_data(tmp_path_factory):
    """Two small built-in-world task families, recorded (seed 5): the trainer tests' trajectories."""
    from guirl.envs.sim import generate_dataset

    out = tmp_path_factory.mktemp("sim")
    generate_dataset(out_dir=str(out), seed=5, train_per_task=1, test_per_task=1, grounding_train=4, grounding_test=2,
                     tasks=["desktop.open_file", "mobile.toggle_setting"], heldout_tasks=[])
    return out / "trajectories" / "train.jsonl"


@pytest.fixture(scope="module")
def sim_episode(tmp_path_factory):
    """One expert episode of the built-in world (mobile.toggle_setting, data seed 3): recorded steps with A*_t."""
    from guirl.envs.sim import SimEnv
    from guirl.envs.sim.generation import ImageStore, expert_episode

    env = SimEnv(domain="mobile", preset="coarse", task="mobile.toggle_setting")
    episode, _ = expert_episode(env, 3, "mobile.toggle_setting", "ep", ImageStore(tmp_path_factory.mktemp("sim")))
    return episode
