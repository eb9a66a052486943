"""Browser tests skip without Chromium, and fail instead under ``GUIRL_REQUIRE_BROWSER=1`` (as ``.ci/run`` sets)."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_check import REQUIRE_BROWSER, browser_required, missing_browser


def test_without_the_variable_a_missing_browser_skips(monkeypatch):
    monkeypatch.delenv(REQUIRE_BROWSER, raising=False)
    assert not browser_required()
    with pytest.raises(pytest.skip.Exception, match="no chromium"):
        missing_browser("no chromium")


@pytest.mark.parametrize("value", ["0", "", "yes"])
def test_only_the_value_1_requires_the_browser(monkeypatch, value):
    monkeypatch.setenv(REQUIRE_BROWSER, value)
    assert not browser_required()


def test_with_the_variable_a_missing_browser_fails(monkeypatch):
    monkeypatch.setenv(REQUIRE_BROWSER, "1")
    assert browser_required()
    with pytest.raises(pytest.fail.Exception, match=f"no chromium, and {REQUIRE_BROWSER}=1 makes that a failure"):
        missing_browser("no chromium")
    with pytest.raises(pytest.fail.Exception):
        missing_browser("no chromium", module_level=True)


def test_ci_sets_the_variable_before_the_tests():
    lines = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text().splitlines()
    assert f"export {REQUIRE_BROWSER}=1" in lines
    assert lines.index(f"export {REQUIRE_BROWSER}=1") < lines.index("make test")
