"""What a browser test does when Chromium is missing: skip, or fail under ``GUIRL_REQUIRE_BROWSER=1``.

Every test marked ``browser`` goes through :func:`require_miniwob_browser` before its fixtures run
(``pytest_runtest_setup`` in conftest.py); the tests that drive Debian's ``chromium`` themselves also
call :func:`require_debian_chromium`. ``make test`` installs Chromium (``make browser``,
``scripts/install_browser.sh``) and ``.ci/run`` sets ``GUIRL_REQUIRE_BROWSER=1``, so in CI a missing
or broken browser install fails every test that needs it instead of quietly skipping them. Without
the variable (a developer machine without Chromium) the browser tests are skipped as before.
"""

from __future__ import annotations

import os
import shutil
from typing import NoReturn

import pytest

REQUIRE_BROWSER = "GUIRL_REQUIRE_BROWSER"


def browser_required() -> bool:
    """Whether ``GUIRL_REQUIRE_BROWSER=1`` is set (a missing browser is then a failure)."""
    return os.environ.get(REQUIRE_BROWSER, "").strip() == "1"


def missing_browser(reason: str, *, module_level: bool = False) -> NoReturn:
    """Skip with ``reason``, or fail with it when ``GUIRL_REQUIRE_BROWSER=1``.

    ``module_level``: called at import time of a test module (the whole module is skipped, or its
    collection fails).
    """
    __tracebackhide__ = True  # report the test that needed the browser, not this helper
    if browser_required():
        pytest.fail(f"{reason}, and {REQUIRE_BROWSER}=1 makes that a failure, not a skip", pytrace=False)
    pytest.skip(reason, allow_module_level=module_level)


def require_miniwob_browser() -> None:
    """Chromium and chromedriver as the MiniWoB++ environment finds them (``find_browser``)."""
    __tracebackhide__ = True
    from guirl.envs.miniwob import browser_available

    if not browser_available():
        missing_browser("chromium/chromedriver not installed (scripts/install_browser.sh)")


def require_debian_chromium() -> None:
    """Debian's ``chromium`` and ``chromedriver`` on PATH (the report and verification-app page tests)."""
    __tracebackhide__ = True
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        missing_browser("needs Debian chromium and chromium-driver (/usr/bin/chromium, /usr/bin/chromedriver)")
