"""Start headless Debian Chromium for MiniWoB++ through the ``miniwob`` package.

The ``miniwob`` package's :class:`~miniwob.selenium_instance.SeleniumInstance`
knows the task URLs, the sync screen, seeding and the reward globals; it
starts Chrome with only ``headless``/``no-sandbox``/``disable-gpu`` and never
sizes the window. :class:`BrowserInstance` replaces only ``create_driver``:
it starts ``/usr/bin/chromium`` through ``/usr/bin/chromedriver`` with the
flags a closed network needs, and sizes the window so that the page's
*inner* viewport holds the task (headless Chromium counts window decorations,
so ``--window-size=500,320`` gives a 177 px tall viewport). ``flight.*``
tasks get their larger 600x800 window.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import threading
import urllib.parse
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from miniwob import http_server as miniwob_http_server
from miniwob.selenium_instance import DEFAULT_BASE_URL, HTML_DIR, SeleniumInstance
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service as ChromeService
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.wait import WebDriverWait

from guirl.envs.miniwob.execute import PRELOAD_HOVER_IMAGES_JS
from guirl.envs.pool import descendant_pids, kill_pids

log = logging.getLogger(__name__)

#: Flags headless Chromium needs here (no sandbox in containers, no network
#: services that hang on a closed network).
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
)

DEFAULT_CHROMIUM = "/usr/bin/chromium"
DEFAULT_CHROMEDRIVER = "/usr/bin/chromedriver"


def find_browser(chromium: str | None = None, chromedriver: str | None = None) -> tuple[str, str]:
    """Paths of chromium and chromedriver, or an error saying how to install them.

    Order: the arguments, then ``MINIWOB_CHROME_BINARY`` / ``MINIWOB_CHROMEDRIVER``
    (the miniwob package's variables), then Debian's ``/usr/bin`` paths, then ``PATH``.
    """
    chromium = chromium or os.getenv("MINIWOB_CHROME_BINARY") or _which(DEFAULT_CHROMIUM, "chromium")
    chromedriver = chromedriver or os.getenv("MINIWOB_CHROMEDRIVER") or _which(DEFAULT_CHROMEDRIVER, "chromedriver")
    missing = [name for name, path in (("chromium", chromium), ("chromedriver", chromedriver)) if not path]
    if missing:
        raise FileNotFoundError(
            f"{' and '.join(missing)} not found; install Debian's chromium and chromium-driver "
            "(scripts/install_browser.sh) or set MINIWOB_CHROME_BINARY and MINIWOB_CHROMEDRIVER"
        )
    return chromium, chromedriver  # type: ignore[return-value]


def _which(default: str, name: str) -> str | None:
    if Path(default).is_file():
        return default
    return shutil.which(name)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002 (stdlib signature)
        return None  # one line per file request would flood the logs


def _quiet_http_server() -> str:
    """miniwob's local HTTP server for ``flight.*`` pages, without its request log."""
    if miniwob_http_server.SERVER_SINGLETON is None:
        httpd = ThreadingHTTPServer(("localhost", 0), functools.partial(_QuietHandler, directory=str(HTML_DIR)))
        threading.Thread(target=httpd.serve_forever, daemon=True, name="miniwob-http").start()
        miniwob_http_server.SERVER_SINGLETON = httpd  # miniwob's SeleniumInstance reuses it
    return miniwob_http_server.start_http_server(str(HTML_DIR))


def task_url(task: str) -> str:
    """The page of a MiniWoB task (``flight.*`` pages are served over local HTTP, as in miniwob)."""
    if task.startswith("flight."):
        return urllib.parse.urljoin(_quiet_http_server(), task.replace(".", "/") + "/wrapper.html")
    return urllib.parse.urljoin(DEFAULT_BASE_URL, f"{task}.html")


def browser_available() -> bool:
    """Whether chromium and chromedriver can be found (for skipping tests)."""
    try:
        find_browser()
    except FileNotFoundError:
        return False
    return True


class BrowserInstance(SeleniumInstance):
    """A miniwob SeleniumInstance on Debian's headless Chromium (see module doc)."""

    def __init__(self, subdomain: str, chromium: str, chromedriver: str, extra_flags: tuple[str, ...] = ()):
        base_url = _quiet_http_server() if subdomain.startswith("flight.") else None
        super().__init__(index=0, subdomain=subdomain, headless=True, base_url=base_url, threading=False)
        self.chromium = chromium
        self.chromedriver = chromedriver
        self.extra_flags = extra_flags
        self.process_ids: list[int] = []

    def create_driver(self) -> None:
        options = webdriver.ChromeOptions()
        for flag in (*CHROMIUM_FLAGS, *self.extra_flags):
            options.add_argument(flag)
        options.add_argument(f"--window-size={self.window_width},{self.window_height}")
        options.binary_location = self.chromium
        self.driver = webdriver.Chrome(service=ChromeService(executable_path=self.chromedriver), options=options)
        self.process_ids = descendant_pids(self.driver.service.process.pid, include_self=True)
        self.driver.implicitly_wait(0)
        self.load_page(self.url)
        self._fit_viewport()

    def load_page(self, url: str) -> None:
        """Open a task page and wait for its sync screen."""
        self.url = url
        self.driver.get(url)
        WebDriverWait(self.driver, 10).until(EC.element_to_be_clickable((By.ID, self.SYNC_SCREEN_ID)))
        self.driver.execute_async_script(PRELOAD_HOVER_IMAGES_JS)  # clicks do not pause for hover images

    def _fit_viewport(self) -> None:
        """Grow the window until the inner viewport is window_width x window_height."""
        inner_w, inner_h, outer_w, outer_h = self.driver.execute_script(
            "return [window.innerWidth, window.innerHeight, window.outerWidth, window.outerHeight];"
        )
        if inner_w < self.window_width or inner_h < self.window_height:
            self.driver.set_window_size(
                outer_w + max(0, self.window_width - inner_w), outer_h + max(0, self.window_height - inner_h)
            )
        self.inner_width, self.inner_height = self.driver.execute_script(
            "return [window.innerWidth, window.innerHeight];"
        )

    def close(self) -> None:
        """Quit the driver, then kill whatever of its processes is still alive.

        A chromedriver killed from outside leaves its chromium orphaned;
        ``driver.quit()`` then fails and the orphan is killed here.
        """
        driver = getattr(self, "driver", None)
        if driver is not None:
            try:
                driver.quit()
            except (WebDriverException, OSError) as err:  # the driver is already gone
                log.info("driver.quit() failed (%s); killing the browser processes", type(err).__name__)
        kill_pids(self.process_ids)
        self.process_ids = []
        self.died = True
