"""The evaluation runs behind ``guirl eval grounding|offline|judge``:
load data, run the policy, score, and write ``results.json`` + ``report.html``.

Data comes either as guirl episodes (``episodes.jsonl`` + screenshots, see
:mod:`guirl.data.io`) or in a public layout through an adapter
(:mod:`guirl.data.adapters`). ``rule="auto"`` / ``value_rule="auto"`` take the
matching rule the adapter recorded for its dataset (``Episode.extra``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from guirl.data.io import read_episodes
from guirl.data.schema import Episode, Step
from guirl.eval.grounding import evaluate_grounding, grounding_samples, sample_category
from guirl.eval.judge import judge_episodes
from guirl.eval.mind2web import evaluate_mind2web
from guirl.eval.offline import evaluate_offline
from guirl.eval.predict import load_screenshot, predict_steps
from guirl.eval.report import ReportData, StepView, render_report
from guirl.judges.base import Judge
from guirl.rollout.policy import Policy


def load_data(episodes: str | None, dataset_format: str | None, data: str | None, images: str | None,
              split: str | None = None, options: dict | None = None):
    """``(episodes, image_root)`` from a guirl episodes file or a public dataset
    (its release layout or its Hugging Face layout; ``options`` are the format's)."""
    if episodes:
        path = Path(episodes)
        if path.is_dir():
            path = path / "episodes.jsonl"
        # with --images the screenshots live elsewhere; they are checked when loaded
        return read_episodes(path, check_images=images is None), Path(images) if images else path.parent
    if not (dataset_format and data):
        raise ValueError("give --episodes FILE, or --dataset-format NAME with --data PATH")
    from guirl.data.adapters import open_public

    return open_public(dataset_format, data, image_dir=images, split=split, **(options or {}))


def resolve_rule(episodes: list[Episode], rule: str, key: str = "match_rule", default: str = "inclusive") -> str:
    if rule != "auto":
        return rule
    return str(episodes[0].extra.get(key, default)) if episodes else default


def _limit(episodes: list[Episode], limit: int | None) -> list[Episode]:
    return episodes[:limit] if limit else episodes


def _jsonable(obj: Any) -> Any:
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", exclude_none=True)
    if is_dataclass(obj):
        return {k: _jsonable(v) for k, v in asdict(obj).items()}
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    return obj


def write_outputs(out: str | Path, results: dict[str, Any], report: ReportData | None) -> dict[str, Path]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"results": out / "results.json"}
    tmp = out / ".results.json.tmp"
    tmp.write_text(json.dumps(_jsonable(results), indent=1), encoding="utf-8")
    tmp.replace(paths["results"])
    if report is not None:
        paths["report"] = render_report(report, out / "report.html")
    return paths


def run_grounding(episodes, root, policy: Policy, fmt, rule="auto", viewer_limit=24, limit=None, curves=None):
    episodes, no_target = grounding_samples(episodes)
    episodes = _limit(episodes, limit)
    rule = resolve_rule(episodes, rule)
    items = [(ep, ep.steps[0]) for ep in episodes]
    preds, _ = predict_steps(policy, items, root, fmt)
    res = evaluate_grounding(episodes, [p.action for p in preds], rule)
    per_sample = [
        {"id": ep.id, "hit": hit, "predicted": p.action, "text": p.text}
        for ep, p, hit in zip(episodes, preds, res.hits)
    ]
    results = {"command": "grounding", "rule": rule, "metrics": {**res.metrics, "grounding/steps_without_target":
               float(no_target)}, "breakdown": res.breakdown,
               "samples": per_sample}
    rows = [
        {"breakdown": key, "category": cat, "accuracy": cell["accuracy"], "n": int(cell["n"])}
        for key, cells in res.breakdown.items() for cat, cell in cells.items()
    ]
    views = {}
    for ep, p, hit in list(zip(episodes, preds, res.hits))[:viewer_limit]:
        step = ep.steps[0]
        note = f"{sample_category(ep, 'platform')} / {sample_category(ep, 'element_type')}"
        views[f"{ep.id}: {ep.instruction}"] = [_view("target", root, ep, step, p.action, hit, note)]
    report = ReportData(
        title="guirl grounding evaluation",
        metrics=res.metrics,
        breakdowns={
            f"accuracy by {k}": {c: v["accuracy"] for c, v in cells.items()} for k, cells in res.breakdown.items()
        },
        tables={"Accuracy by category": rows},
        trajectories=views,
        curves_file=curves,
        notes=[f"matching rule: {rule}; {len(episodes)} samples"
               + (f"; {no_target} trajectory steps without a coordinate target left out" if no_target else "")],
    )
    return results, report


