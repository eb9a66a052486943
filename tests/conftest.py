"""Hypothesis profiles: the default run (CI) is derandomized, so a test run is
reproducible and never fails on a new random example by chance;
``HYPOTHESIS_PROFILE=explore`` draws fresh random examples (run it when
changing parsers, rewards or losses, and fix what it finds)."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
