"""Speed of the verification web app (`guirl datagen verify`) on a large project, over real HTTP.

Builds a project of ``--candidates`` candidates (synthetic explored steps on
real built-in-world screenshots, 5 candidates a step), starts the server as
its own process, and measures:

- start: process start -> the "serving" line, -> first page (``GET /``) and
  ``GET /api/project`` answered (includes Python's and guirl's imports);
- listing: ``GET /api/steps`` (every step and candidate), first and median of 5;
- marks: ``--marks`` sequential ``POST /api/mark`` (each answered after its
  commit): p50 / p99 / max; then the same number spread over 4 client threads;
- export: ``POST /api/export``.

``--screenshot PATH`` instead saves a screenshot of the page (headless
Chromium) on a small real project, as docs/images/verify_app.png.

    .venv/bin/python benchmarks/verify_app.py
    .venv/bin/python benchmarks/verify_app.py --screenshot docs/images/verify_app.png
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from guirl.datagen.verify_app.sample import write_sample_project

ROOT = Path(__file__).resolve().parents[1]


def request(url: str, body: dict | None = None) -> tuple[bytes, float]:
    """One real HTTP request; (response body, seconds)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"} if data else {})
    start = time.perf_counter()
    with urllib.request.urlopen(req, timeout=60) as resp:
        payload = resp.read()
    return payload, time.perf_counter() - start


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def mark_many(url: str, ids: list[str], annotator: str, latencies: list[float]) -> None:
    rng = random.Random(annotator)
    for cid in ids:
        _, seconds = request(url + "api/mark", {"candidate_id": cid, "label": rng.random() < 0.5, "annotator": annotator})
        latencies.append(seconds)


def benchmark(candidates: int, marks: int, workdir: Path) -> None:
    per_step = 5
    start = time.perf_counter()
    project = write_sample_project(workdir / "project", seed=3, steps=candidates // per_step, per_step=per_step)
    built = time.perf_counter() - start
    ids = [c["id"] for line in (project / "candidates.jsonl").read_text().splitlines()
           for c in json.loads(line)["candidates"]]
    print(f"project: {len(ids)} candidates in {candidates // per_step} steps "
          f"({(project / 'candidates.jsonl').stat().st_size / 1e6:.1f} MB candidates.jsonl, built in {built:.1f} s)")

    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "guirl.commands.verify", "--data", str(project), "--port", "0"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = next(line.split()[1] for line in proc.stdout if line.startswith("serving "))
        serving = time.perf_counter() - start
        request(url)
        request(url + "api/project")
        ready = time.perf_counter() - start
        listing = [request(url + "api/steps") for _ in range(5)]
        print(f"start: serving after {serving:.2f} s, first page + /api/project answered after {ready:.2f} s")
        print(f"listing: GET /api/steps {len(listing[0][0]) / 1e6:.1f} MB, first {ms(listing[0][1])}, "
              f"median of 5 {ms(statistics.median(s for _, s in listing))}")

        rng = random.Random(0)
        sequential: list[float] = []
        mark_many(url, rng.sample(ids, marks), "bench", sequential)
        print(f"mark, 1 client x {marks}: p50 {ms(percentile(sequential, 50))}, p99 {ms(percentile(sequential, 99))}, "
              f"max {ms(max(sequential))}")
        parallel: list[float] = []
        chunks = [rng.sample(ids, marks // 4) for _ in range(4)]
        threads = [threading.Thread(target=mark_many, args=(url, chunk, f"client{i}", parallel))
                   for i, chunk in enumerate(chunks)]
        wall = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - wall
        print(f"mark, 4 clients x {marks // 4}: p50 {ms(percentile(parallel, 50))}, "
              f"p99 {ms(percentile(parallel, 99))}, {len(parallel) / wall:.0f} marks/s")
        payload, seconds = request(url + "api/export", {"name": "verified.jsonl"})
        result = json.loads(payload)
        print(f"export: {result['episodes']} episodes, {result['positives']} positives in {ms(seconds)} "
              f"(merge: {result['merged_by']})")
    finally:
        proc.terminate()
        proc.wait()


def screenshot(path: Path, workdir: Path) -> None:
    """The page on real built-in-world screens, a few candidates marked, saved as a PNG."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.wait import WebDriverWait

    from guirl.datagen.verify_app import load_project
    from guirl.datagen.verify_app.server import make_verify_server, url_of

    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    project = load_project(write_sample_project(workdir / "project", seed=3, per_step=6))
    server, store = make_verify_server(project, workdir / "verify.sqlite")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
                 "--force-device-scale-factor=1", "--window-size=1400,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    try:
        wait = WebDriverWait(driver, 20)
        driver.get(url_of(server))
        wait.until(lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
        driver.find_element(By.ID, "annotator").send_keys("alice", Keys.TAB)
        body = driver.find_element(By.TAG_NAME, "body")
        for key in "tf" + "j" * 4 + "tfj":  # two marks on step 1, two on step 2, its fourth candidate current
            body.send_keys(key)
        wait.until(lambda d: d.execute_script("return document.body.dataset.pending === '0'"))
        time.sleep(0.3)
        path.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(path))
        print(f"wrote {path}")
    finally:
        driver.quit()
        server.shutdown()
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=10_000, help="candidates in the project (default 10000)")
    parser.add_argument("--marks", type=int, default=500, help="marks to time (default 500)")
    parser.add_argument("--screenshot", type=Path, default=None, help="save a screenshot of the page here and exit")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="verify-bench-") as tmp:
        if args.screenshot:
            screenshot(args.screenshot, Path(tmp))
        else:
            benchmark(args.candidates, args.marks, Path(tmp))


if __name__ == "__main__":
    main()