def run_offline(
    episodes, root, policy, fmt, rule="auto", value_rule="auto", sampler=None, samples=0, k=None, seed=0,
    viewer_limit=10, limit=None, curves=None, mind2web=None, history_steps=3, direction_rule="auto",
):
    episodes = _limit(episodes, limit)
    rule = resolve_rule(episodes, rule)
    value_rule = resolve_rule(episodes, value_rule, "value_rule", "exact")
    direction_rule = resolve_rule(episodes, direction_rule, "direction_rule", "exact")
    items = [(ep, step) for ep in episodes for step in ep.steps if step.valid_actions]
    greedy, sampled = predict_steps(policy, items, root, fmt, sampler, samples, seed, history_steps)
    steps = [(ep.id, step) for ep, step in items]
    res = evaluate_offline(
        steps, [p.action for p in greedy], [[p.action for p in row] for row in sampled] if sampled else None, k,
        rule=rule, value_rule=value_rule, direction_rule=direction_rule,
    )
    metrics = dict(res.metrics)
    if mind2web is None:
        mind2web = bool(episodes) and episodes[0].source.startswith("mind2web")
    if mind2web:
        metrics.update(evaluate_mind2web(steps, [p.action for p in greedy], rule))
    per_step = [
        {"episode": r["episode"], "step": r["step"], "success": r["match"].success, "type_match": r["match"].type_match,
         "grounded": r["match"].grounded, "predicted": p.action, "text": p.text}
        for r, p in zip(res.steps, greedy)
    ]
    results = {"command": "offline", "rule": rule, "value_rule": value_rule, "direction_rule": direction_rule,
               "metrics": metrics,
               "by_type": res.by_type, "steps": per_step}
    views: dict[str, list[StepView]] = {}
    for (ep, step), p, r in zip(items, greedy, res.steps):
        if ep.id not in views and len(views) >= viewer_limit:
            continue
        views.setdefault(f"{ep.id}: {ep.instruction}", []).append(
            _view(f"step {step.index}", root, ep, step, p.action, r["match"].success, step.instruction or "")
        )
    rows = [{"action type": t, "steps": int(v["n"]), "type match": v["type_match"], "success": v["success"]}
            for t, v in res.by_type.items()]
    report = ReportData(
        title="guirl offline evaluation",
        metrics=metrics,
        breakdowns={"step success by action type": {t: v["success"] for t, v in res.by_type.items()},
                    "type match by action type": {t: v["type_match"] for t, v in res.by_type.items()}},
        tables={"By action type": rows},
        trajectories=views,
        curves_file=curves,
        notes=[f"matching rule: {rule}; value rule: {value_rule}; direction rule: {direction_rule}; {len(items)} steps in {len(episodes)} episodes"],
    )
    return results, report


def run_judge(episodes, root, judge: Judge, max_steps=18, viewer_limit=10, limit=None, curves=None):
    episodes = _limit(episodes, limit)
    res = judge_episodes(episodes, judge, root, max_steps)
    results = {"command": "judge", "metrics": res.metrics, "verdicts": res.verdicts}
    views = {}
    for ep, v in list(zip(episodes, res.verdicts))[:viewer_limit]:
        title = f"{ep.id}: {'success' if v['success'] else 'failure'} - {v['reason']}"
        views[title] = [_view(f"step {s.index}", root, ep, s, s.action, None, "") for s in ep.steps[:max_steps]]
    rows = [{"episode": v["episode"], "success": str(v["success"]), "readable": str(v["ok"]), "reason": v["reason"]}
            for v in res.verdicts]
    report = ReportData(
        title="guirl judged outcome evaluation",
        metrics=res.metrics,
        breakdowns={},
        tables={"Verdicts": rows},
        trajectories=views,
        curves_file=curves,
        notes=[f"Lite-Bench protocol: the judge audits the exported log of each episode (cap {max_steps} steps)"],
    )
    return results, report


def _view(title: str, root: Path, ep: Episode, step: Step, predicted, correct, note: str) -> StepView:
    image: Image.Image = load_screenshot(Path(root), step, f"episode {ep.id} step {step.index}")
    return StepView(title, image, list(step.valid_actions), predicted, correct, note)
