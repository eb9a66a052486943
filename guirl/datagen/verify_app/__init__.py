"""Human verification of explored candidate actions (LiteGUI multi-solution exploration, docs/methods.md section 1).

``guirl datagen verify --data DIR`` serves a page where annotators mark each
candidate of ``DIR/candidates.jsonl`` True / False; marks live in SQLite
(:mod:`.store`); verified positives are exported as A*_t (:mod:`.export`).
See docs/verify_app.md.
"""

from guirl.datagen.verify_app.export import export_verified, merge_labels
from guirl.datagen.verify_app.loader import CandidateRecord, Project, StepRecord, load_project
from guirl.datagen.verify_app.store import MarkStore

__all__ = ["CandidateRecord", "MarkStore", "Project", "StepRecord", "export_verified", "load_project", "merge_labels"]
