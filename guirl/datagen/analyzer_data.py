"""Training data for ComputerSD's GUI analyzer (docs/methods.md section 2): the base policy's own steps, expert-annotated.

The paper fine-tunes its analyzer on steps the base policy actually takes: play ``K`` episodes per training
task with the starting policy at temperature 1.0, cut them into executed steps, and have an expert annotate
every step with the analyzer's answer (consistency, effectiveness, guide, avoid). Here:

- episodes are played online in the built-in world (:func:`guirl.rollout.online.run_online`, lock-step,
  one engine call per step), one per (task, seed): episode ``k`` of a task uses the ``k``-th seed of the
  split's seed range, so the train and held-out splits are told apart by their seeds alone;
- every executed step becomes one analyzer request (:func:`guirl.judges.analyzer.trajectory_requests`:
  the prompt a model analyzer sees, the screens before and after, the oracle facts in ``fields``);
- the expert is any registered judge answering the ``analyzer`` role (default ``ground_truth_analyzer``,
  the environment's oracle); a step whose expert answer is unreadable is left out and counted.

One JSONL per split (``out_dir/<split>.jsonl``, written atomically), one record per step::

    {"id", "task", "seed", "step", "role": "analyzer", "prompt", "images": [before.png, after.png] (relative to the JSONL),
     "answer": the expert's answer as AnalyzerVerdict.to_json() (the SFT target), "verdict": its fields,
     "vote": +1 / -1, "expert": judge name, "expert_raw": the expert's own text, "fields": the request fields}

and ``out_dir/<split>.meta.json`` with what produced it (policy, tasks, K, seeds, counts, wall time).
:func:`read_records` reads a split back; :func:`record_request` rebuilds the analyzer request of a record.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from guirl.judges.base import JudgeRequest

TRAIN_SEEDS = range(0, 1000)
HELDOUT_SEEDS = range(100_000, 101_000)


def _jsonable(value: Any) -> Any:
    """``value`` as plain JSON types (pydantic models and other objects through their JSON form / str)."""
    def default(v: Any) -> Any:
        dump = getattr(v, "model_dump", None)
        return dump(mode="json", exclude_none=True) if callable(dump) else str(v)

    return json.loads(json.dumps(value, ensure_ascii=False, default=default))


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def collect_analyzer_data(
    policy_dir: str | Path,
    tasks: Sequence[str],
    out_dir: str | Path,
    episodes_per_task: int = 8,
    seeds: Sequence[int] = TRAIN_SEEDS,
    split: str = "train",
    judge: str = "ground_truth_analyzer",
    judge_kwargs: dict[str, Any] | None = None,
    env: str = "sim",
    env_kwargs: dict[str, Any] | None = None,
    max_episode_steps: int = 8,
    temperature: float = 1.0,
    max_new_tokens: int = 64,
    sample_seed: int = 0,
    max_steps: int | None = None,
) -> Path:
    """Play ``episodes_per_task`` (K) episodes per task with the policy in ``policy_dir``, annotate every
    executed step with ``judge`` and write ``out_dir/<split>.jsonl`` (module doc); returns its path.

    ``seeds``: the split's seed range; episode ``k`` of every task uses ``seeds[k]``. ``max_steps``: keep at
    most this many records (a sample seeded by ``sample_seed``, over every task; None = all).
    """
    from guirl.envs.base import available_envs, make_env
    from guirl.judges import available_judges, make_judge
    from guirl.judges.analyzer import trajectory_requests
    from guirl.models.load import load_rollout_policy
    from guirl.rollout.engine import SamplingParams
    from guirl.rollout.hf_engine import HFEngine
    from guirl.rollout.online import EnvSlots, run_online
    from guirl.rollout.runner import EpisodeSpec

    if not tasks:
        raise ValueError("tasks is empty: name at least one task of the environment (e.g. ['desktop.open_file'])")
    if episodes_per_task < 1:
        raise ValueError(f"episodes_per_task must be >= 1, got {episodes_per_task}")
    seeds = list(seeds)
    if len(seeds) < episodes_per_task:
        raise ValueError(f"split {split!r} has {len(seeds)} seeds, fewer than episodes_per_task={episodes_per_task}")
    if judge not in available_judges():
        raise ValueError(f"judge {judge!r} is not registered; choose one of {available_judges()}")
    if env not in available_envs():
        raise ValueError(f"env {env!r} is not a registered environment; choose one of {available_envs()}")
    env_kwargs = {"preset": "coarse", "auto_terminate": True} if env_kwargs is None else dict(env_kwargs)
    out_dir = Path(out_dir)
    image_dir = out_dir / "images" / split
    if image_dir.exists():
        shutil.rmtree(image_dir)  # left over from an interrupted collection: its JSONL was never written
    image_dir.mkdir(parents=True)
    t0 = time.perf_counter()

    policy = load_rollout_policy(policy_dir)  # the checkpoint's own format and history, as ComputerSD rolls out
    policy.model.requires_grad_(False)
    specs = [EpisodeSpec(task=t, seed=seeds[k]) for t in tasks for k in range(episodes_per_task)]
    params = SamplingParams(n=1, temperature=temperature, max_new_tokens=max_new_tokens, seed=sample_seed)
    envs = EnvSlots(lambda: make_env(env, **env_kwargs))
    try:
        trajs, _ = run_online(HFEngine.from_policy(policy), policy, envs, specs, params, max_episode_steps)
    finally:
        envs.close()
    rollout_s = time.perf_counter() - t0

    expert = make_judge(judge, **(judge_kwargs or {}))
    from guirl.judges.analyzer import verdict_of

    annotated, skipped, crashed = [], 0, 0
    for tr in trajs:
        if tr.crashed:
            crashed += 1
            continue
        for step, request in zip(tr.steps, trajectory_requests(tr, policy.prompt.fmt), strict=True):
            try:
                result = expert(request)
            except Exception:  # noqa: BLE001 - a failed expert call loses that step only (counted)
                result = None
            verdict = verdict_of(result)
            if verdict is None:
                skipped += 1
            else:
                annotated.append((tr, step, request, result, verdict))
    if max_steps is not None and len(annotated) > max_steps:  # a seeded sample, kept in its order
        keep = sorted(random.Random(sample_seed).sample(range(len(annotated)), max_steps))
        annotated = [annotated[i] for i in keep]
    records = []
    for tr, step, request, result, verdict in annotated:
        stem = f"{tr.spec.task}-{tr.spec.seed}-{step.index}"
        names = []
        for image, tag in zip(request.images, ("before", "after"), strict=False):
            name = f"images/{split}/{stem}-{tag}.png"
            image.save(out_dir / name)
            names.append(name)
        records.append({
            "id": f"{tr.spec.task}/{tr.spec.seed}/{step.index}", "task": tr.spec.task, "seed": tr.spec.seed,
            "step": step.index, "role": request.role, "prompt": request.prompt, "images": names,
            "answer": verdict.to_json(), "verdict": json.loads(verdict.to_json()), "vote": verdict.vote,
            "expert": judge, "expert_raw": result.raw or verdict.to_json(), "fields": _jsonable(request.fields),
        })
    path = out_dir / f"{split}.jsonl"
    _write_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    meta = {"split": split, "policy": str(policy_dir), "tasks": list(tasks), "episodes_per_task": episodes_per_task,
            "seeds": [seeds[0], seeds[episodes_per_task - 1]], "judge": judge, "env": env, "env_kwargs": env_kwargs,
            "max_episode_steps": max_episode_steps, "temperature": temperature, "max_steps": max_steps,
            "records": len(records), "skipped_unreadable": skipped, "crashed_episodes": crashed,
            "positive_votes": sum(r["vote"] > 0 for r in records), "rollout_s": rollout_s,
            "wall_s": time.perf_counter() - t0}
    _write_atomic(out_dir / f"{split}.meta.json", json.dumps(meta, indent=1))
    return path


def collect_splits(policy_dir: str | Path, tasks: Sequence[str], out_dir: str | Path, episodes_per_task: int = 8,
                   heldout_episodes_per_task: int = 2, train_seeds: Sequence[int] = TRAIN_SEEDS,
                   heldout_seeds: Sequence[int] = HELDOUT_SEEDS, heldout_max_steps: int | None = None,
                   **kwargs: Any) -> dict[str, Path]:
    """The train and held-out splits (``train.jsonl``, ``heldout.jsonl``) from disjoint seed ranges."""
    used_train = set(list(train_seeds)[:episodes_per_task])
    used_held = set(list(heldout_seeds)[:heldout_episodes_per_task])
    if used_train & used_held:
        raise ValueError(f"held-out seeds {sorted(used_train & used_held)[:5]} are also training seeds: give the "
                         "held-out split a disjoint seed range")
    return {
        "train": collect_analyzer_data(policy_dir, tasks, out_dir, episodes_per_task, train_seeds, "train", **kwargs),
        "heldout": collect_analyzer_data(policy_dir, tasks, out_dir, heldout_episodes_per_task, heldout_seeds,
                                         "heldout", max_steps=heldout_max_steps, sample_seed=1, **kwargs),
    }


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """The records of one split; each gets ``root`` (the JSONL's directory, where its images are)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no analyzer data there; collect it with collect_analyzer_data")
    records = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}:{n} is not a JSON line ({err})") from err
        missing = {"prompt", "images", "answer", "verdict"} - set(record)
        if missing:
            raise ValueError(f"{path}:{n} is not an analyzer record: missing {sorted(missing)}")
        record["root"] = str(path.parent)
        records.append(record)
    return records


def record_images(record: dict[str, Any]) -> list:
    from PIL import Image

    root = Path(record.get("root", "."))
    return [Image.open(root / name).convert("RGB") for name in record["images"]]


def record_request(record: dict[str, Any]) -> JudgeRequest:
    """The analyzer request of a record: its prompt, its two screens and (for a ground-truth judge) its fields."""
    return JudgeRequest(role="analyzer", prompt=record["prompt"], images=record_images(record),
                        fields=dict(record.get("fields") or {}))


__all__ = ["HELDOUT_SEEDS", "TRAIN_SEEDS", "collect_analyzer_data", "collect_splits", "read_records",
           "record_images", "record_request"]
