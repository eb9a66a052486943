"""The reward contract and registry.

A reward is a callable ``(completions, **columns) -> list[float]`` (TRL's
contract: ``completions`` are strings or conversational message lists, the
other keyword arguments are dataset columns, one entry per completion).
guirl rewards are :class:`Reward` objects, which also offer
:meth:`Reward.score` returning a :class:`RewardOutput` with the named
sub-scores for logging. Rewards are built by name::

    reward = make_reward("litegui_ms", fmt="litegui")
    reward(["{...}"], valid_actions=[[action]], output_frame=[frame])   # -> [0.83]

Columns every action reward reads (one entry per completion):

- ``valid_actions``: A*_t, a list of :class:`~guirl.actions.Action` (or dicts
  of its fields); or ``action``: one ground-truth action;
- ``output_frame`` (optional): the :class:`~guirl.actions.Frame` the model
  writes coordinates in (default: the format's own default frame);
- ``screen_size`` (optional): ``(width, height)`` of the screenshot, for
  rewards that measure distances in screen pixels.

:func:`guirl.rewards.inputs.reward_columns` builds every column from a
recorded Step. Unparsable model output scores 0, never raises; malformed
*data* (columns) raises ``ValueError`` naming the column and the fix.

Judge-backed components (``litegui_md``'s ``subtask``, ``infigui_agent``'s
``subgoal``) are *masked* where the judge failed or answered something
unreadable: the component is ``nan`` for that completion, flagged in
:attr:`RewardOutput.failed`, and its weighted term is left out of the score
(its weight is not handed to the other terms).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from guirl.actions import Action, ActionType, Frame, ParseFailure, get_format, parse_action
from guirl.registry import Registry

REWARDS: Registry[Callable[..., Reward]] = Registry(
    "reward", [f"guirl.rewards.{m}" for m in ("litegui", "litegui_md", "infigui", "guilibra", "uis1", "step")]
)
_TYPE_VALUES = frozenset(t.value for t in ActionType)


@dataclass
class RewardOutput:
    """Scores of a batch of N completions.

    ``scores`` [N]: plain floats, never nan. ``components``: named sub-scores,
    each [N]; a judge-backed component is ``nan`` where it is masked.
    ``failed``: component name -> [N] flags, True where that component's
    judge failed or answered something unreadable (the masked entries).
    """

    scores: list[float]
    components: dict[str, list[float]] = field(default_factory=dict)
    failed: dict[str, list[bool]] = field(default_factory=dict)

    def metrics(self, prefix: str) -> dict[str, float]:
        """Batch means keyed ``rewards/<prefix>/<component>``, taken over the valid (non-nan)
        values only (nan when none is valid), plus ``rewards/<prefix>/<component>_failed``,
        the number of masked completions of each judge-backed component.

        >>> RewardOutput([0.5, 0.2], {"subtask": [1.0, float("nan")]}, {"subtask": [False, True]}).metrics("md")
        {'rewards/md/score': 0.35, 'rewards/md/subtask': 1.0, 'rewards/md/subtask_failed': 1.0}
        """
        out = {f"rewards/{prefix}/score": _mean(self.scores)}
        for name, values in self.components.items():
            valid = [v for v in values if not math.isnan(v)]
            out[f"rewards/{prefix}/{name}"] = _mean(valid) if valid or not values else math.nan
        out.update({f"rewards/{prefix}/{name}_failed": float(sum(flags)) for name, flags in self.failed.items()})
        return out


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else 0.0


def masked_sum(terms: Sequence[tuple[float, float]]) -> float:
    """``sum(weight * value)`` over the ``(weight, value)`` terms whose value is not nan
    (a masked term contributes nothing; its weight is not redistributed).

    >>> masked_sum([(0.6, 0.875), (0.3, float("nan")), (0.1, 1.0)])
    0.625
    """
    return float(sum(w * v for w, v in terms if not math.isnan(v)))


class Reward:
    """Base class: subclasses implement :meth:`score`; calling returns the plain scores."""

    name: str = "reward"
    #: inclusive range every score lies in (property-tested)
    score_range: tuple[float, float] = (0.0, 1.0)

    @property
    def __name__(self) -> str:  # TRL logs reward functions by __name__
        return self.name

    def score(self, completions: Sequence[Any], **columns: Any) -> RewardOutput:
        raise NotImplementedError

    def __call__(self, completions: Sequence[Any], **columns: Any) -> list[float]:
        scores = [float(s) for s in self.score(completions, **columns).scores]
        if any(math.isnan(s) for s in scores):  # masked components must stay out of the score
            raise ValueError(f"reward {self.name!r} produced a nan score: {scores}")
        return scores


def register_reward(name: str) -> Callable[[Callable[..., Reward]], Callable[..., Reward]]:
    """Register a reward factory (usually a :class:`Reward` subclass) under ``name``."""
    return REWARDS.register(name)


def make_reward(name: str, **params: Any) -> Reward:
    """Build the reward registered as ``name`` with its explicit parameters."""
    reward = REWARDS.get(name)(**params)
    reward.name = name
    return reward


def available_rewards() -> list[str]:
    return REWARDS.names()


# -- column helpers -------------------------------------------------------------


def completion_text(completion: Any) -> str:
    """The text of one completion: a string, or TRL's conversational form
    (a list of messages whose last ``content`` is a string or a list of parts)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if isinstance(completion, (list, tuple)) and completion:
        content = completion[-1].get("content", "") if isinstance(completion[-1], dict) else ""
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def get_column(columns: dict[str, Any], name: str, n: int, default: Any = ...) -> list[Any]:
    """Column ``name`` as a list of ``n`` entries (``default`` for all if absent)."""
    if name not in columns or columns[name] is None:
        if default is ...:
            raise ValueError(f"this reward needs the column {name!r} (one entry per completion); pass {name}=[...]")
        return [default] * n
    values = list(columns[name])
    if len(values) != n:
        raise ValueError(f"column {name!r} has {len(values)} entries for {n} completions; give one per completion")
    return values


