"""The verification web app: one HTML page (plain JS) and a JSON API, on Flask.

Routes (all JSON except ``/`` and the screenshots):

- ``GET /``: the page (``index.html`` beside this module);
- ``GET /api/project``: directory, counts, the merge an export will use;
- ``GET /api/steps``: every step with its candidates (actions also converted
  to screen pixels for drawing); built once at start-up;
- ``GET /api/screenshot/<position>``: the screenshot of step ``position``;
- ``GET /api/marks?since=SEQ``: marks changed after ``SEQ`` and the latest seq
  (the page polls it to show other annotators' marks);
- ``POST /api/mark`` ``{candidate_id, label, annotator}``: answered after the
  mark is committed;
- ``POST /api/undo`` ``{annotator}``: undo that annotator's latest mark;
- ``POST /api/export`` ``{name?, overwrite?}``: write ``DIR/<name>`` (default
  ``verified.jsonl``) with the verified positives as A*_t.
"""

from __future__ import annotations

import errno
import json
import re
import socket
import threading
from importlib import resources
from pathlib import Path

from flask import Flask, Response, jsonify, request, send_file
from werkzeug.serving import BaseWSGIServer, make_server

from guirl.actions import Action
from guirl.data.io import DataError
from guirl.datagen.verify_app.export import export_verified
from guirl.datagen.verify_app.loader import Project, StepRecord, screen_action
from guirl.datagen.verify_app.store import MarkStore

EXPORT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\.jsonl$")


def describe(action: Action) -> str:
    """One line for the candidate list: type and its arguments (coordinates in the action's frame)."""
    parts = [action.type.value]
    if action.point is not None:
        parts.append(f"({action.point[0]:g}, {action.point[1]:g})")
    if action.box is not None:
        parts.append("box [" + ", ".join(f"{v:g}" for v in action.box) + "]")
    if action.end_point is not None:
        parts.append(f"-> ({action.end_point[0]:g}, {action.end_point[1]:g})")
    if action.direction:
        parts.append(action.direction)
    if action.keys:
        parts.append("+".join(action.keys))
    if action.text is not None:
        parts.append(json.dumps(action.text))
    if action.status:
        parts.append(action.status)
    return " ".join(parts)


def _action_view(action: Action, step: StepRecord) -> dict:
    return {"action": action.model_dump(mode="json", exclude_none=True), "summary": describe(action),
            "draw": screen_action(action, step.screen_size).model_dump(mode="json", exclude_none=True)}


def steps_payload(project: Project) -> bytes:
    """The candidate listing, serialised once (steps never change while the server runs)."""
    steps = []
    for position, step in enumerate(project.steps):
        candidates = [{"id": c.id, "k": k, "source": c.source, "count": c.count, "oracle_label": c.oracle_label,
                       **_action_view(c.action, step)} for k, c in enumerate(step.candidates)]
        steps.append({"position": position, "episode_id": step.episode_id, "step_index": step.step_index,
                      "instruction": step.instruction, "screen_size": list(step.screen_size),
                      "history": step.history, "candidates": candidates,
                      "recorded_action": None if step.recorded_action is None
                      else _action_view(step.recorded_action, step)})
    return json.dumps({"steps": steps}, separators=(",", ":")).encode()


def _error(status: int, message: str):
    return jsonify({"error": message}), status


def create_app(project: Project, store: MarkStore) -> Flask:
    """The Flask app serving ``project`` with marks in ``store``."""
    app = Flask(__name__)
    page = resources.files("guirl.datagen.verify_app").joinpath("index.html").read_bytes()
    listing = steps_payload(project)
    export_lock = threading.Lock()

    @app.get("/")
    def index():
        return Response(page, mimetype="text/html")

    @app.get("/api/project")
    def project_info():
        return jsonify({"directory": str(project.directory), "episodes": str(project.episodes_path),
                        "steps": len(project.steps), "candidates": project.n_candidates()})

    @app.get("/api/steps")
    def steps():
        return Response(listing, mimetype="application/json")

    @app.get("/api/screenshot/<int:position>")
    def screenshot(position: int):
        if not 0 <= position < len(project.steps):
            return _error(404, f"no step {position}; the project has {len(project.steps)} steps")
        return send_file(project.screenshot_path(position), max_age=3600)

    @app.get("/api/marks")
    def marks():
        since = request.args.get("since", "0")
        if not since.isdigit():
            return _error(400, f"since={since!r} must be a non-negative integer (a seq from an earlier answer)")
        rows, latest = store.changes_since(int(since))
        return jsonify({"marks": rows, "seq": latest})

    def _body() -> dict:
        body = request.get_json(silent=True)
        return body if isinstance(body, dict) else {}

    def _annotator(body: dict) -> str | None:
        name = body.get("annotator")
        return name.strip() if isinstance(name, str) and name.strip() else None

    @app.post("/api/mark")
    def mark():
        body = _body()
        candidate_id, label, annotator = body.get("candidate_id"), body.get("label"), _annotator(body)
        if not isinstance(candidate_id, str) or candidate_id not in project.where:
            return _error(404, f"candidate_id {candidate_id!r} is not a candidate of {project.candidates_path}")
        if not isinstance(label, bool):
            return _error(400, f"label {label!r} must be true or false")
        if annotator is None:
            return _error(400, "annotator must be a non-empty name; type yours in the page's name box")
        return jsonify(store.mark(candidate_id, label, annotator))

    @app.post("/api/undo")
    def undo():
        annotator = _annotator(_body())
        if annotator is None:
            return _error(400, "annotator must be a non-empty name; type yours in the page's name box")
        return jsonify({"undone": store.undo(annotator)})

    @app.post("/api/export")
    def export():
        body = _body()
        name = body.get("name") or "verified.jsonl"
        if not isinstance(name, str) or not EXPORT_NAME.match(name):
            return _error(400, f"name {name!r} must be a plain file name ending in .jsonl (written into "
                          f"{project.directory})")
        with export_lock:
            try:
                result = export_verified(project, store.labels(), project.directory / name,
                                         overwrite=body.get("overwrite") is True)
            except FileExistsError as err:
                return _error(409, str(err))
            except (ValueError, DataError) as err:
                return _error(400, str(err))
        return jsonify(result)

    return app


class PortInUse(OSError):
    """Another program listens on the port asked for."""


def check_port(host: str, port: int) -> None:
    """Raise :class:`PortInUse` when ``host:port`` cannot be bound because it is taken (werkzeug would print
    two lines and ``sys.exit(1)``); other bind errors (a bad host, no permission) are ``OSError``."""
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as werkzeug's server binds
        try:
            probe.bind((host, port))
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                raise PortInUse(err.errno, f"{host}:{port} is in use by another program") from None
            raise


def make_verify_server(project: Project, db: str | Path | MarkStore, host: str = "127.0.0.1",
                       port: int = 0) -> tuple[BaseWSGIServer, MarkStore]:
    """A threaded HTTP server for the app (``port=0``: any free port; see ``server.server_port``) over the
    marks in ``db`` (a SQLite path, or a store already open). A taken port raises :class:`PortInUse`."""
    check_port(host, port)
    store = db if isinstance(db, MarkStore) else MarkStore(db)
    server = make_server(host, port, create_app(project, store), threaded=True)
    return server, store


def url_of(server: BaseWSGIServer) -> str:
    host = server.host if server.host not in ("0.0.0.0", "::") else "127.0.0.1"
    return f"http://{host}:{server.server_port}/"
