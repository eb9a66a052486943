"""The one Action type every part of guirl speaks.

An :class:`Action` is what a GUI agent does in one step: click at a point,
type text, press keys, scroll, finish... Its ``type`` enum is the superset of
the action spaces of the five methods in docs/methods.md (LiteGUI, ComputerSD /
OSWorld ``computer_use`` and ``computer_13``, InfiGUI-R1 ``mobile_use``,
GUI-Libra, UI-S1/CCPO). Every coordinate carries the :class:`Frame` it is in.

Parsers never raise on model output: they return an Action or a
:class:`ParseFailure` that says why (and that scores zero everywhere).
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from guirl.actions.frames import Frame

Point = tuple[float, float]
Box = tuple[float, float, float, float]  # x1, y1, x2, y2


class ActionType(str, Enum):
    """Every action kind any supported action space has (one enum for all)."""

    CLICK = "click"
    DOUBLE_CLICK = "double_click"
    TRIPLE_CLICK = "triple_click"
    RIGHT_CLICK = "right_click"
    MIDDLE_CLICK = "middle_click"
    LONG_PRESS = "long_press"
    MOVE = "move"  # hover / mouse_move / MOVE_TO
    MOUSE_DOWN = "mouse_down"
    MOUSE_UP = "mouse_up"
    DRAG = "drag"  # mouse drag from point to end_point
    SWIPE = "swipe"  # touch swipe, from point to end_point or by direction
    SCROLL = "scroll"  # wheel scroll with a direction (content movement, see below)
    TYPE = "type"  # text input
    KEY = "key"  # one key or a combination pressed together (keys)
    KEY_DOWN = "key_down"
    KEY_UP = "key_up"
    WAIT = "wait"
    BACK = "back"  # system back button
    HOME = "home"  # system home button
    ENTER = "enter"  # system enter button (mobile)
    OPEN_APP = "open_app"  # text = app name
    ANSWER = "answer"  # text = the answer
    SELECT = "select"  # choose an option (text) in a drop-down at point
    TERMINATE = "terminate"  # end the episode with status success/failure


Direction = Literal["up", "down", "left", "right"]
#: the opposite direction (finger movement <-> content movement on touch screens)
OPPOSITE_DIRECTION: dict[str, Direction] = {"up": "down", "down": "up", "left": "right", "right": "left"}
Status = Literal["success", "failure"]

#: Actions that need a point (or a box) to be executable.
POINTED_TYPES = frozenset(
    {
        ActionType.CLICK,
        ActionType.DOUBLE_CLICK,
        ActionType.TRIPLE_CLICK,
        ActionType.RIGHT_CLICK,
        ActionType.MIDDLE_CLICK,
        ActionType.LONG_PRESS,
        ActionType.MOVE,
        ActionType.DRAG,
    }
)


class Action(BaseModel):
    """One GUI action.

    Fields are optional because action kinds need different arguments:

    - ``point`` target point; ``box`` target box ``[x1, y1, x2, y2]`` (used in
      annotations, where any point inside is correct);
    - ``end_point`` end of a drag or swipe;
    - ``text`` text typed, app opened, answer given, option selected;
    - ``keys`` lower-case key names pressed together (``("ctrl", "a")``);
    - ``direction`` for scroll/swipe. guirl's one convention: the direction
      the *content view moves towards*, i.e. ``scroll down`` shows what is
      below (mouse wheel down; on a touch screen the finger moves up).
      Dataset adapters convert their own convention into this one.
    - ``amount`` scroll clicks / swipe distance where a format gives one, or
      seconds for wait and long press;
    - ``status`` for terminate;
    - ``description`` free-text description of the action (GUI-Libra
      ``action_description``, ComputerSD ``Action:`` line), kept for history;
    - ``frame`` the coordinate frame of point / box / end_point.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: ActionType
    point: Point | None = None
    box: Box | None = None
    end_point: Point | None = None
    text: str | None = None
    keys: tuple[str, ...] | None = None
    direction: Direction | None = None
    amount: float | None = None
    status: Status | None = None
    description: str | None = None
    frame: Frame = Frame.unit()

    @field_validator("box")
    @classmethod
    def _box_ordered(cls, box: Box | None) -> Box | None:
        if box is not None and (box[2] < box[0] or box[3] < box[1]):
            raise ValueError(
                f"box {list(box)} must be [x1, y1, x2, y2] with x1 <= x2 and y1 <= y2 "
                "(convert [x, y, w, h] boxes with guirl.actions.xywh_to_xyxy)"
            )
        return box

    @field_validator("keys")
    @classmethod
    def _keys_lower(cls, keys: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if keys is None:
            return None
        if not keys or any(not k for k in keys):
            raise ValueError("keys must be a non-empty list of non-empty key names")
        return tuple(k.lower() for k in keys)

    @model_validator(mode="after")
    def _status_only_on_terminate(self) -> Action:
        if self.status is not None and self.type is not ActionType.TERMINATE:
            raise ValueError(f"status is only meaningful on terminate, not on {self.type.value}")
        return self

    # -- geometry -------------------------------------------------------------
    def target_point(self) -> Point | None:
        """The point this action acts on: ``point``, else the centre of ``box``."""
        if self.point is not None:
            return self.point
        if self.box is not None:
            x1, y1, x2, y2 = self.box
            return ((x1 + x2) / 2, (y1 + y2) / 2)
        return None

    def to_frame(self, frame: Frame) -> Action:
        """The same action with every coordinate converted into ``frame``."""
        if frame == self.frame:
            return self
        src = self.frame
        updates: dict = {"frame": frame}
        if self.point is not None:
            updates["point"] = src.convert_point(self.point, frame)
        if self.end_point is not None:
            updates["end_point"] = src.convert_point(self.end_point, frame)
        if self.box is not None:
            x1, y1 = src.convert_point(self.box[:2], frame)
            x2, y2 = src.convert_point(self.box[2:], frame)
            updates["box"] = (x1, y1, x2, y2)
        return self.model_copy(update=updates)


class ParseFailure(BaseModel):
    """What a parser returns for output it cannot read: never an exception.

    ``reason`` says what was wrong; ``raw`` keeps (a prefix of) the text.
    A ParseFailure is falsy, so ``if action:`` reads naturally.
    """

    model_config = ConfigDict(frozen=True)

    reason: str
    raw: str = ""

    def __bool__(self) -> bool:
        return False


def xywh_to_xyxy(box: tuple[float, float, float, float]) -> Box:
    """``[x, y, w, h]`` (ScreenSpot v1/v2, Mind2Web) -> ``[x1, y1, x2, y2]``."""
    x, y, w, h = box
    return (x, y, x + w, y + h)
