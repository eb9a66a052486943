"""Reward inputs: the columns every registered reward reads, built from a recorded Step.

A reward is called with one entry per completion (``[B x G]``: the G
completions of step 0, then those of step 1, ...). :func:`reward_columns`
gives one step's entries; :func:`columns_for` stacks them and repeats each
step's entries for its G completions::

    step_columns = [reward_columns(step, episode, frame) for episode, step in batch]   # B dicts
    reward(completions, **columns_for(step_columns, group_size=G))                      # B x G entries

Column names are exactly those the rewards read (``get_column`` in
:mod:`guirl.rewards`): ``valid_actions``, ``output_frame``, ``screen_size``,
``instruction``, ``history``, ``images``, ``sub_goal``, ``is_grounding``,
``a11y`` (the step's accessibility nodes, which ``step_match`` uses as the
offline evaluation does), ``authors_check`` (the step's ground truth as the
authors' own data file holds it, for the rewards' authors modes); plus ``plan``, the recorded subtask plan, which no
registered reward reads yet. Not built here: ``completion_ids`` (per
completion; TRL passes it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from guirl.actions import Action, Frame
from guirl.data.schema import Episode, HistoryItem, Step

#: the names :func:`reward_columns` returns
COLUMN_NAMES = (
    "valid_actions",
    "output_frame",
    "screen_size",
    "instruction",
    "history",
    "images",
    "sub_goal",
    "plan",
    "is_grounding",
    "a11y",
    "authors_check",
)


def history_text(item: HistoryItem) -> str:
    """A previous step as a string: its raw output y, else its description, else its action as JSON."""
    if item.output:
        return item.output
    if item.description:
        return item.description
    if item.action is not None:
        return item.action.model_dump_json(exclude_none=True, exclude={"frame"})
    return ""


def reward_columns(
    step: Step,
    episode: Episode,
    output_frame: Frame,
    history_outputs: Sequence[str] | None = None,
    images: Sequence[Any] | None = None,
) -> dict[str, Any]:
    """The reward columns of one step, one value per column.

    - ``valid_actions``: A*_t (``step.valid_actions``; when empty, ``[step.action]``);
    - ``output_frame``: the frame the policy writes coordinates in;
    - ``screen_size``: ``(width, height)`` of ``step.screenshot``;
    - ``instruction``: ``step.instruction``, else ``episode.instruction``;
    - ``history``: ``history_outputs`` (the policy's own previous outputs y_{<t},
      on-policy) when given, else the recorded history as strings (:func:`history_text`);
    - ``images``: the screenshots the planning judge sees (PIL images, s_{t-w..t}); empty if not given;
    - ``sub_goal``: ``step.sub_goal``; ``plan``: ``step.subtasks`` as plain dicts, or None;
    - ``is_grounding``: ``step.extra["is_grounding"]`` (GUI-Libra's grounding samples), else False;
    - ``a11y``: ``step.a11y`` (a list of nodes, possibly empty);
    - ``authors_check``: ``step.extra["authors_check"]``, else None: the step's ground truth as the
      authors' reward code receives it, kept by guirl's readers of their files (GUI-Libra's
      ``ground_truth`` record, UI-S1's ``check_options``). ``guilibra(format_rule="authors")`` and
      ``uis1_step(mode="code")`` score against it when it is there.

    Raises ``ValueError`` when the step has no ground truth at all.
    """
    valid: list[Action] = list(step.valid_actions)
    if not valid and step.action is not None:
        valid = [step.action]
    if not valid:
        raise ValueError(
            f"episode {episode.id!r} step {step.index}: no valid_actions and no recorded action; "
            "a reward needs the ground truth A*_t (annotate valid_actions or record the action)"
        )
    history = list(history_outputs) if history_outputs is not None else [history_text(h) for h in step.history]
    return {
        "valid_actions": valid,
        "output_frame": output_frame,
        "screen_size": (step.screenshot.width, step.screenshot.height),
        "instruction": step.instruction or episode.instruction,
        "history": history,
        "images": list(images or []),
        "sub_goal": step.sub_goal,
        "plan": None if step.subtasks is None else [s.model_dump() for s in step.subtasks],
        "is_grounding": bool(step.extra.get("is_grounding", False)),
        "a11y": list(step.a11y or []),
        "authors_check": step.extra.get("authors_check"),
    }


def columns_for(step_columns: Sequence[dict[str, Any]], group_size: int) -> dict[str, list[Any]]:
    """Stack B steps' columns into per-completion lists of length ``B x G``, each step's
    value repeated for its ``group_size`` completions (step-major, as TRL orders them).

    >>> columns_for([{"sub_goal": "a"}, {"sub_goal": "b"}], group_size=2)
    {'sub_goal': ['a', 'a', 'b', 'b']}
    """
    if group_size < 1:
        raise ValueError(f"group_size must be >= 1, got {group_size}")
    if not step_columns:
        return {}
    names = list(step_columns[0])
    for i, columns in enumerate(step_columns):
        if set(columns) != set(names):
            raise ValueError(
                f"step {i} has columns {sorted(columns)} but step 0 has {sorted(names)}; "
                "build every step's columns with reward_columns"
            )
    return {name: [columns[name] for columns in step_columns for _ in range(group_size)] for name in names}
