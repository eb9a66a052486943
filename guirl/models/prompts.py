"""Chat messages for one agent step, in the layout Qwen-VL processors expect.

A step's prompt is ``[system, user]``: the system turn describes the task of
a GUI agent, the output format (its registered description and the action
types it can express) and the coordinate frame; the user turn holds the
instruction, a window of the previous steps (nAO history: the last ``n``
outputs or actions, optionally with their screenshots, CCPO/UI-S1), the
current screenshot and, for a privileged teacher only, a guidance block
(LiteGUI guided OPD's reference action, ComputerSD's analyzer guidance).

Images are returned separately, in the order their ``{"type": "image"}``
items appear, which is the order the processor must receive them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from PIL import Image
from pydantic import BeforeValidator

from guirl.actions import Frame, format_action, get_format
from guirl.data.schema import HistoryItem


def _casc_off(value):
    return "off" if value is False else value  # YAML reads a bare `off` as false


#: CCPO's CASC history compression (guirl.rollout.casc), as configs and prompt specs name it.
CascMode = Annotated[Literal["off", "max", "min"], BeforeValidator(_casc_off)]

#: Output format of the tiny models unless told otherwise.
DEFAULT_FORMAT = "qwen_computer_use"

Message = dict[str, Any]


@dataclass
class Prompt:
    """One model prompt: chat ``messages`` and its ``images`` in the order their
    ``{"type": "image"}`` items appear (what the processor must receive).

    ``key`` names the prompt (e.g. a recorded step's ``episode/step``) for
    logs and group ids. Sharing is by object: rows that point to the same
    prompt (a GRPO group) are encoded once and their images pass the vision
    tower once; equal prompts in different objects are encoded separately.
    """

    messages: list[Message]
    images: list[Image.Image]
    key: str | None = None

#: The thinking switch: REASONING_SWITCH[compact][on].
REASONING_SWITCH = {
    False: {True: "Think step by step inside <think></think>, then answer.", False: "Answer directly, without <think>."},
    True: {True: "Think first.", False: "No thinking."},
}

#: File in a model directory recording how the model was prompted in training.
PROMPT_SPEC_FILE = "guirl_prompt.json"


@dataclass(frozen=True)
class PromptSpec:
    """How a policy is prompted: output format, system-prompt style, history window.

    Training writes it next to the checkpoint (:data:`PROMPT_SPEC_FILE`) and
    loading reads it, so generation and evaluation prompt a model exactly as
    it was trained. ``style="compact"`` is a one-line system prompt for tiny
    models, where every prompt token costs training time. ``reasoning``
    switches thinking on or off through the prompt (GUI-Libra trains on
    reasoning-then-action and direct-action samples; the switch tells the
    model which one is wanted). ``history_images`` and ``casc`` choose the
    history builder (:func:`guirl.rollout.history.history_builder`) the
    rollout, the trainers and the evaluation share. ``history_text="action"``
    shows each past step as its action written in the model's output format
    and coordinate frame (:func:`written_action`; no reasoning), the same text
    for a recorded step and for the model's own executed step;
    ``"output"`` shows a past step's raw output when it has one.
    """

    fmt: str = DEFAULT_FORMAT
    style: Literal["full", "compact"] = "full"
    history_window: int = 3
    reasoning: bool | None = None  # ask for <think> first (True), forbid it (False), say nothing (None)
    history_images: int = 0  # nAO: the last n shown steps keep their screenshots (0: nA, actions only)
    casc: Literal["off", "max", "min"] = "off"  # CCPO's CASC: crop / drop history screenshots (rollout/casc.py)
    history_text: Literal["output", "action"] = "output"  # a past step as text: its raw output, or its action

    def __post_init__(self) -> None:
        if self.history_text not in ("output", "action"):
            raise ValueError(f"history_text must be 'output' or 'action', got {self.history_text!r}")

    def save(self, model_dir: str | Path) -> None:
        (Path(model_dir) / PROMPT_SPEC_FILE).write_text(json.dumps(asdict(self), indent=1))

    @classmethod
    def load(cls, model_dir: str | Path) -> PromptSpec:
        """The spec saved in ``model_dir``, or the defaults when there is none."""
        path = Path(model_dir) / PROMPT_SPEC_FILE
        if not path.is_file():
            return cls()
        try:
            return cls(**json.loads(path.read_text()))
        except (json.JSONDecodeError, TypeError) as err:
            raise ValueError(f"{path}: not a valid prompt spec ({err}); expected keys fmt, style, history_window") from None


def describe_frame(frame: Frame) -> str:
    """One sentence telling the model which coordinates to write."""
    if frame.kind == "relative":
        scale = int(frame.scale) if float(frame.scale).is_integer() else frame.scale  # type: ignore[arg-type]
        return f"Coordinates are relative: x and y run from 0 (left/top) to {scale} (right/bottom)."
    size = f" ({frame.width}x{frame.height})" if frame.width else ""
    return f"Coordinates are pixels of the screenshot as you see it{size}, origin at the top left."


def system_prompt(fmt: str = DEFAULT_FORMAT, frame: Frame | None = None, style: str = "full") -> str:
    """The system turn for output format ``fmt`` (any registered format name)."""
    spec = get_format(fmt)
    if style == "compact":
        return f"GUI agent. Output: {spec.name}. {describe_frame(frame if frame is not None else spec.default_frame)}"
    if style != "full":
        raise ValueError(f"unknown prompt style {style!r}; choose 'full' or 'compact'")
    actions = ", ".join(sorted(t.value for t in spec.supported_types))
    lines = [
        "You are a GUI agent. You are given a task, the previous steps and a screenshot of the screen; "
        "choose the next action.",
        f"Output format: {spec.name}.",
    ]
    if spec.description:
        lines.append(spec.description)
    lines.append(f"Available actions: {actions}.")
    lines.append(describe_frame(frame if frame is not None else spec.default_frame))
    return "\n".join(lines)


def history_line(item: HistoryItem, fmt: str, frame: Frame | None = None, text: str = "output") -> str:
    """How a previous step appears in the prompt.

    ``text="output"``: its raw output, else its action (in the action's own frame).
    ``text="action"``: its action as the model writes it (:func:`written_action` in ``frame``), whatever the
    step's output was, so a recorded step and the model's own executed step read the same.
    """
    if item.output and text == "output":
        return item.output
    if item.action is not None:
        try:
            if text == "action" and frame is not None:
                return written_action(item.action, fmt, frame)
            return format_action(item.action, fmt)
        except ValueError:  # the format cannot express this action: describe it instead
            return item.description or item.action.type.value
    return item.description or "(no action recorded)"


def written_action(action, fmt: str, frame: Frame) -> str:
    """``action`` as a model writes it in format ``fmt``: converted to ``frame`` and coordinates rounded to
    whole numbers of that frame (pixels of the resized image, or 0-1000), as Qwen-VL models write them.

    The one writer of SFT targets and of the reference actions in a privileged guidance block.
    """
    action = action.to_frame(frame)
    rounded = {k: tuple(float(round(v)) for v in getattr(action, k)) for k in ("point", "end_point", "box")
               if getattr(action, k) is not None}
    return format_action(action.model_copy(update=rounded), fmt)


#: The header that opens the privileged block of a teacher's prompt (LiteGUI's reference action,
#: ComputerSD's analyzer guidance); the student's prompt never holds it.
GUIDANCE_HEADER = "[PRIVILEGED_ACTION_GUIDANCE]"


def build_messages(
    instruction: str,
    screenshot: Image.Image,
    history: Sequence[HistoryItem] = (),
    fmt: str = DEFAULT_FORMAT,
    frame: Frame | None = None,
    history_window: int = 3,
    history_images: Sequence[Image.Image | None] | None = None,
    guidance: str | None = None,
    style: str = "full",
    reasoning: bool | None = None,
    history_captions: Sequence[str | None] | None = None,
    history_text: str = "output",
) -> tuple[list[Message], list[Image.Image]]:
    """Messages and images for one step.

    ``history`` holds every previous step, oldest first; only the last
    ``history_window`` appear (0 = none). ``history_images`` (same length as
    ``history``, entries may be None) adds a screenshot before each kept
    step; ``history_captions`` (same length; entries may be None) a line
    after an image saying which part of the screen it shows (CASC crops,
    :func:`guirl.rollout.casc.crop_caption`). ``frame`` is the coordinate frame the model should answer in
    (default: the format's). ``guidance`` is appended to the user turn.
    ``style`` selects the system prompt and ``reasoning`` adds the thinking
    switch (:class:`PromptSpec`). ``history_text`` says how a past step reads
    (:func:`history_line`).
    """
    if not instruction:
        raise ValueError("build_messages needs a non-empty instruction")
    if history_images is not None and len(history_images) != len(history):
        raise ValueError(
            f"history_images has {len(history_images)} entries but history has {len(history)}; pass one (or None) "
            "per history item"
        )
    if history_captions is not None and len(history_captions) != len(history):
        raise ValueError(f"history_captions has {len(history_captions)} entries but history has {len(history)}")
    if history_window < 0:
        raise ValueError(f"history_window must be >= 0, got {history_window}")
    start = max(0, len(history) - history_window) if history_window else len(history)
    history_frame = frame if frame is not None else get_format(fmt).default_frame
    content: list[dict[str, Any]] = [{"type": "text", "text": f"Task: {instruction}\n"}]
    images: list[Image.Image] = []
    if start < len(history):
        content.append({"type": "text", "text": "Previous steps:\n"})
        for index in range(start, len(history)):
            image = history_images[index] if history_images is not None else None
            if image is not None:
                content.append({"type": "image"})
                images.append(image)
                caption = history_captions[index] if history_captions is not None else None
                if caption:
                    content.append({"type": "text", "text": f"{caption}\n"})
            line = history_line(history[index], fmt, history_frame, history_text)
            content.append({"type": "text", "text": f"Step {index + 1}: {line}\n"})
    content.append({"type": "text", "text": "Current screenshot:\n"})
    content.append({"type": "image"})
    images.append(screenshot)
    if guidance:
        content.append({"type": "text", "text": f"\n{GUIDANCE_HEADER}\n{guidance}"})
    system = system_prompt(fmt, frame, style)
    if reasoning is not None:
        system += " " + REASONING_SWITCH[style == "compact"][reasoning]
    messages = [
        {"role": "system", "content": [{"type": "text", "text": system}]},
        {"role": "user", "content": content},
    ]
    return messages, images


def step_prompt(
    spec: PromptSpec,
    frame: Frame,
    instruction: str,
    screenshot: Image.Image,
    history: Sequence[HistoryItem] = (),
    history_images: Sequence[Image.Image | None] | None = None,
    guidance: str | None = None,
    reasoning: bool | None = None,
    key: str | None = None,
    history_captions: Sequence[str | None] | None = None,
) -> Prompt:
    """The :class:`Prompt` of one agent step, as ``spec`` says the policy is prompted.

    The one prompt builder the RL samplers, their scorers and the batched
    evaluation share, so a sample is trained on exactly the tokens and images
    it was generated from. ``reasoning`` overrides ``spec.reasoning``.
    """
    messages, images = build_messages(
        instruction, screenshot, history, fmt=spec.fmt, frame=frame, history_window=spec.history_window,
        history_images=history_images, guidance=guidance, style=spec.style,
        reasoning=spec.reasoning if reasoning is None else reasoning, history_captions=history_captions,
        history_text=spec.history_text,
    )
    return Prompt(messages, images, key)
