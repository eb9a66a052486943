"""The privileged guidance block of LiteGUI's Guided OPD (docs/methods.md section 1): reference actions for a teacher.

The teacher of guided on-policy distillation scores the student's tokens
under ``x~_t = [x_t, reference_action = g_t]``: the student's own prompt with
one block appended to the user turn, after the current screenshot (the
student's prompt never holds it). The block is the
:data:`~guirl.models.prompts.GUIDANCE_HEADER` line, then the reference
action(s) written exactly as the model writes its answers in its output
format (:func:`~guirl.models.prompts.written_action`: the model's frame,
whole-number coordinates), so reading a reference is copying a string the
model already knows how to write. For every output format:

- one reference (Single-GT, Most-Matched-GT)::

      [PRIVILEGED_ACTION_GUIDANCE]
      Reference action: <the action as the format writes it>

- several (Multi-GT: the whole set A*_t, in its recorded order)::

      [PRIVILEGED_ACTION_GUIDANCE]
      Reference actions (any one is correct):
      1. <action>
      2. <action>

Guidance modes (:data:`GUIDANCE_MODES`): ``none`` (plain OPD, no block),
``single`` (one action of A*_t uniformly at random, seeded), ``multi`` (all
of A*_t), ``most_matched`` (``argmax_{a* in A*_t} phi_gui(y, a*)`` against the
student's parsed output ``y``; the first of A*_t when ``y`` does not parse).

A sample whose A*_t holds no action the output format can express (or no
action at all) gets no block under any mode: its teacher sees the plain
prompt, i.e. plain OPD for that sample. :class:`Guidance` flags it
(``unguided``) and :class:`UnguidedMonitor` counts such samples per batch and
warns once when their share passes a threshold.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from guirl.actions import Action, Frame, ParseFailure, get_format
from guirl.models.prompts import written_action

GUIDANCE_MODES = ("none", "single", "multi", "most_matched")


def guidance_block(actions: Sequence[Action], fmt: str, frame: Frame) -> str:
    """The text under the guidance header for reference ``actions`` (see the module docstring)."""
    if not actions:
        raise ValueError("guidance_block needs at least one reference action")
    written = [written_action(a, fmt, frame) for a in actions]
    if len(written) == 1:
        return f"Reference action: {written[0]}"
    return "Reference actions (any one is correct):\n" + "\n".join(f"{i}. {w}" for i, w in enumerate(written, 1))


def references(valid_actions: Sequence[Action], fmt: str) -> list[Action]:
    """A*_t restricted to what format ``fmt`` can express (matching keeps their boxes; a box-only action is
    written aimed at its box centre, as :func:`guirl.trainers.sft.target_action` gives SFT targets)."""
    supported = get_format(fmt).supported_types
    return [a for a in valid_actions if a.type in supported]


def pointed_reference(action: Action) -> Action:
    if action.point is None and action.box is not None:
        return action.model_copy(update={"point": action.target_point(), "box": None})
    return action


@dataclass
class Guidance:
    """The reference(s) chosen for one sample: ``actions`` (empty: no block), the index of a single chosen
    reference in :func:`references` (-1 for ``none`` / ``multi``), whether Most-Matched fell back
    because the student's output did not parse, and ``unguided``: a mode other than ``none`` was asked
    for but no action of A*_t can be written in the format, so the sample got no block (plain OPD)."""

    actions: list[Action]
    index: int = -1
    fallback: bool = False
    unguided: bool = False

    def text(self, fmt: str, frame: Frame) -> str | None:
        return guidance_block([pointed_reference(a) for a in self.actions], fmt, frame) if self.actions else None


class UnguidedMonitor:
    """Counts, per batch, the samples whose guidance silently became ``none`` (:attr:`Guidance.unguided`),
    and warns once (a ``UserWarning``) the first time a batch's share of them exceeds ``threshold``."""

    def __init__(self, threshold: float = 0.1) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be a share in [0, 1], got {threshold}")
        self.threshold = threshold
        self.warned = False

    def update(self, chosen: Sequence[Guidance], mode: str = "") -> dict[str, float]:
        """``guidance/unguided`` (samples) and ``guidance/unguided_frac`` (their share) of one batch."""
        count = sum(g.unguided for g in chosen)
        share = count / max(1, len(chosen))
        if share > self.threshold and not self.warned:
            self.warned = True
            warnings.warn(
                f"guidance {mode!r}: {count} of {len(chosen)} samples in this batch got no reference (no action "
                f"of A*_t can be written in the output format), so their teacher saw the plain prompt (plain OPD); "
                f"the share {share:.2f} exceeds {self.threshold:.2f}. Logged every step as guidance/unguided_frac; "
                "this warning is not repeated",
                UserWarning,
                stacklevel=2,
            )
        return {"guidance/unguided": float(count), "guidance/unguided_frac": share}


def choose_guidance(mode: str, valid_actions: Sequence[Action], fmt: str, rng: random.Random,
                    pred: Action | ParseFailure | None = None, screen: Frame | None = None) -> Guidance:
    """The guidance of one sample under ``mode``.

    ``valid_actions`` is A*_t; ``rng`` draws Single-GT's reference; Most-Matched needs the student's parsed
    output ``pred`` in screen pixels and the ``screen`` frame: ``argmax phi_gui(pred, a*)`` (the first
    maximum on ties, LiteGUI's :func:`~guirl.rewards.litegui.multi_solution_score`), the first reference
    when ``pred`` does not parse.
    """
    from guirl.rewards.litegui import multi_solution_score

    if mode not in GUIDANCE_MODES:
        raise ValueError(f"unknown guidance mode {mode!r}; choose one of {list(GUIDANCE_MODES)}")
    refs = references(valid_actions, fmt)
    if mode == "none":
        return Guidance([])
    if not refs:  # nothing of A*_t can be written in the format: no block, plain OPD for this sample
        return Guidance([], unguided=True)
    if mode == "multi":
        return Guidance(refs)
    if mode == "single":
        i = rng.randrange(len(refs))
        return Guidance([refs[i]], i)
    if pred is None or screen is None:
        raise ValueError("most_matched guidance needs the student's parsed output (pred) and the screen frame")
    if not pred:
        return Guidance([refs[0]], 0, fallback=True)
    _, i = multi_solution_score(pred, refs, screen)
    return Guidance([refs[i]], i)
