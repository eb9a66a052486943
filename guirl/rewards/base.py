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

Unparsable model output scores 0, never raises; malformed *data* (columns)
raises ``ValueError`` naming the column and the fix.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from guirl.actions import Action, ActionType, Frame, ParseFailure, get_format, parse_action
from guirl.registry import Registry

REWARDS: Registry[Callable[..., Reward]] = Registry(
    "reward", [f"guirl.rewards.{m}" for m in ("litegui", "litegui_md", "infigui", "guilibra", "uis1")]
)
_TYPE_VALUES = frozenset(t.value for t in ActionType)


@dataclass
class RewardOutput:
    """Scores of a batch of completions: ``scores`` [N] and named sub-scores, each [N]."""

    scores: list[float]
    components: dict[str, list[float]] = field(default_factory=dict)

    def metrics(self, prefix: str) -> dict[str, float]:
        """Batch means, keyed ``rewards/<prefix>/<component>``."""
        out = {f"rewards/{prefix}/score": _mean(self.scores)}
        out.update({f"rewards/{prefix}/{k}": _mean(v) for k, v in self.components.items()})
        return out


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else 0.0


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
        return self.score(completions, **columns).scores


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


def parse_completions(
    completions: Sequence[Any],
    fmt: str,
    columns: dict[str, Any],
    require_sized: bool = False,
    unsized_kind_ok: str | None = None,
) -> list[Action | ParseFailure]:
    """Parse every completion in format ``fmt`` in its ``output_frame`` (never raises on text).

    ``require_sized``: the reward converts coordinates, so the output frame
    must have a size (or be of kind ``unsized_kind_ok``, which the reward
    takes as its own scoring frame); checked before any output is seen.
    """
    frames = [as_frame(f) for f in get_column(columns, "output_frame", len(completions), None)]
    if require_sized:
        default = get_format(fmt).default_frame
        for frame in frames:
            if not _sized(frame or default) and (frame or default).kind != unsized_kind_ok:
                raise ValueError(
                    f"format {fmt!r} writes coordinates in a {(frame or default).kind!r} frame of unknown size; pass "
                    "output_frame=[Frame.resized(w, h) / Frame.screen(w, h) / Frame.relative(1000), ...] per completion"
                )
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
