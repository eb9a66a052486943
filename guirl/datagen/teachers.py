"""Reasoning teachers for InfiGUI-R1 spatial reasoning distillation (docs/methods.md section 3).

A teacher gets a :class:`TeacherInput` - the spatial description
``D_spatial`` (:mod:`guirl.datagen.spatial`), the action space, the goal ``G``
and optionally the step's sub-goal - and writes reasoning ``R_teacher`` plus
an action ``a_teacher`` (:class:`TeacherOutput`). The pipeline
(:mod:`guirl.datagen.reasoning`) keeps a pair only when the action is correct.

Teachers here:

- :class:`ModelTeacher`: any guirl policy (tiny or a real Qwen-VL checkpoint),
  prompted with the screenshot plus the spatial description; its reasoning is
  the text inside ``<think>...</think>``. Departure: the paper's teacher is a
  text-only LLM (QwQ-32B) reading ``D_spatial``; a VLM teacher also sees the
  screenshot.
- :class:`JudgeTeacher`: any :class:`guirl.judges.Judge` (e.g. an
  OpenAI-compatible server running a reasoning LLM), text only as in the
  paper; it answers JSON ``{"reasoning": ..., "action": ...}`` with the action
  in a registered output format and the description's coordinates.
- :class:`OracleTeacher`: the built-in world's privileged teacher. It reads
  the valid actions ``A*_t``, the a11y tree and the sub-goal and writes
  templated reasoning - observation, intent, the target element and where it
  is, the action - in seeded, varied phrasings (see :mod:`guirl.datagen.oracle_reasoning`).
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from PIL import Image

from guirl.actions import Action, Frame, ParseFailure, format_action, parse_action
from guirl.actions.formats import extract_reasoning
from guirl.data.schema import Episode, Step
from guirl.datagen.bottleneck import step_subgoal
from guirl.datagen.oracle_reasoning import choose_target, oracle_reasoning
from guirl.judges.base import Judge, JudgeRequest


@dataclass
class TeacherInput:
    """What a teacher sees at one step (attempt ``attempt`` of the rejection sampling)."""

    episode: Episode
    step: Step
    goal: str
    sub_goal: str | None  # None when the teacher is not given the sub-goal
    spatial: str  # D_spatial
    spatial_frame: Frame  # the frame of the coordinates written in ``spatial``
    screenshot: Image.Image
    attempt: int = 0


@dataclass
class TeacherOutput:
    """Reasoning (None when the teacher wrote none) and action in screen pixels (or why not)."""

    reasoning: str | None
    action: Action | ParseFailure
    raw: str = ""


#: A teacher is any callable TeacherInput -> TeacherOutput.
Teacher = Callable[[TeacherInput], TeacherOutput]


def writable(action: Action, fmt: str) -> bool:
    """Whether output format ``fmt`` can write ``action`` (the SFT target must be writable)."""
    try:
        format_action(action, fmt)
    except ValueError:
        return False
    return True


TEACHER_PROMPT = (
    "{goal}\n{sub_goal_line}"
    "Elements on the screen (role, text, coordinates; indentation = nesting):\n{spatial}\n"
    "First think inside <think></think>: what the screen shows, what the next step is, which element it needs "
    "and where that element is, then write the action."
)


def teacher_instruction(inp: TeacherInput) -> str:
    """The teacher's task text: goal, sub-goal (when given), the spatial description and what to write."""
    sub_goal_line = f"Current sub-goal: {inp.sub_goal}\n" if inp.sub_goal else ""
    return TEACHER_PROMPT.format(goal=inp.goal, sub_goal_line=sub_goal_line, spatial=inp.spatial)


class ModelTeacher:
    """A guirl policy as a reasoning teacher, sampled with ``temperature`` (seeded per step and attempt).

    ``fmt`` None: the policy's own prompt spec; its system-prompt style and
    history window are used as well.
    """

    def __init__(self, policy, fmt: str | None = None, temperature: float = 0.7, max_new_tokens: int = 256,
                 seed: int = 0):
        self.policy, self.fmt, self.temperature = policy, fmt or policy.prompt.fmt, temperature
        self.max_new_tokens, self.seed = max_new_tokens, seed

    def prompt(self, inp: TeacherInput) -> tuple[list, list]:
        """The teacher's messages and images: its instruction, the screenshot, and the step's history read as the
        policy's spec writes past steps (raw outputs or actions)."""
        from guirl.models.prompts import build_messages

        spec = self.policy.prompt
        return build_messages(teacher_instruction(inp), inp.screenshot, inp.step.history, fmt=self.fmt,
                              frame=self.policy.frame_for(*inp.screenshot.size), history_window=spec.history_window,
                              style=spec.style, history_text=spec.history_text)

    def __call__(self, inp: TeacherInput) -> TeacherOutput:
        from guirl.models.generate import decode_generation, sample_completions

        width, height = inp.screenshot.size
        messages, images = self.prompt(inp)
        seed = self.seed + zlib.crc32(f"{inp.episode.id}:{inp.step.index}:{inp.attempt}".encode())
        rows = sample_completions(self.policy, messages, images, 1, self.temperature, 1.0, self.max_new_tokens, seed)
        generation = decode_generation(self.policy, rows[0], self.fmt, width, height)
        return TeacherOutput(extract_reasoning(generation.text) or None, generation.action, generation.text)


