"""The human verification app (guirl.datagen.verify_app, `guirl datagen verify`): loader, store, HTTP, browser."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from browser_check import require_debian_chromium

from guirl.commands import verify as verify_cli
from guirl.data.io import DataError, read_episodes
from guirl.datagen.verify_app import MarkStore, load_project, merge_labels
from guirl.datagen.verify_app import export as export_module
from guirl.datagen.verify_app.sample import write_sample_project
from guirl.datagen.verify_app.server import make_verify_server, url_of

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def sample_dir(tmp_path_factory) -> Path:
    """18 real built-in-world web steps x 5 candidates (built once, copied per test)."""
    return write_sample_project(tmp_path_factory.mktemp("verify") / "project", seed=3)


@pytest.fixture
def project_dir(sample_dir, tmp_path) -> Path:
    """A private copy (its own database); the manifest still points at the shared episodes file."""
    target = tmp_path / "project"
    target.mkdir()
    for name in ("manifest.json", "candidates.jsonl"):
        shutil.copy(sample_dir / name, target / name)
    return target


def _lines(directory: Path) -> list[dict]:
    return [json.loads(line) for line in (directory / "candidates.jsonl").read_text().splitlines()]


def _write_lines(directory: Path, records: list[dict]) -> None:
    (directory / "candidates.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def _labels(db: Path) -> dict[str, bool]:
    store = MarkStore(db)
    try:
        return store.labels()
    finally:
        store.close()


class Client:
    """A JSON client over real HTTP (one connection per request, as the page's fetch may)."""

    def __init__(self, url: str):
        self.url = url

    def request(self, path: str, body: dict | None = None) -> tuple[int, dict]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path.lstrip("/"), data=data,
                                     headers={"Content-Type": "application/json"} if data else {})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())


