"""Human True/False marks in SQLite: one row per candidate, append-only history.

Durability: the database is in WAL mode with ``synchronous=FULL``, and
:meth:`MarkStore.mark` returns only after its transaction has committed, so a
mark the server has acknowledged survives ``kill -9`` of the server (and a
power loss). Concurrency: every write is one ``BEGIN IMMEDIATE`` transaction,
so writers are serialised and no annotator's mark overwrites another
candidate's; two annotators marking the *same* candidate: the last write wins
(both writes stay in ``history``).

``marks`` holds the current state (``label`` NULL = unmarked again after an
undo); ``changed`` is the ``history.seq`` of the latest change, so clients
poll :meth:`MarkStore.changes_since`. ``history`` is never updated or deleted:
a mark event keeps the state it replaced, an undo event names the mark it
undid (``undoes``).
"""

from __future__ import annotations

import queue
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS marks (
  candidate_id TEXT PRIMARY KEY,
  label INTEGER,                 -- 1 true, 0 false, NULL unmarked (after an undo)
  annotator TEXT,
  marked_at REAL,                -- unix seconds of the mark now in force
  set_by INTEGER,                -- history.seq of the mark event now in force
  changed INTEGER NOT NULL       -- history.seq of the latest change (for polling)
);
CREATE INDEX IF NOT EXISTS marks_changed ON marks(changed);
CREATE TABLE IF NOT EXISTS history (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL CHECK (kind IN ('mark', 'undo')),
  candidate_id TEXT NOT NULL,
  label INTEGER,                 -- the label this event leaves in force
  annotator TEXT NOT NULL,       -- who did it
  at REAL NOT NULL,
  prev_label INTEGER, prev_annotator TEXT, prev_marked_at REAL, prev_set_by INTEGER,
  undoes INTEGER REFERENCES history(seq)
);
CREATE INDEX IF NOT EXISTS history_annotator ON history(annotator, kind, seq);
CREATE UNIQUE INDEX IF NOT EXISTS history_undoes ON history(undoes);
"""


class StoreError(RuntimeError):
    """SQLite opened the file but cannot keep marks durably there (e.g. it refused WAL mode)."""


def _label(value: int | None) -> bool | None:
    return None if value is None else bool(value)


class MarkStore:
    """Thread-safe mark store over one SQLite file (a small pool of connections)."""

    def __init__(self, path: str | Path, busy_timeout_s: float = 30.0):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.busy_timeout_s = busy_timeout_s
        self._pool: queue.LifoQueue[sqlite3.Connection] = queue.LifoQueue()
        with self._connection() as db:
            db.executescript(SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False)
        db.row_factory = sqlite3.Row
        mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode.lower() != "wal":
            db.close()
            raise StoreError(f"{self.path}: SQLite refused WAL mode (got {mode}); put --db on a local disk")
        db.execute("PRAGMA synchronous=FULL")
        return db

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        try:
            db = self._pool.get_nowait()
        except queue.Empty:
            db = self._connect()
        try:
            yield db
        finally:
            if db.in_transaction:
                db.rollback()
            self._pool.put(db)

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One serialised write transaction; committed (durably) before the block's caller returns."""
        with self._connection() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.rollback()
                raise
            db.commit()

    def close(self) -> None:
        while True:
            try:
                self._pool.get_nowait().close()
            except queue.Empty:
                return

    # -- writes -----------------------------------------------------------------
    def mark(self, candidate_id: str, label: bool, annotator: str) -> dict:
        """Set ``candidate_id`` to ``label``; returns the mark once it is committed."""
        if not annotator.strip():
            raise ValueError("annotator must be a non-empty name")
        now = time.time()
        with self._write() as db:
            prev = db.execute("SELECT * FROM marks WHERE candidate_id = ?", (candidate_id,)).fetchone()
            seq = db.execute(
                "INSERT INTO history (kind, candidate_id, label, annotator, at, prev_label, prev_annotator, "
                "prev_marked_at, prev_set_by) VALUES ('mark', ?, ?, ?, ?, ?, ?, ?, ?)",
                (candidate_id, int(label), annotator, now, *(
                    (prev["label"], prev["annotator"], prev["marked_at"], prev["set_by"]) if prev else (None,) * 4)),
            ).lastrowid
            db.execute(
                "INSERT INTO marks (candidate_id, label, annotator, marked_at, set_by, changed) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(candidate_id) DO UPDATE SET label = excluded.label, "
                "annotator = excluded.annotator, marked_at = excluded.marked_at, set_by = excluded.set_by, "
                "changed = excluded.changed",
                (candidate_id, int(label), annotator, now, seq, seq),
            )
        return {"candidate_id": candidate_id, "label": label, "annotator": annotator, "marked_at": now, "seq": seq}

    def undo(self, annotator: str) -> dict | None:
        """Undo ``annotator``'s latest mark not undone yet; None when there is none.

        The candidate gets back the state that mark replaced, unless someone
        marked it since: then the newer mark stays (``applied`` is False) and
        the undo is still recorded, so the next undo goes one step further back.
        """
        now = time.time()
        with self._write() as db:
            event = db.execute(
                "SELECT * FROM history h WHERE kind = 'mark' AND annotator = ? AND NOT EXISTS "
                "(SELECT 1 FROM history u WHERE u.undoes = h.seq) ORDER BY seq DESC LIMIT 1", (annotator,)
            ).fetchone()
            if event is None:
                return None
            current = db.execute("SELECT * FROM marks WHERE candidate_id = ?", (event["candidate_id"],)).fetchone()
            applied = current is not None and current["set_by"] == event["seq"]
            label = event["prev_label"] if applied else current["label"]
            seq = db.execute(
                "INSERT INTO history (kind, candidate_id, label, annotator, at, undoes) VALUES ('undo', ?, ?, ?, ?, ?)",
                (event["candidate_id"], label, annotator, now, event["seq"]),
            ).lastrowid
            if applied:
                db.execute(
                    "UPDATE marks SET label = ?, annotator = ?, marked_at = ?, set_by = ?, changed = ? "
                    "WHERE candidate_id = ?",
                    (event["prev_label"], event["prev_annotator"], event["prev_marked_at"], event["prev_set_by"],
                     seq, event["candidate_id"]),
                )
        return {"candidate_id": event["candidate_id"], "undone_label": _label(event["label"]),
                "label": _label(label), "annotator": current["annotator"] if not applied else event["prev_annotator"],
                "applied": applied, "seq": seq}

    # -- reads --------------------------------------------------------------------
    def get(self, candidate_id: str) -> dict | None:
        with self._connection() as db:
            row = db.execute("SELECT * FROM marks WHERE candidate_id = ?", (candidate_id,)).fetchone()
        return None if row is None else _row(row)

    def changes_since(self, seq: int = 0) -> tuple[list[dict], int]:
        """Marks changed after history ``seq`` (all of them for 0), and the latest seq."""
        with self._connection() as db:
            db.execute("BEGIN")  # one snapshot for both queries
            rows = db.execute("SELECT * FROM marks WHERE changed > ? ORDER BY changed", (seq,)).fetchall()
            latest = db.execute("SELECT COALESCE(MAX(seq), 0) FROM history").fetchone()[0]
            db.commit()
        return [_row(r) for r in rows], latest

    def labels(self) -> dict[str, bool]:
        """Every candidate marked now: id -> True / False (unmarked ones left out)."""
        with self._connection() as db:
            rows = db.execute("SELECT candidate_id, label FROM marks WHERE label IS NOT NULL").fetchall()
        return {r["candidate_id"]: bool(r["label"]) for r in rows}

    def history(self) -> list[dict]:
        with self._connection() as db:
            return [dict(r) for r in db.execute("SELECT * FROM history ORDER BY seq").fetchall()]


def _row(row: sqlite3.Row) -> dict:
    return {"candidate_id": row["candidate_id"], "label": _label(row["label"]), "annotator": row["annotator"],
            "marked_at": row["marked_at"], "seq": row["changed"]}
