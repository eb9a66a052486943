"""Trajectory schema: Episode and Step, with multi-solution ground truth.

One definition per concept: every dataset adapter, environment
recorder and trainer reads and writes these models. Coordinates inside
``valid_actions`` / ``action`` / ``a11y`` boxes are in the frame their Action
(or the Step's ``a11y_frame``) records; the built-in world and the adapters
write screen pixels.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from guirl.actions.frames import Frame
from guirl.actions.types import Action, Box


class StepLabel(str, Enum):
    """What a recorded step is (InfiGUI-R1 error-recovery kinds, docs/methods.md section 3)."""

    CORRECT = "correct"
    ERROR = "error"  # the recorded action was wrong (error-aware negative)
    ERROR_ESCAPE = "error_escape"  # observation after a wrong action; target escapes
    BACK_ON_TRACK = "back_on_track"  # after wrong action + escape; target = original action


class ImageRef(BaseModel):
    """A screenshot file, relative to the dataset directory, and its size."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str = Field(description="image file path, relative to the dataset directory")
    width: int = Field(gt=0, description="image width in pixels")
    height: int = Field(gt=0, description="image height in pixels")


class A11yNode(BaseModel):
    """One accessibility-tree node (role, text, box, parent, state)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    role: str
    text: str = ""
    box: Box
    parent: str | None = None
    enabled: bool = True
    focused: bool = False
    checked: bool | None = None
    value: str | None = None
    #: CSS class names (web pages; icons are often named only by a class); None if unknown or none.
    classes: tuple[str, ...] | None = None
    #: the element's name from its attributes (web pages: aria-label, else title, else alt), which may be
    #: all that names an icon; None if it has none.
    label: str | None = None
    #: whether a click at the box centre reaches this node (or a descendant): False when another
    #: element covers it there; None when not checked.
    visible: bool | None = None

    @field_validator("box")
    @classmethod
    def _box_ordered(cls, box: Box) -> Box:
        if box[2] < box[0] or box[3] < box[1]:
            raise ValueError(f"box {list(box)} must be [x1, y1, x2, y2] with x1 <= x2 and y1 <= y2")
        return box


class Subtask(BaseModel):
    """One item of a subtask plan (LiteGUI's agent memory)."""

    model_config = ConfigDict(extra="forbid")

    description: str
    status: Literal["done", "in_progress", "pending"] = "pending"


class HistoryItem(BaseModel):
    """A previous step as later steps see it (nAO history: action + observation)."""

    model_config = ConfigDict(extra="forbid")

    action: Action | None = None
    output: str | None = Field(default=None, description="the model's raw output y_t, when kept")
    description: str | None = Field(default=None, description="one-line description of the action")
    screenshot: ImageRef | None = None


class Step(BaseModel):
    """One decision point of an episode."""

    model_config = ConfigDict(extra="forbid")

    index: int = Field(ge=0)
    screenshot: ImageRef
    instruction: str | None = Field(default=None, description="step-level instruction (AndroidControl low level)")
    history: list[HistoryItem] = Field(default_factory=list)
    valid_actions: list[Action] = Field(
        default_factory=list, description="A*_t: every action that is correct here (multi-solution ground truth)"
    )
    action: Action | None = Field(default=None, description="the action actually taken when recorded")
    output: str | None = Field(default=None, description="raw model output y_t when recorded from a model")
    reasoning: str | None = Field(
        default=None, description="reasoning that leads to the target action (teacher / oracle), for SFT"
    )
    a11y: list[A11yNode] | None = None
    a11y_frame: Frame = Field(default_factory=Frame.screen, description="frame of a11y boxes")
    sub_goal: str | None = None
    subtasks: list[Subtask] | None = None
    label: StepLabel = StepLabel.CORRECT
    reward: float | None = None
    timings: dict[str, float] = Field(default_factory=dict, description="seconds per phase (policy, env, ...)")
    extra: dict[str, Any] = Field(default_factory=dict)


class Episode(BaseModel):
    """A task attempt or a recorded demonstration: instruction plus steps."""

    model_config = ConfigDict(extra="forbid")

    id: str
    instruction: str
    steps: list[Step] = Field(default_factory=list)
    source: str = Field(default="", description="where it came from: dataset, env, generator")
    platform: Literal["desktop", "web", "mobile", "unknown"] = "unknown"
    task: str | None = Field(default=None, description="task family / template name")
    success: bool | None = None
    failure_reason: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