JUDGE_TEACHER_PROMPT = (
    "You control a computer. Decide the next action from a text description of the screen.\n"
    "Action space:\n{action_space}\n\n"
    "Goal: {goal}\n{sub_goal_line}"
    "Screen:\n{spatial}\n\n"
    "Reason step by step about what the screen shows, what the next step is, which element it needs and where it "
    "is (use the coordinates above), then give the action. Answer with one JSON object: "
    '{{"reasoning": "...", "action": "<the action written in the output format above>"}}'
)


class JudgeTeacher:
    """A text-only LLM behind the Judge protocol as the teacher (the paper's QwQ-32B setting).

    The action text is parsed in ``fmt`` with coordinates in the spatial
    description's frame, then converted to screen pixels.
    """

    def __init__(self, judge: Judge, fmt: str = "qwen_computer_use"):
        self.judge, self.fmt = judge, fmt

    def __call__(self, inp: TeacherInput) -> TeacherOutput:
        from guirl.models.prompts import system_prompt

        width, height = inp.screenshot.size
        sub_goal_line = f"Current sub-goal: {inp.sub_goal}\n" if inp.sub_goal else ""
        prompt = JUDGE_TEACHER_PROMPT.format(action_space=system_prompt(self.fmt, inp.spatial_frame), goal=inp.goal,
                                             sub_goal_line=sub_goal_line, spatial=inp.spatial)
        if inp.attempt:  # a different prompt per try, so a caching client samples anew
            prompt += f"\n(Try {inp.attempt + 1}: an earlier answer for this step was rejected.)"
        result = self.judge(JudgeRequest(role="reasoning_teacher", prompt=prompt,
                                         fields={"goal": inp.goal, "sub_goal": inp.sub_goal, "attempt": inp.attempt}))
        if not result.ok:
            return TeacherOutput(None, ParseFailure(reason=f"judge failed: {result.reason}", raw=result.raw[:200]),
                                 result.raw)
        reasoning, action_text = result.verdict.get("reasoning"), result.verdict.get("action")
        if not isinstance(action_text, str):
            return TeacherOutput(None, ParseFailure(reason="judge answer has no string 'action'"), result.raw)
        action = parse_action(action_text, self.fmt, inp.spatial_frame)
        if action:
            action = action.to_frame(Frame.screen(width, height))
        text = reasoning.strip() if isinstance(reasoning, str) and reasoning.strip() else None
        return TeacherOutput(text, action, result.raw)


class OracleTeacher:
    """Privileged templated teacher for steps with ``A*_t`` and an a11y tree (the built-in world).

    Attempt 0 aims at the valid action that best fits the sub-goal
    (:func:`~guirl.datagen.oracle_reasoning.choose_target`), later attempts at a
    valid action drawn with a seeded RNG; the
    phrasing is drawn from the same RNG (``seed``, episode id, step, attempt).
    ``coords`` adds the target's centre to the reasoning: ``none`` (default,
    position in words only, since the student's coordinate frame is unknown
    here), ``screen`` pixels or ``relative`` 0-1000. With ``fmt`` only valid
    actions that output format can write are targets (e.g. no ``open_app``
    for ``qwen_computer_use``), when there is one. ``style``: the full reasoning or
    its compact spatial part (:func:`~guirl.datagen.oracle_reasoning.oracle_reasoning`).
    """

    def __init__(self, seed: int = 0, coords: str = "none", fmt: str | None = None, style: str = "full"):
        if coords not in ("none", "screen", "relative"):
            raise ValueError(f"coords must be 'none', 'screen' or 'relative', got {coords!r}")
        if style not in ("full", "compact"):
            raise ValueError(f"style must be 'full' or 'compact', got {style!r}")
        self.seed, self.coords, self.fmt, self.style = seed, coords, fmt, style

    def __call__(self, inp: TeacherInput) -> TeacherOutput:
        step = inp.step
        if not step.valid_actions:
            return TeacherOutput(None, ParseFailure(reason="oracle teacher needs valid_actions on the step"))
        rng = random.Random(f"oracle:{self.seed}:{inp.episode.id}:{step.index}:{inp.attempt}")
        width, height = step.screenshot.width, step.screenshot.height
        candidates = [a for a in step.valid_actions if self.fmt is None or writable(a, self.fmt)]
        candidates = candidates or list(step.valid_actions)
        if inp.attempt == 0:
            target = choose_target(step, step_subgoal(inp.episode, step), candidates)
        else:
            target = candidates[rng.randrange(len(candidates))]
        if target.frame.kind == "screen" and target.frame.width is None:
            target = target.model_copy(update={"frame": Frame.screen(width, height)})
        target = target.to_frame(Frame.screen(width, height))
        if target.point is None and target.box is not None:
            target = target.model_copy(update={"point": target.target_point()})
        reasoning = oracle_reasoning(step, target, inp.goal, inp.sub_goal, rng, coords=self.coords, style=self.style)
        return TeacherOutput(reasoning, target, reasoning)
