"""MiniWoB++ in headless Chromium (registered as ``make_env("miniwob")``)."""

from guirl.envs.miniwob.browser import browser_available
from guirl.envs.miniwob.env import BrowserCrashed, MiniWoBEnv, available_tasks

__all__ = ["BrowserCrashed", "MiniWoBEnv", "available_tasks", "browser_available"]