@pytest.fixture
def server(project_dir):
    """The app on a free port in this process; yields (Client, project, db path)."""
    project = load_project(project_dir)
    db = project_dir / "verify.sqlite"
    httpd, store = make_verify_server(project, db, port=0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield Client(url_of(httpd)), project, db
    httpd.shutdown()
    httpd.server_close()
    store.close()


# -- loader ---------------------------------------------------------------------------
def _edit_line(line: int, edit):
    """A breaker that applies ``edit`` to the record on ``line`` (1-based) of candidates.jsonl."""

    def breaker(directory: Path) -> None:
        records = _lines(directory)
        edit(records[line - 1])
        _write_lines(directory, records)

    return breaker


def _insert_garbage(directory: Path) -> None:
    path = directory / "candidates.jsonl"
    path.write_text(path.read_text().replace("\n", "\n{oops\n", 1))  # becomes line 2


def _duplicate_first(directory: Path) -> None:
    _write_lines(directory, _lines(directory) + _lines(directory)[:1])


# case -> (breaker, line the message must name, text it must hold)
LOADER_CASES = {
    "bad json": (_insert_garbage, 2, "not valid JSON"),
    "action type": (_edit_line(3, lambda r: r["candidates"][1]["action"].update(type="tap")), 3,
                    "field 'candidates.1.action.type'"),
    "missing field": (_edit_line(1, lambda r: r.pop("instruction")), 1,
                      "field 'instruction': required field is missing"),
    "screen size": (_edit_line(2, lambda r: r.update(screen_size=[512])), 2, "field 'screen_size"),
    "screenshot": (_edit_line(4, lambda r: r.update(screenshot="nope.png")), 4,
                   "field 'screenshot': image file 'nope.png' does not exist"),
    "id prefix": (_edit_line(2, lambda r: r["candidates"][0].update(id="other/0/0")), 2,
                  "field 'candidates.0.id': 'other/0/0' must start with"),
    "duplicate step": (_duplicate_first, 19, "is already on line 1"),
    "unsized frame": (_edit_line(5, lambda r: r["candidates"][0]["action"].update(point=[9, 9], frame={"kind": "resized"})), 5,
                      "field 'candidates.0.action.frame'"),
}


@pytest.mark.parametrize("case", sorted(LOADER_CASES))
def test_loader_names_file_line_and_field(project_dir, case):
    breaker, line, expected = LOADER_CASES[case]
    breaker(project_dir)
    with pytest.raises(DataError) as err:
        load_project(project_dir)
    message = str(err.value)
    assert f"{project_dir / 'candidates.jsonl'}:{line}:" in message and expected in message, message


def test_loader_checks_the_manifest(project_dir, tmp_path):
    manifest = project_dir / "manifest.json"
    good = json.loads(manifest.read_text())
    with pytest.raises(DataError, match="no such directory"):
        load_project(tmp_path / "absent")
    manifest.write_text(json.dumps({**good, "episodes": "relative.jsonl"}))
    with pytest.raises(DataError, match=r"manifest.json: field 'episodes': 'relative.jsonl' must be an absolute"):
        load_project(project_dir)
    manifest.write_text(json.dumps({**good, "episodes": str(tmp_path / "gone.jsonl")}))
    with pytest.raises(DataError, match=r"field 'episodes': .*gone.jsonl does not exist"):
        load_project(project_dir)
    manifest.write_text("{\n  'episodes': 1")
    with pytest.raises(DataError, match=r"manifest.json:2: not valid JSON"):
        load_project(project_dir)
    manifest.unlink()
    with pytest.raises(DataError, match=r"manifest.json: no such file"):
        load_project(project_dir)


def test_loader_reads_the_sample(project_dir):
    project = load_project(project_dir)
    assert len(project.steps) == 18 and project.n_candidates() == 90  # 18 steps x 5 candidates
    first = project.steps[0]
    assert project.where[first.candidates[2].id] == (0, 2)
    assert first.candidates[0].source == "recorded" and first.candidates[0].action == first.recorded_action
    assert project.screenshot_path(0).is_file()


# -- store ------------------------------------------------------------------------------
def test_store_mark_undo_and_persistence(tmp_path):
    db = tmp_path / "marks.sqlite"
    store = MarkStore(db)
    store.mark("e/0/0", True, "ann")
    store.mark("e/0/0", False, "ann")  # ann changes her mind
    store.mark("e/0/1", True, "bob")
    assert store.labels() == {"e/0/0": False, "e/0/1": True}
    undone = store.undo("ann")  # back to ann's first mark
    assert undone["applied"] and undone["label"] is True and store.labels()["e/0/0"] is True
    store.undo("ann")  # and to unmarked
    assert "e/0/0" not in store.labels() and store.get("e/0/0")["label"] is None
    assert store.undo("ann") is None  # nothing left of ann's
    # bob marks, ann overrides, bob's undo must not remove ann's newer mark
    store.mark("e/0/2", True, "bob")
    store.mark("e/0/2", False, "ann")
    undone = store.undo("bob")
    assert undone["candidate_id"] == "e/0/2" and not undone["applied"] and undone["annotator"] == "ann"
    assert store.labels()["e/0/2"] is False
    with pytest.raises(ValueError, match="annotator must be a non-empty name"):
        store.mark("e/0/3", True, "  ")
    kinds = [h["kind"] for h in store.history()]
    assert kinds == ["mark", "mark", "mark", "undo", "undo", "mark", "mark", "undo"]  # append-only
    changes, seq = store.changes_since(6)
    assert seq == 8 and {c["candidate_id"] for c in changes} == {"e/0/2"}
    store.close()
    reopened = MarkStore(db)
    assert reopened.labels() == {"e/0/1": True, "e/0/2": False}
    assert len(reopened.history()) == 8
    mode = sqlite3.connect(db).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    reopened.close()


# -- HTTP API ---------------------------------------------------------------------------
def test_api_lists_marks_and_refuses_bad_input(server):
    client, project, _ = server
    status, listing = client.request("/api/steps")
    assert status == 200 and len(listing["steps"]) == 18
    candidate = listing["steps"][0]["candidates"][0]
    assert candidate["draw"]["frame"] == {"kind": "screen", "width": 512, "height": 512}
    relative = [c for s in listing["steps"] for c in s["candidates"] if c["action"]["frame"].get("scale") == 1000]
    assert relative, "the sample has Qwen3-VL relative clicks"
    x = relative[0]["action"]["point"][0]
    assert relative[0]["draw"]["point"][0] == pytest.approx(x / 1000 * 512)  # 0..1000 -> 512 px
    cid = candidate["id"]
    assert client.request("/api/mark", {"candidate_id": cid, "label": "yes", "annotator": "a"})[0] == 400
    status, body = client.request("/api/mark", {"candidate_id": cid, "label": True})
    assert status == 400 and "annotator" in body["error"]
    status, body = client.request("/api/mark", {"candidate_id": "x/0/0", "label": True, "annotator": "a"})
    assert status == 404 and "x/0/0" in body["error"]
    status, mark = client.request("/api/mark", {"candidate_id": cid, "label": True, "annotator": "a"})
    assert status == 200 and mark["label"] is True
    status, changes = client.request("/api/marks?since=0")
    assert [m["candidate_id"] for m in changes["marks"]] == [cid] and changes["seq"] == mark["seq"]
    assert client.request("/api/marks?since=-1")[0] == 400
    assert client.request("/api/screenshot/999")[0] == 404
    status, body = client.request("/api/export", {"name": "../escape.jsonl"})
    assert status == 400 and "plain file name" in body["error"]
    status, body = client.request("/api/export", {})
    assert status == 200 and body["positives"] == 1 and Path(body["path"]) == project.directory / "verified.jsonl"
    status, body = client.request("/api/export", {})  # never replaces a file unless asked to
    assert status == 409 and "already exists" in body["error"]
    assert client.request("/api/export", {"overwrite": True})[0] == 200


def test_concurrent_annotators_lose_no_marks(server):
    client, project, db = server
    ids = sorted(project.where)
    shared = ids[0]  # both mark this one: the last write wins, both stay in the history
    plan = {"ann": ids[1::2], "bob": ids[2::2]}
    acknowledged: dict[str, list[dict]] = {"ann": [], "bob": []}
    start = threading.Barrier(2)

    def annotate(name: str) -> None:
        start.wait()
        for i, cid in enumerate(plan[name]):
            status, mark = client.request("/api/mark", {"candidate_id": cid, "label": i % 3 != 0, "annotator": name})
            assert status == 200
            acknowledged[name].append(mark)
            if i == 5:
                assert client.request("/api/mark", {"candidate_id": shared, "label": name == "ann",
                                                    "annotator": name})[0] == 200

    threads = [threading.Thread(target=annotate, args=(name,)) for name in plan]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    reader = MarkStore(db)
    labels, all_history = reader.labels(), reader.history()
    reader.close()
    for name, marks in acknowledged.items():
        assert len(marks) == len(plan[name])
        for mark in marks:
            assert labels[mark["candidate_id"]] == mark["label"]
    assert len(labels) == len(ids)  # every candidate, the shared one included
    history = [h for h in all_history if h["candidate_id"] == shared]
    assert {h["annotator"] for h in history} == {"ann", "bob"}
    last = max(history, key=lambda h: h["seq"])
    assert labels[shared] == bool(last["label"])  # last write wins
    seqs = [m["seq"] for marks in acknowledged.values() for m in marks]
    assert len(set(seqs)) == len(seqs)  # every acknowledged write is its own committed transaction


def _start_cli_server(project_dir: Path) -> tuple[subprocess.Popen, str]:
    """`python -m guirl.commands.verify` as its own process; returns it and the URL it prints."""
    proc = subprocess.Popen([sys.executable, "-m", "guirl.commands.verify", "--data", str(project_dir), "--port", "0"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            assert proc.poll() is None, f"server exited with {proc.returncode} before serving"
            continue
        if line.startswith("serving "):
            return proc, line.split()[1]
    proc.kill()
    raise AssertionError("server did not print its URL within 120 s")


def test_kill_9_after_an_acknowledged_mark_keeps_it(project_dir):
    proc, url = _start_cli_server(project_dir)
    cid = sorted(load_project(project_dir).where)[7]
    try:
        status, mark = Client(url).request("/api/mark", {"candidate_id": cid, "label": False, "annotator": "ann"})
        assert status == 200
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    proc, url = _start_cli_server(project_dir)
    try:
        status, changes = Client(url).request("/api/marks?since=0")
        assert status == 200
        assert [(m["candidate_id"], m["label"], m["annotator"]) for m in changes["marks"]] == [(cid, False, "ann")]
    finally:
        proc.terminate()
        proc.wait()


# -- export --------------------------------------------------------------------------------
def test_export_adds_verified_positives_to_valid_actions(project_dir, tmp_path, monkeypatch, capsys):
    project = load_project(project_dir)
    step = project.steps[2]
    positive, negative = step.candidates[1], step.candidates[2]
    store = MarkStore(project_dir / "verify.sqlite")
    store.mark(positive.id, True, "ann")
    store.mark(negative.id, False, "ann")
    store.mark("stale/0/0", True, "ann")  # from an older candidates file: left out
    store.close()
    out = tmp_path / "out" / "verified.jsonl"
    assert verify_cli.main(["--data", str(project_dir), "--export", str(out)]) == 0
    assert "1 verified positives (1 marked false)" in capsys.readouterr().out
    exported = read_episodes(out)  # image paths rebased onto out's directory: they resolve
    original = {(e.id, s.index): s for e in read_episodes(project.episodes_path) for s in e.steps}
    for episode in exported:
        for s in episode.steps:
            added = [a for a in s.valid_actions if a not in original[(episode.id, s.index)].valid_actions]
            expected = [positive.action] if (episode.id, s.index) == (step.episode_id, step.step_index) else []
            assert added == expected
    for argv, message in (
        (["--export", str(out)], "already exists.*pass --overwrite"),
        (["--export", str(project.episodes_path), "--overwrite"], "is the input episodes file"),
        (["--db", str(tmp_path / "none.sqlite"), "--export", str(out)], "--db .*does not exist"),
    ):
        capsys.readouterr()
        assert verify_cli.main(["--data", str(project_dir), *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith("guirl datagen verify: error: ") and err.count("\n") == 1
        assert re.search(message, err), err
    # the built-in merge (used while guirl.datagen.explore.merge_verified is missing) adds the same action
    monkeypatch.setattr(export_module, "EXPLORE_MODULE", "guirl.datagen.no_such_module")
    result = export_module.export_verified(project, {positive.id: True, negative.id: False}, tmp_path / "b.jsonl")
    assert result["merged_by"].endswith("merge_labels") and result["positives"] == 1
    merged = merge_labels(project, {positive.id: True, negative.id: False})
    target = next(s for e in merged if e.id == step.episode_id for s in e.steps if s.index == step.step_index)
    assert target.valid_actions[-1] == positive.action and negative.action not in target.valid_actions


def test_cli_refuses_bad_data_in_one_line(project_dir, capsys):
    (project_dir / "candidates.jsonl").write_text("[]\n")
    assert verify_cli.main(["--data", str(project_dir)]) == 2
    message = capsys.readouterr().err
    assert message.count("\n") == 1 and message.startswith("guirl datagen verify: error: ")
    assert "candidates.jsonl:1:" in message


# -- browser ------------------------------------------------------------------------------
@pytest.mark.browser
def test_page_marks_with_clicks_and_keys(server, tmp_path):
    require_debian_chromium()  # a skip, or a failure under GUIRL_REQUIRE_BROWSER=1
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.wait import WebDriverWait

    client, project, db = server
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1400,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    wait = WebDriverWait(driver, 20)

    def settled(d) -> bool:
        return d.execute_script("return document.body.dataset.ready === '1' && document.body.dataset.pending === '0'")

    first = project.steps[0].candidates
    try:
        driver.get(client.url)
        wait.until(settled)
        driver.find_element(By.ID, "annotator").send_keys("ann", Keys.TAB)
        # a real click on candidate 2's True button, then keys: f marks the next one, j skips, t marks
        driver.find_element(By.CSS_SELECTOR, f'.cand[data-id="{first[1].id}"] button.mark-true').click()
        body = driver.find_element(By.TAG_NAME, "body")
        body.send_keys("f")
        body.send_keys("j")
        body.send_keys("t")
        wait.until(settled)
        assert _labels(db) == {first[1].id: True, first[2].id: False, first[4].id: True}
        assert "3 / 90 marked · 2 true · 1 false" in driver.find_element(By.ID, "progress").text
        marks_drawn = driver.execute_script("return document.querySelectorAll('#overlay g').length")
        assert marks_drawn == len(first)  # every candidate of the step is drawn
        driver.refresh()  # the marks come back from the server; the name from localStorage
        wait.until(settled)
        assert driver.find_element(By.ID, "annotator").get_attribute("value") == "ann"
        badge = driver.find_element(By.CSS_SELECTOR, f'.cand[data-id="{first[2].id}"] .badge').text
        assert badge.startswith("false")
        driver.find_element(By.TAG_NAME, "body").send_keys("u")  # undo ann's last mark (candidate 5)
        wait.until(lambda d: first[4].id not in _labels(db))
        select = driver.find_element(By.ID, "filter")
        select.send_keys("true")  # filter: only the true ones are reachable
        wait.until(lambda d: d.execute_script("return window.verifyState.filter") == "true")
        driver.find_element(By.ID, "export").click()
        wait.until(lambda d: "exported" in d.find_element(By.ID, "status").text)
        exported = read_episodes(project.directory / "verified.jsonl")
        step0 = next(e for e in exported if e.id == project.steps[0].episode_id).steps[0]
        assert first[1].action in step0.valid_actions and first[2].action not in step0.valid_actions
        assert driver.save_screenshot(str(tmp_path / "verify.png"))
    finally:
        driver.quit()
