"""Offline step metrics: type match (TM), grounding rate (GR), step success
(SR), episode success, Pass@1 (greedy) and Pass@k (sampled).

A prediction is matched against every valid action of the step (A*_t,
the notation of docs/methods.md) and the best match counts. Definitions, as used by
UI-S1 / CCPO (docs/methods.md section 5) and GUI-Libra (section 4):

- **TM**: the predicted action type equals a valid action's type (SWIPE and
  SCROLL are one type by default, since guirl writes both as a content
  direction; set ``merge_scroll_swipe=False`` to split them);
- **GR**: over steps with a pointed valid action (a click-like action that
  carries a point or box, or a TYPE / SELECT on an element box), the share whose prediction has the same type and
  hits the target under the chosen :mod:`~guirl.matching.rules` rule. A
  type mismatch counts as a miss (departure: some papers divide by the
  type-matched steps only; both counts are reported);
- **SR**: type, target point, and value all match. Text (``value_rule``):
  ``exact`` (lower-cased, spaces collapsed), ``f1`` (GUI-Libra's word F1
  >= 0.5), ``anls`` (GUI-Odyssey's ``text_matching``: substring or ANLS
  >= 0.5, case kept), ``substring`` (InfiGUI-R1's and UI-S1's
  ``check_text``: lower-cased and stripped, either one contains the other -
  so an empty prediction matches), ``none`` (text not compared, as AITW's
  ``check_actions_match``, which compares only the type of non-tap actions).
  Key combos as sets; terminate status where given. Scroll / swipe
  (``direction_rule``): ``exact`` (default: the content direction must
  agree), ``axis`` (AITW's ``_check_drag_actions_match``: same main axis, so
  up matches down), ``any`` (UI-S1's ``evaluate_android_control_action``:
  any swipe is right);
- **Episode success**: every step of the episode succeeds (UI-S1's
  ``task_success``); **episode progress**: mean over episodes of the share
  of steps before the first failure (UI-S1's "Average Progress",
  ``final_step_id / num_steps``). Departure: UI-S1 feeds the model its own
  earlier answers (semi-online) and scores 0 progress on any exception;
  guirl feeds the recorded history and counts a ParseFailure as a failed
  step;
- **Pass@k**: a step passes if any of its k samples succeeds; with n > k
  samples the unbiased estimator (:func:`guirl.eval.stats.pass_at_k`).

A prediction that is None or a ParseFailure counts as wrong in every
denominator (as ScreenSpot-Pro's ``wrong_format``, InfiGUI-R1's
``error_num`` and SeeClick's "wrong format" do). InfiGUI-R1's
``click_match_acc`` divides by the steps whose target is a *click*; guirl's
GR divides by every pointed step (click, long press, ...).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from guirl.actions.types import Action, ParseFailure
from guirl.data.schema import Step
from guirl.eval.stats import pass_at_k
from guirl.matching.step import match_action


@dataclass
class OfflineResult:
    """Metrics plus per-step records (for the report's trajectory viewer)."""

    metrics: dict[str, float]
    by_type: dict[str, dict[str, float]]
    steps: list[dict] = field(default_factory=list)


def evaluate_offline(
    steps: list[tuple[str, Step]],
    greedy: list[Action | ParseFailure | None],
    samples: list[list[Action | ParseFailure | None]] | None = None,
    k: int | None = None,
    **match_kwargs,
) -> OfflineResult:
    """Score ``greedy[i]`` (and ``samples[i]``, k of them) against ``steps[i]``.

    ``steps`` are ``(episode_id, step)`` pairs; ``match_kwargs`` go to
    :func:`match_action`. Metric keys are namespaced ``offline/...``.
    """
    if len(greedy) != len(steps) or (samples is not None and len(samples) != len(steps)):
        raise ValueError(f"got {len(steps)} steps but {len(greedy)} greedy predictions / samples")
    records, per_type = [], defaultdict(lambda: defaultdict(float))
    episode_steps: dict[str, list[tuple[int, bool]]] = defaultdict(list)
    tm = gr = gr_den = gr_type_den = sr = 0
    for (ep_id, step), pred in zip(steps, greedy, strict=True):
        size = (step.screenshot.width, step.screenshot.height)
        m = match_action(pred, step.valid_actions, screen_size=size, a11y=step.a11y, **match_kwargs)
        tm += m.type_match
        sr += m.success
        if m.needs_point:
            gr_den += 1
            gr_type_den += m.type_match
            gr += m.grounded
        episode_steps[ep_id].append((step.index, m.success))
        gold_type = step.valid_actions[0].type.value
        row = per_type[gold_type]
        row["n"] += 1
        row["type_match"] += m.type_match
        row["success"] += m.success
        records.append({"episode": ep_id, "step": step.index, "match": m, "pred": pred})
    n = len(steps)
    metrics = {
        "offline/steps": float(n),
        "offline/type_match": tm / n if n else 0.0,
        "offline/grounding_rate": gr / gr_den if gr_den else 0.0,
        "offline/grounding_rate_type_matched": gr / gr_type_den if gr_type_den else 0.0,
        "offline/step_success": sr / n if n else 0.0,
        "offline/pass@1": sr / n if n else 0.0,
        **_episode_metrics(episode_steps),
    }
    if samples is not None:
        metrics.update(_pass_at_k(steps, samples, k, match_kwargs))
    by_type = {t: {"n": r["n"], "type_match": r["type_match"] / r["n"], "success": r["success"] / r["n"]}
               for t, r in sorted(per_type.items())}
    return OfflineResult(metrics, by_type, records)


def _episode_metrics(episode_steps: dict[str, list[tuple[int, bool]]]) -> dict[str, float]:
    """Episode success (all steps) and progress (share of steps before the first failure)."""
    success, progress = [], []
    for rows in episode_steps.values():
        oks = [ok for _, ok in sorted(rows, key=lambda r: r[0])]
        lead = next((i for i, ok in enumerate(oks) if not ok), len(oks))
        success.append(lead == len(oks))
        progress.append(lead / len(oks))
    n = len(episode_steps)
    return {
        "offline/episode_success": sum(success) / n if n else 0.0,
        "offline/episode_progress": sum(progress) / n if n else 0.0,
    }


def _pass_at_k(steps, samples, k: int | None, match_kwargs) -> dict[str, float]:
    sizes = {len(s) for s in samples}
    if len(sizes) != 1 or 0 in sizes:
        raise ValueError(f"every step needs the same non-zero number of samples, got sizes {sorted(sizes)}")
    n = sizes.pop()
    k = k or n
    total = 0.0
    for (_, step), preds in zip(steps, samples, strict=True):
        size = (step.screenshot.width, step.screenshot.height)
        c = sum(
            match_action(p, step.valid_actions, screen_size=size, a11y=step.a11y, **match_kwargs).success
            for p in preds
        )
        total += pass_at_k(n, c, k)
    return {f"offline/pass@{k}": total / len(steps) if steps else 0.0, "offline/samples_per_step": float(n)}
