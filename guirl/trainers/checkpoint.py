"""Atomic, verified checkpoints on top of ``accelerate``'s save/load_state.

A checkpoint is ``<run>/checkpoints/step_<N>/`` holding accelerate's state
(model, optimiser, scheduler, every RNG, registered objects such as the data
sampler position) plus ``trainer_state.json`` and a ``MANIFEST.json`` with
the SHA-256 of every file. It is written into a temporary directory and
renamed into place only when complete, so a crash (even ``kill -9``) leaves
either the old set of checkpoints or the new one, never half of one.
Loading verifies the manifest; a corrupt checkpoint is reported by name and
the previous intact one is used, and nothing is deleted by a load.

``trainer_state.json`` also holds the resolved config of the run (``config``);
resuming with a different one is refused with the changed fields named
(:func:`check_resume_config`), unless ``GUIRL_ALLOW_CONFIG_CHANGE=1``
(``guirl train --allow-config-change``) says to go on.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

MANIFEST = "MANIFEST.json"
STATE = "trainer_state.json"


class CheckpointError(RuntimeError):
    """A checkpoint directory is missing files or does not match its manifest."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save_checkpoint(accelerator, run_dir: str | Path, step: int, state: dict[str, Any], keep_last: int = 2) -> Path:
    """Save ``accelerator``'s state and ``state`` (JSON) as checkpoint ``step``.

    Only the main process writes the manifest and renames; all processes
    take part in ``save_state`` as accelerate requires.
    """
    root = Path(run_dir) / "checkpoints"
    final = root / f"step_{step:08d}"
    tmp = root / f".tmp_step_{step:08d}"
    if accelerator.is_main_process:
        shutil.rmtree(tmp, ignore_errors=True)
        root.mkdir(parents=True, exist_ok=True)
    accelerator.wait_for_everyone()
    accelerator.save_state(str(tmp), safe_serialization=True)
    # every process writes its own RNG state file: the manifest is hashed only once all have finished
    # (without this barrier rank 0 could hash rank 1's half-written file and the checkpoint fail to verify)
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        (tmp / STATE).write_text(json.dumps({"step": step, **state}, indent=1))
        files = sorted(p for p in tmp.rglob("*") if p.is_file())
        manifest = {str(p.relative_to(tmp)): _sha256(p) for p in files}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1))
        for p in files + [tmp / MANIFEST]:
            with p.open("rb") as fh:
                os.fsync(fh.fileno())
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
        _fsync_dir(root)
        for old in list_checkpoints(run_dir)[:-keep_last] if keep_last > 0 else []:
            shutil.rmtree(old, ignore_errors=True)
    accelerator.wait_for_everyone()
    return final


def list_checkpoints(run_dir: str | Path) -> list[Path]:
    """Completed checkpoint directories, oldest first."""
    root = Path(run_dir) / "checkpoints"
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith("step_"))


def verify_checkpoint(path: str | Path) -> dict[str, Any]:
    """Check every file against the manifest; return the trainer state."""
    path = Path(path)
    manifest_path = path / MANIFEST
    if not manifest_path.is_file():
        raise CheckpointError(f"checkpoint {path} has no {MANIFEST}: it was not written completely")
    try:
        manifest = json.loads(manifest_path.read_text())
    except json.JSONDecodeError:
        raise CheckpointError(f"checkpoint {path}: {MANIFEST} is not valid JSON") from None
    for rel, digest in manifest.items():
        file = path / rel
        if not file.is_file():
            raise CheckpointError(f"checkpoint {path}: file {rel} listed in the manifest is missing")
        if _sha256(file) != digest:
            raise CheckpointError(f"checkpoint {path}: file {rel} is corrupt (checksum differs from the manifest)")
    return json.loads((path / STATE).read_text())


def latest_valid_checkpoint(run_dir: str | Path, log=print) -> tuple[Path, dict[str, Any]] | None:
    """The newest checkpoint that verifies; corrupt ones are reported and skipped."""
    for path in reversed(list_checkpoints(run_dir)):
        try:
            return path, verify_checkpoint(path)
        except CheckpointError as err:
            log(f"warning: {err}; falling back to the previous checkpoint")
    return None


