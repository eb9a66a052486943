"""Teacher examples on the student's own prefixes, for LiteGUI's guided OPD (docs/methods.md section 1).

In guided OPD the teacher scores *every* token of the student's sample, also the tokens after the sample has
left the reference. A teacher trained by SFT only on targets that agree with the reference
(``recipes/litegui_teacher_tiny.yaml``) has never seen such a prefix, and that is where it disagrees most:
``python benchmarks/litegui_opd.py --divergence`` measured a per-token KL of 0.40 after leaving the reference
(0.11 on samples the world accepts). This module turns recorded student samples into teacher SFT examples on
those prefixes. For one guided example (prompt with the privileged block, reference answer ``R``) and one
student sample ``S`` of the same state::

    answer = S's tokens up to and including the first token where S leaves R    (context: not in the loss)
           + R's tokens after that position, then the end of the turn           (the loss)

e.g. with ``R = 'Action: Click the OK button\\n<tool_call>...[500, 250]...'``, the sample
``'Action: Click the Cancel button...'`` gives the context ``'Action: Click the Cancel'`` and the target
``' button\\n<tool_call>...[500, 250]...'`` (after a wrong description the teacher still writes the reference
action), the sample ``'...[530, 250]...'`` the context ``'...[53'`` and the target ``'0, 250]...'``.

**The cut is the first differing token**, as the divergence benchmark defines leaving the reference
(:func:`leave_index`; both texts tokenized with the model's tokenizer, the reference being the teacher
example's answer, :func:`guirl.trainers.sft.target_text`: the written action as the benchmark's, preceded by
its ``<think>`` text where the examples have one, which the built-in world's data do not): the benchmark's "after leaving" KL is over the positions from
that token on, i.e. over contexts that end inside a field (the next digit after a wrong digit, the rest of a
wrong description), and those are the contexts these examples put the teacher in. A field-level cut (the
student's whole wrong field as context) would leave the positions inside the diverged field untrained.
Positions are matched one for one: the student's token at the cut stands in for the reference's token there,
and the reference goes on from the next one (on the Qwen tokenizers every digit is its own token, so in a
coordinate this is digit for digit). Except where a whole field is missing or added, i.e. the token at the cut
is, on either side, one of the tokenizer's added text tokens (the tags the formats write: ``<tool_call>``,
``<think>``, ``</think>``, ...), as when the student omits the ``Action:`` sentence the reference has, or
writes one the reference lacks: if the student's token appears later in the reference, the student skipped
reference text and the reference goes on after that token; otherwise the student wrote text the reference
has no counterpart for, and all of it, up to where the student writes the reference's token at the cut, is
context, the reference going on from the cut (skipped when the student never writes it).

Samples equal to the reference add nothing and are skipped; so is a sample that stops before the reference
ends without leaving it (no token of it follows a departure). A sample that goes on after the whole
reference leaves it at its first extra token; the continuation is then empty: the target is the end of
the turn. Duplicate samples are kept (they weigh the student's frequent mistakes, as OPD meets them).

The prefix travels as :attr:`guirl.trainers.sft.Example.prefix` (the SFT collator puts its tokens after the
prompt, outside the labels) and the continuation as :attr:`~guirl.trainers.sft.Example.answer`.

Wiring: ``guirl datagen own-prefix`` samples the student on recorded steps and writes ``OUT/samples.jsonl``
(:func:`sample_students`); SFT's ``own_prefix_samples`` reads such files and adds the copies
(:func:`own_prefix_data`): each sample is guided as OPD's default Most-Matched-GT would guide it (the valid
action nearest to the sample is the single reference in the block and the target).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from guirl.actions import Frame, get_format
from guirl.data.io import read_episodes
from guirl.data.schema import Episode, Step
from guirl.trainers.sft_examples import Example, step_thought, target_action, target_text

SAMPLES_FILE = "samples.jsonl"


@dataclass(frozen=True)
class OwnPrefix:
    """One sample cut where it leaves the reference: ``prefix`` (the sample's text through token ``cut``)
    and ``continuation`` (the reference's text after its token ``cut``; empty past its end)."""

    prefix: str
    continuation: str
    cut: int


def leave_index(sample_ids: Sequence[int], reference_ids: Sequence[int]) -> int | None:
    """The first position where ``sample_ids`` leaves ``reference_ids`` (a different token, or a token past the
    reference's end), as ``benchmarks/litegui_opd.py --divergence`` cuts; None when it never does (equal, or
    a prefix of the reference)."""
    return next((j for j in range(len(sample_ids)) if j >= len(reference_ids) or sample_ids[j] != reference_ids[j]),
                None)


def own_prefix_split(sample: str, reference: str, tokenizer) -> OwnPrefix | None:
    """``sample`` cut where it leaves ``reference`` (see the module docstring), or None when it does not, or
    when it wrote a field the reference lacks and never came back to the reference's next one."""
    s = tokenizer(sample, add_special_tokens=False, return_offsets_mapping=True)
    r = tokenizer(reference, add_special_tokens=False, return_offsets_mapping=True)
    sid, rid = s["input_ids"], r["input_ids"]
    cut = leave_index(sid, rid)
    if cut is None:
        return None
    end, rest = cut, cut + 1  # context: the sample's tokens through `end`; target: the reference's from `rest`
    tags = set(tokenizer.get_added_vocab().values())
    if cut < len(rid) and (sid[cut] in tags or rid[cut] in tags):  # a tagged field skipped or added
        if sid[cut] in rid[cut + 1:]:  # the sample skipped reference text: the reference goes on after the tag
            rest = rid.index(sid[cut], cut + 1) + 1
        elif rid[cut] in sid[cut + 1:]:  # text the reference lacks: all context, up to where the sample comes back
            end, rest = sid.index(rid[cut], cut + 1) - 1, cut
        else:
            return None
    continuation = reference[r["offset_mapping"][rest][0]:] if rest < len(rid) else ""
    return OwnPrefix(sample[: s["offset_mapping"][end][1]], continuation, cut)


def own_prefix_examples(items: Iterable[tuple[Example, Sequence[str]]], tokenizer, fmt: str,
                        frame_for) -> list[Example]:
    """The builder: for each (teacher example, student samples of its state) pair, one copy of the example per
    sample that leaves its reference answer, with ``prefix`` = the sample through the token where it leaves
    and ``answer`` = the reference after it. The reference is the example's own target text in the frame
    ``frame_for(width, height)`` of its screenshot (the model's frame, as the SFT collator writes it)."""
    out = []
    for example, samples in items:
        shot = example.step.screenshot
        reference = target_text(example, fmt, frame_for(shot.width, shot.height))
        for sample in samples:
            split = own_prefix_split(sample, reference, tokenizer)
            if split is not None:
                out.append(replace(example, prefix=split.prefix, answer=split.continuation))
    return out


def most_matched_items(episode: Episode, step: Step, root: Path, samples: Sequence[str], cfg,
                       frame_for) -> list[tuple[Example, list[str]]]:
    """The samples of one step grouped by the reference OPD's Most-Matched-GT gives them (the valid action
    nearest to the parsed sample; the first when it does not parse), each group with its guided example:
    that one reference in the block, and as the target."""
    from guirl.datagen.error_recovery import to_screen
    from guirl.models.guidance import choose_guidance
    from guirl.models.prompts import PromptSpec

    size = (step.screenshot.width, step.screenshot.height)
    valid = step.valid_actions or ([step.action] if step.action is not None else [])
    reasoning = step_thought(episode, step, cfg.thought) if cfg.with_reasoning else None
    spec = PromptSpec(fmt=cfg.format)
    groups: dict[int, tuple[Example, list[str]]] = {}
    for sample in samples:
        pred = to_screen(sample, spec, frame_for, size)
        g = choose_guidance("most_matched", valid, cfg.format, random.Random(0), pred=pred, screen=Frame.screen(*size))
        if not g.actions:  # no valid action the format can write: no reference to continue with
            continue
        if g.index not in groups:
            ref = g.actions[0]
            target = target_action(step.model_copy(update={"action": ref, "valid_actions": [ref]}))
            groups[g.index] = (Example(episode, step, root, target, reasoning, [ref]), [])
        groups[g.index][1].append(sample)
    return list(groups.values())


def read_samples(paths: Sequence[str]) -> dict[str, list[str]]:
    """Student samples by ``"episode id/step index"`` from ``samples.jsonl`` files (several files add up)."""
    out: dict[str, list[str]] = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                out.setdefault(f"{row['episode']}/{row['step']}", []).extend(row["samples"])
    return out


def own_prefix_data(cfg, tokenizer, frame_for) -> list[Example]:
    """SFT's ``own_prefix_samples``: the own-prefix copies of the trainable steps of ``cfg.train_data`` that
    have samples (Most-Matched-GT references, :func:`most_matched_items`)."""
    samples = read_samples(cfg.own_prefix_samples)
    supported = get_format(cfg.format).supported_types
    items = []
    for path in cfg.train_data:
        root = Path(path).parent
        for episode in read_episodes(path):
            for step in episode.steps:
                texts = samples.get(f"{episode.id}/{step.index}")
                if texts and target_action(step, supported) is not None:
                    items += most_matched_items(episode, step, root, texts, cfg, frame_for)
    if not items:
        raise ValueError(f"own_prefix_samples {cfg.own_prefix_samples}: no sample belongs to a trainable step of "
                         f"{cfg.train_data}; sample the same episodes (`guirl datagen own-prefix --episodes ...`)")
    return own_prefix_examples(items, tokenizer, cfg.format, frame_for)


def sample_students(engine, spec, frame_for, states, samples: int = 4, temperature: float = 1.0,
                    top_p: float = 0.98, max_new_tokens: int = 64, seed: int = 0,
                    steps_per_call: int = 16) -> list[dict]:
    """``samples`` completions of the student (``engine``, prompted by ``spec`` in ``frame_for``) on each
    recorded state (:class:`guirl.trainers.rl_common.RecordedState`), as OPD draws them (default temperature
    1.0, top-p 0.98): one ``samples.jsonl`` row per state, ``{"episode", "step", "samples": [text, ...]}``."""
    from guirl.rollout.engine import SamplingParams
    from guirl.rollout.history import recorded_prompt

    rows = []
    for call, start in enumerate(range(0, len(states), steps_per_call)):
        chunk = states[start: start + steps_per_call]
        prompts = [recorded_prompt(spec, frame_for, s.episode, s.step, s.root)[0] for s in chunk]
        params = SamplingParams(n=samples, temperature=temperature, top_p=top_p, max_new_tokens=max_new_tokens,
                                seed=seed * 1_000_003 + call)
        for state, group in zip(chunk, engine.generate(prompts, params), strict=True):
            rows.append({"episode": state.episode.id, "step": state.step.index, "samples": [c.text for c in group]})
    return rows