def as_action(value: Any, column: str = "valid_actions") -> Action:
    """An Action from an Action, a dict of its fields or its JSON text.

    A ``type`` in another spelling (``LongPress``, ``Write``, ``press_back``,
    ``SCROLL_UP``...) is normalised with :mod:`guirl.actions.names`, adding
    the direction or status the name implies.
    """
    if isinstance(value, Action):
        return value
    try:
        if isinstance(value, str):
            value = json.loads(value)
        if isinstance(value, dict):  # HF datasets fill absent struct fields with None
            value = {k: v for k, v in value.items() if v is not None}
        if isinstance(value, dict) and isinstance(value.get("type"), str) and value["type"] not in _TYPE_VALUES:
            from guirl.actions.names import resolve_action_name  # the one name table, shared with the parsers

            meaning = resolve_action_name(value["type"])
            if meaning is not None:
                value = {**value, "type": meaning.type}
                if meaning.direction is not None and value.get("direction") is None:
                    value["direction"] = meaning.direction
                if meaning.status is not None and value.get("status") is None:
                    value["status"] = meaning.status
        return Action.model_validate(value)
    except (ValidationError, ValueError, TypeError) as err:
        raise ValueError(
            f"column {column!r}: cannot read a ground-truth action from {str(value)[:120]!r}: {err}"
        ) from None


def as_frame(value: Any, column: str = "output_frame") -> Frame | None:
    if value is None or isinstance(value, Frame):
        return value
    try:
        return Frame.model_validate(value)
    except ValidationError as err:
        raise ValueError(f"column {column!r}: cannot read a Frame from {value!r}: {err}") from None


