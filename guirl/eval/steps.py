"""Batched greedy evaluation on recorded steps (held-out step success).

Every step's prompt is built by :func:`guirl.rollout.history.window_prompt`
(as training builds it), all prompts go through one generation engine call
(batched, greedy), each output is parsed in the policy's frame, converted to
screen pixels and matched against A*_t with
:func:`guirl.matching.step.match_action`. Replaces one ``generate`` call per
step (which took 425 s for 360 steps on the base agent).
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from guirl.data.schema import Episode, Step
from guirl.matching.step import match_action
from guirl.models.prompts import PromptSpec
from guirl.rollout.engine import GenerationEngine, SamplingParams
from guirl.rollout.history import recorded_prompt


def evaluate_steps(
    engine: GenerationEngine,
    spec: PromptSpec,
    frame_for,
    steps: list[tuple[Episode, Step, Path]],
    max_new_tokens: int = 80,
    predictions: list | None = None,
    guidance: list | None = None,
    block=None,
) -> dict[str, float]:
    """Greedy held-out metrics: parse rate, type match, grounding (over steps needing a point), step success.

    ``predictions``, when given a list, receives one ``(action or ParseFailure, StepMatch, text)`` per step.
    ``guidance`` (one list of reference actions per step, or None for a step without) puts the privileged
    block (:mod:`guirl.models.guidance`) in the prompts and adds ``eval/followed``: the share of guided
    steps whose output matches one of the references given (how much a teacher follows guidance).
    ``block(references, fmt, frame) -> str`` writes the block's text (default: LiteGUI's reference
    actions; :func:`guirl.judges.analyzer.analyzer_guidance` writes ComputerSD's ``Guide:`` line).
    """
    from guirl.actions import Frame, ParseFailure, parse_action
    from guirl.models.guidance import Guidance, references

    if guidance is not None and len(guidance) != len(steps):
        raise ValueError(f"guidance has {len(guidance)} entries for {len(steps)} steps; give one (or None) per step")
    hits = {"type": 0, "ground": 0, "pointed": 0, "success": 0, "parsed": 0, "guided": 0, "followed": 0}
    prompts, images, guidance_refs = [], [], []
    for i, (ep, st, root) in enumerate(steps):
        image = Image.open(Path(root) / st.screenshot.path).convert("RGB")
        refs = references(guidance[i], spec.fmt) if guidance is not None and guidance[i] else None
        guidance_refs.append(refs)
        writer = block or (lambda r, fmt, frame: Guidance(list(r)).text(fmt, frame))
        text = writer(refs, spec.fmt, frame_for(*image.size)) if refs else None
        prompt, image = recorded_prompt(spec, frame_for, ep, st, root, guidance=text, image=image)
        prompts.append(prompt)
        images.append(image)
    outputs = engine.generate(prompts, SamplingParams(n=1, temperature=0.0, max_new_tokens=max_new_tokens))
    for i, ((_episode, step, _), image, (completion,)) in enumerate(zip(steps, images, outputs, strict=True)):
        action = parse_action(completion.text, spec.fmt, frame_for(*image.size))
        if action:
            try:
                action = action.to_frame(Frame.screen(*image.size))
            except ValueError as err:
                action = ParseFailure(reason=f"cannot convert to screen pixels: {err}")
        m = match_action(action, step.valid_actions, screen_size=image.size, a11y=step.a11y)
        if predictions is not None:
            predictions.append((action, m, completion.text))
        hits["parsed"] += bool(action)
        hits["type"] += m.type_match
        hits["pointed"] += m.needs_point
        hits["ground"] += m.grounded
        hits["success"] += m.success
        if guidance_refs[i]:
            hits["guided"] += 1
            hits["followed"] += match_action(action, guidance_refs[i], screen_size=image.size, a11y=step.a11y).success
    n = max(1, len(steps))
    followed = {"eval/followed": hits["followed"] / max(1, hits["guided"])} if guidance is not None else {}
    return followed | {
        "eval/parse_rate": hits["parsed"] / n,
        "eval/type_match": hits["type"] / n,
        "eval/grounding": hits["ground"] / max(1, hits["pointed"]),
        "eval/step_success": hits["success"] / n,
    }