def load_checkpoint(accelerator, path: str | Path) -> dict[str, Any]:
    """Verify and load a checkpoint into ``accelerator``'s registered objects."""
    state = verify_checkpoint(path)
    accelerator.load_state(str(path))
    return state


# -- the config a checkpoint was trained with ----------------------------------------------------------------------
#: environment variable that lets a run resume from a checkpoint of a different config (``guirl train
#: --allow-config-change`` sets it)
ALLOW_CONFIG_CHANGE_ENV = "GUIRL_ALLOW_CONFIG_CHANGE"

#: fields that may differ between a checkpoint's config and the config resuming from it, because they change
#: neither the model, the data order, the samples nor the optimiser: where the run lives (a moved directory),
#: whether it resumes, CPU threads and cores, trackers, and how often it logs and saves
RESUME_MAY_CHANGE = frozenset({"output_dir", "resume", "num_threads", "report_to", "log_every", "save_every",
                               "keep_last", "rollout_cpus", "trainer_cpus"})


class ConfigChangedError(ValueError):
    """A run would resume from a checkpoint trained with a different config."""


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and value:
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[prefix + key] = value
    return flat


def _schedule_ignores_max_steps(config: dict[str, Any]) -> bool:
    optim = config.get("optim") or {}
    return optim.get("schedule", "constant") == "constant" and not optim.get("warmup_ratio", 0.0)


def config_changes(saved: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """``"key: old -> new"`` for each field of ``current`` whose value differs from the checkpoint's ``saved``
    config (dotted keys, e.g. ``optim.lr``), leaving out :data:`RESUME_MAY_CHANGE`, and ``max_steps`` when the
    learning-rate schedule does not depend on it (constant, no warm-up: a longer run is the same run, extended).
    Fields only one side has (added or removed by a guirl upgrade) are not compared."""
    old, new = _flatten(saved), _flatten(current)
    ignored = set(RESUME_MAY_CHANGE)
    if _schedule_ignores_max_steps(saved) and _schedule_ignores_max_steps(current):
        ignored.add("max_steps")
    changes = []
    for key in sorted(old.keys() & new.keys()):
        if key.split(".")[0] in ignored or old[key] == new[key]:
            continue
        note = " (the learning-rate schedule depends on it)" if key == "max_steps" else ""
        changes.append(f"{key}: {json.dumps(old[key])} -> {json.dumps(new[key])}{note}")
    return changes


def check_resume_config(current: dict[str, Any], state: dict[str, Any], path: str | Path, log=print) -> None:
    """Refuse (:class:`ConfigChangedError`, naming the changed fields) to resume from checkpoint ``path``,
    whose trainer state is ``state``, with config ``current`` when the two differ, unless
    ``GUIRL_ALLOW_CONFIG_CHANGE`` is set (then ``log`` says what changed). A checkpoint written before configs
    were stored is not compared."""
    saved = state.get("config")
    if not isinstance(saved, dict):
        return
    changes = config_changes(saved, current)
    if not changes:
        return
    shown = "; ".join(changes[:8]) + (f"; and {len(changes) - 8} more" if len(changes) > 8 else "")
    path = Path(path)
    if os.environ.get(ALLOW_CONFIG_CHANGE_ENV, "") not in ("", "0"):
        log(f"warning: resuming from {path} although its config differs (allowed): {shown}")
        return
    raise ConfigChangedError(
        f"{path.parent.parent} holds a checkpoint ({path.name}) trained with a different config: {shown}; "
        "rerun with the config it was trained with, choose another output_dir, or resume anyway with "
        f"--allow-config-change ({ALLOW_CONFIG_CHANGE_ENV}=1)"
    )


def check_run_dir(current: dict[str, Any], run_dir: str | Path, log=print) -> None:
    """:func:`check_resume_config` against the newest checkpoint in ``run_dir`` whose trainer state reads (its
    files are not hashed here: a quick check before a run loads its model and data)."""
    for path in reversed(list_checkpoints(run_dir)):
        try:
            state = json.loads((path / STATE).read_text())
        except (OSError, json.JSONDecodeError):
            continue
        check_resume_config(current, state, path, log=log)
        return