def valid_actions_column(columns: dict[str, Any], n: int) -> list[list[Action]]:
    """A*_t per completion from ``valid_actions`` (a list each) or ``action`` (one each)."""
    if columns.get("valid_actions") is not None:
        raw = get_column(columns, "valid_actions", n)
        out = []
        for entry in raw:
            if isinstance(entry, (Action, dict, str)):
                entry = [entry]
            actions = [as_action(a) for a in entry]
            if not actions:
                raise ValueError("column 'valid_actions' has an empty list; every step needs at least one valid action")
            out.append(actions)
        return out
    if columns.get("action") is not None:
        return [[as_action(a, "action")] for a in get_column(columns, "action", n)]
    raise ValueError(
        "this reward needs the ground truth: pass valid_actions=[[Action, ...], ...] (A*_t) or action=[...]"
    )


def _sized(frame: Frame) -> bool:
    return frame.kind == "relative" or frame.width is not None


def output_frames(
    n: int, fmt: str, columns: dict[str, Any], require_sized: bool = False, unsized_kind_ok: str | None = None
) -> list[Frame]:
    """The frame each of the ``n`` completions writes coordinates in: its ``output_frame``,
    else format ``fmt``'s default frame.

    ``require_sized``: the reward converts coordinates, so the output frame
    must have a size (or be of kind ``unsized_kind_ok``, which the reward
    takes as its own scoring frame); checked before any output is seen.
    """
    default = get_format(fmt).default_frame
    frames = [as_frame(f) or default for f in get_column(columns, "output_frame", n, None)]
    if require_sized:
        for frame in frames:
            if not _sized(frame) and frame.kind != unsized_kind_ok:
                raise ValueError(
                    f"format {fmt!r} writes coordinates in a {frame.kind!r} frame of unknown size; pass "
                    "output_frame=[Frame.resized(w, h) / Frame.screen(w, h) / Frame.relative(1000), ...] per completion"
                )
    return frames


def parse_completions(
    completions: Sequence[Any],
    fmt: str,
    columns: dict[str, Any],
    require_sized: bool = False,
    unsized_kind_ok: str | None = None,
) -> list[Action | ParseFailure]:
    """Parse every completion in format ``fmt`` in its :func:`output_frames` frame (never raises on text)."""
    frames = output_frames(len(completions), fmt, columns, require_sized, unsized_kind_ok)
    return [parse_action(completion_text(c), fmt, f) for c, f in zip(completions, frames, strict=True)]


def require_sized_ground_truth(valid: list[list[Action]]) -> None:
    """Ground-truth coordinates must be in a frame with a size to be compared in normalised units."""
    for actions in valid:
        for a in actions:
            if (a.point is not None or a.box is not None) and not _sized(a.frame):
                raise ValueError(
                    f"column 'valid_actions': a {a.type.value} action has coordinates in a {a.frame.kind!r} frame "
                    "without a size; give it Frame.screen(width, height) (or the frame it was annotated in)"
                )


def screen_frames(columns: dict[str, Any], valid: list[list[Action]], needed_for: str) -> list[Frame]:
    """The screen-pixel frame of each sample: the ``screen_size`` column, else the first sized
    pixel frame of its A*_t (a sample whose A*_t has no coordinates needs none: unit frame).

    ``needed_for`` names what measures screen pixels, for the error message.
    """
    sizes = get_column(columns, "screen_size", len(valid), None)
    frames = []
    for size, actions in zip(sizes, valid, strict=True):
        if size is not None:
            frames.append(Frame.screen(int(size[0]), int(size[1])))
            continue
        sized = [a.frame for a in actions if a.frame.kind != "relative" and a.frame.width is not None]
        if not sized and all(a.point is None and a.box is None for a in actions):
            frames.append(Frame.unit())  # no position to score: the frame is never used
            continue
        if not sized:
            raise ValueError(
                f"{needed_for} measures screen pixels: pass screen_size=[(width, height), ...] "
                "or give the valid actions a sized Frame.screen(width, height)"
            )
        frames.append(sized[0])
    return frames
