"""LiteGUI multi-solution exploration: sampled candidate actions for human verification (docs/methods.md section 1, ATG).

LiteGUI (appendix A.8.3) cuts long trajectories into windows of at most three
steps, re-infers the final step of each window N = 5 times at temperature 1.0,
de-duplicates the results, and has people mark every candidate True / False;
the verified positives join the step's ground truth A*_t. Here:

1. **windows**: every recorded step ``t`` ends one window, steps
   ``max(0, t - window + 1) .. t`` (:func:`windows`); the model sees the window's
   previous steps as history (at most ``window - 1``, and no more than its own
   ``PromptSpec.history_window``), the prompt built by
   :func:`guirl.rollout.history.recorded_prompt`;
2. **sampling**: N completions per step, many steps per ``engine.generate``
   call (batched, as :mod:`guirl.datagen.error_recovery` samples); each is parsed
   in the policy's frame (:func:`guirl.actions.parse_action`, never raises) and
   converted to screen pixels; unparsable samples are dropped and counted;
3. **de-duplication** (:func:`same_candidate`, :func:`deduplicate`): two actions
   are one candidate when they have the same type, the same value after
   normalisation (typed text: case-folded, whitespace collapsed; keys:
   :func:`guirl.actions.names.normalise_key`, order-free; scroll / swipe
   direction; terminate status) and, for actions with a point, the same target:
   when the step has an a11y tree and both points fall inside an element, the
   same smallest element containing the point; otherwise points within
   ``tolerance x max(W, H)`` pixels (default 0.04; a drag's end point too).
   Candidates are built greedily in order: the recorded action first, then each
   sample joins the first candidate it equals or starts a new one; ``count`` is
   how many of the N samples fell in a candidate;
4. **pre-labels**: on the built-in world the oracle's A*_t is the recorded
   ``valid_actions``, and ``oracle_label`` is
   :func:`guirl.matching.step.match_action` step success against it; elsewhere
   (or with ``oracle=False``) it is ``None``: the candidate awaits a person.
   The world's own judge (:func:`guirl.envs.sim.is_advancing`, effect-based:
   it also accepts actions that lead where a valid one leads) is counted in the
   manifest (``candidates_world_accepted``, ``..._not_matched``).

Output (``write_exploration``): ``OUT/manifest.json`` and ``OUT/candidates.jsonl``,
one record per explored step (format in docs/explore.md);
:func:`merge_verified` folds people's True labels back into the episodes.

Departures: the paper re-infers with a 32B teacher; any guirl model works here.
Windows overlap (one per step), so every step is explored, not only every third.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from guirl.actions import Action, Frame, ParseFailure
from guirl.actions.names import normalise_key
from guirl.data.io import DataError, read_episodes
from guirl.data.schema import A11yNode, Episode, Step
from guirl.datagen.error_recovery import Worlds, describe, to_screen
from guirl.envs.sim import is_advancing
from guirl.envs.sim.replay import ReplayError
from guirl.matching.step import match_action
from guirl.models.prompts import PromptSpec
from guirl.rollout.engine import GenerationEngine, SamplingParams
from guirl.rollout.history import recorded_prompt

WORLD_SOURCE = "guirl.sim"  # Episode.source of built-in world trajectories (gen-data)


@dataclass(frozen=True)
class ExploreConfig:
    """How steps are re-inferred and candidates merged (LiteGUI A.8.3 defaults)."""

    samples: int = 5
    """N: completions per step (LiteGUI: 5)."""
    temperature: float = 1.0
    """sampling temperature (LiteGUI: 1.0)."""
    top_p: float = 1.0
    """nucleus sampling mass (1 = off)."""
    max_new_tokens: int = 80
    """generation length per sample (one qwen_computer_use action with its Action: line is ~45 tokens)."""
    window: int = 3
    """steps per window, the re-inferred one included (LiteGUI: 3 turns, 3 screenshots)."""
    tolerance: float = 0.04
    """points closer than tolerance x max(W, H) pixels are one target (when the a11y tree does not decide)."""
    oracle: bool = True
    """pre-label candidates with the oracle's A*_t on built-in world trajectories (False: all await people)."""
    steps_per_call: int = 64
    """steps whose prompts share one engine.generate call."""
    max_steps: int | None = None
    """explore at most this many steps (None: all)."""
    seed: int = 0
    """sampling seed (per call: seed x 1_000_003 + call index)."""

    def __post_init__(self) -> None:
        if self.window < 1:
            raise ValueError(f"window must be >= 1 (the re-inferred step itself), got {self.window}")
        if not 0 <= self.tolerance < 1:
            raise ValueError(f"tolerance is a fraction of max(W, H) in [0, 1), got {self.tolerance}")
        if self.steps_per_call < 1 or (self.max_steps is not None and self.max_steps < 1):
            raise ValueError("steps_per_call and max_steps must be >= 1")
        SamplingParams(n=self.samples, temperature=self.temperature, top_p=self.top_p,
                       max_new_tokens=self.max_new_tokens)  # raises on a bad n / temperature / top_p / length


@dataclass
class Candidate:
    """One distinct action of a step: the recorded one or a cluster of samples."""

    action: Action
    source: str  # "recorded" | "sample"
    count: int = 0
    oracle_label: bool | None = None
    world_accepts: bool | None = None


@dataclass
class ExploredStep:
    """A re-inferred step and its distinct candidates (the recorded action first, when there is one)."""

    episode: Episode
    step: Step
    window: list[Step]
    candidates: list[Candidate] = field(default_factory=list)

    def window_history(self) -> list:
        """The recorded history items of the window's previous steps (at most ``window - 1``)."""
        previous = len(self.window) - 1
        return self.step.history[-previous:] if previous else []

    def record(self) -> dict:
        """The ``candidates.jsonl`` line (docs/explore.md)."""
        base = f"{self.episode.id}/{self.step.index}"
        return {"episode_id": self.episode.id, "step_index": self.step.index,
                "instruction": self.step.instruction or self.episode.instruction,
                "screenshot": self.step.screenshot.path,
                "screen_size": [self.step.screenshot.width, self.step.screenshot.height],
                "history": [h.description or (describe(h.action, None, None) if h.action else "")
                            for h in self.window_history()],
                "recorded_action": self.step.action.model_dump(mode="json") if self.step.action else None,
                "candidates": [{"id": f"{base}/{k}", "action": c.action.model_dump(mode="json"), "source": c.source,
                                "count": c.count, "oracle_label": c.oracle_label}
                               for k, c in enumerate(self.candidates)]}


def windows(episode: Episode, window: int = 3) -> list[list[Step]]:
    """One window per step: the step and up to ``window - 1`` steps before it, oldest first.

    >>> from guirl.data.schema import ImageRef
    >>> shot = ImageRef(path="s.png", width=4, height=4)
    >>> ep = Episode(id="e", instruction="q", steps=[Step(index=i, screenshot=shot) for i in range(4)])
    >>> [[s.index for s in w] for w in windows(ep, 3)]
    [[0], [0, 1], [0, 1, 2], [1, 2, 3]]
    """
    return [episode.steps[max(0, t - window + 1): t + 1] for t in range(len(episode.steps))]


def _screen_a11y(step: Step) -> list[A11yNode] | None:
    """The step's a11y nodes with boxes in screen pixels (None when it has none or they cannot be converted)."""
    if not step.a11y:
        return None
    if step.a11y_frame.kind == "screen":
        return step.a11y
    screen = Frame.screen(step.screenshot.width, step.screenshot.height)
    try:
        return [n.model_copy(update={"box": (*step.a11y_frame.convert_point(n.box[:2], screen),
                                             *step.a11y_frame.convert_point(n.box[2:], screen))})
                for n in step.a11y]
    except ValueError:
        return None


def target_element(point, a11y: list[A11yNode] | None) -> str | None:
    """Id of the smallest a11y element whose box contains ``point`` (screen pixels), or None.

    >>> nodes = [A11yNode(id="win", role="window", box=(0, 0, 100, 100)),
    ...          A11yNode(id="ok", role="button", box=(10, 10, 30, 20))]
    >>> target_element((15, 12), nodes), target_element((50, 50), nodes), target_element((150, 5), nodes)
    ('ok', 'win', None)
    """
    inside = [n for n in a11y or [] if n.box[0] <= point[0] <= n.box[2] and n.box[1] <= point[1] <= n.box[3]]
    if not inside:
        return None
    return min(inside, key=lambda n: (n.box[2] - n.box[0]) * (n.box[3] - n.box[1])).id


def _text_key(text: str | None) -> str | None:
    return re.sub(r"\s+", " ", text).strip().casefold() if text is not None else None


def _value_key(action: Action) -> tuple:
    keys = tuple(sorted({normalise_key(k) for k in action.keys})) if action.keys else None
    return (action.type, _text_key(action.text), keys, action.direction, action.status)


def _same_point(p, q, a11y: list[A11yNode] | None, tolerance_px: float) -> bool:
    if (p is None) != (q is None):
        return False
    if p is None:
        return True
    hit_p, hit_q = target_element(p, a11y), target_element(q, a11y)
    if hit_p is not None and hit_q is not None:
        return hit_p == hit_q
    return math.dist(p, q) <= tolerance_px


def same_candidate(a: Action, b: Action, screen_size: tuple[int, int], a11y: list[A11yNode] | None = None,
                   tolerance: float = 0.04) -> bool:
    """Whether two screen-pixel actions are one candidate (the rule in the module docstring).

    >>> from guirl.actions import Action, ActionType, Frame
    >>> px = Frame.screen(1000, 800)
    >>> a = Action(type=ActionType.CLICK, point=(100, 100), frame=px)
    >>> same_candidate(a, a.model_copy(update={"point": (130, 100)}), (1000, 800))   # 30 px <= 0.04 x 1000
    True
    >>> same_candidate(a, a.model_copy(update={"point": (150, 100)}), (1000, 800))   # 50 px > 40 px
    False
    """
    if _value_key(a) != _value_key(b):
        return False
    tolerance_px = tolerance * max(screen_size)
    return (_same_point(a.target_point(), b.target_point(), a11y, tolerance_px)
            and _same_point(a.end_point, b.end_point, None, tolerance_px))


def deduplicate(samples: list[Action | ParseFailure], screen_size: tuple[int, int], a11y: list[A11yNode] | None,
                recorded: Action | None = None, tolerance: float = 0.04) -> tuple[list[Candidate], int]:
    """(distinct candidates, unparsable samples dropped); ``recorded`` first, then samples in order of first sight."""
    candidates = [Candidate(recorded, "recorded")] if recorded is not None else []
    dropped = 0
    for sample in samples:
        if not sample:
            dropped += 1
            continue
        match = next((c for c in candidates if same_candidate(c.action, sample, screen_size, a11y, tolerance)), None)
        if match is None:
            match = Candidate(sample, "sample")
            candidates.append(match)
        match.count += 1
    return candidates, dropped


def _recorded_in_screen(step: Step) -> Action | None:
    if step.action is None:
        return None
    try:
        return step.action.to_frame(Frame.screen(step.screenshot.width, step.screenshot.height))
    except ValueError:
        return None  # a recorded action that cannot be placed on the screen is not offered as a candidate


def _label(explored: ExploredStep, worlds: Worlds | None, snapshots: dict, root: Path, counts: Counter) -> None:
    """Oracle pre-labels (match_action against A*_t) and the world judge's verdicts, in place."""
    step, episode = explored.step, explored.episode
    if worlds is None or episode.source != WORLD_SOURCE or not step.valid_actions:
        counts["steps_without_oracle"] += 1
        return
    size = (step.screenshot.width, step.screenshot.height)
    for c in explored.candidates:
        c.oracle_label = match_action(c.action, step.valid_actions, screen_size=size, a11y=step.a11y).success
    if episode.id not in snapshots:
        try:
            snapshots[episode.id] = worlds.snapshots(episode, root)
        except ReplayError:
            snapshots[episode.id] = None
    if snapshots[episode.id] is None:
        return
    env = worlds.env(episode)
    env.restore(snapshots[episode.id][episode.steps.index(step)])
    for c in explored.candidates:
        c.world_accepts = is_advancing(env, c.action)


def explore(engine: GenerationEngine, spec: PromptSpec, frame_for, episodes: list[Episode], root: str | Path,
            config: ExploreConfig | None = None) -> tuple[list[ExploredStep], dict[str, int]]:
    """Sample, parse, de-duplicate and pre-label every step (module docstring); returns (steps, counts).

    ``spec`` / ``frame_for`` say how the engine's policy is prompted and which
    frame it answers in (a :class:`~guirl.models.load.LoadedPolicy` has both);
    ``root`` is the directory the screenshot paths are relative to.
    """
    config = config or ExploreConfig()
    root = Path(root)
    counts: Counter = Counter()
    items = [ExploredStep(e, w[-1], w) for e in episodes for w in windows(e, config.window)][: config.max_steps]
    window_spec = replace(spec, history_window=min(spec.history_window, config.window - 1))
    worlds, snapshots = (Worlds() if config.oracle else None), {}
    for call, start in enumerate(range(0, len(items), config.steps_per_call)):
        chunk = items[start: start + config.steps_per_call]
        prompts = [recorded_prompt(window_spec, frame_for, it.episode, it.step, root)[0] for it in chunk]
        params = SamplingParams(n=config.samples, temperature=config.temperature, top_p=config.top_p,
                                max_new_tokens=config.max_new_tokens, seed=config.seed * 1_000_003 + call)
        for item, group in zip(chunk, engine.generate(prompts, params), strict=True):
            size = (item.step.screenshot.width, item.step.screenshot.height)
            preds = [to_screen(c.text, spec, frame_for, size) for c in group]
            recorded = _recorded_in_screen(item.step)
            item.candidates, dropped = deduplicate(preds, size, _screen_a11y(item.step), recorded, config.tolerance)
            _label(item, worlds, snapshots, root, counts)
            sampled = [c for c in item.candidates if c.source == "sample"]
            counts["steps_explored"] += 1
            counts["samples"] += len(preds)
            counts["samples_unparsed"] += dropped
            counts["samples_in_recorded"] += item.candidates[0].count if recorded is not None else 0
            counts["candidates_sampled"] += len(sampled)
            counts["candidates_oracle_true"] += sum(c.oracle_label is True for c in sampled)
            counts["candidates_oracle_false"] += sum(c.oracle_label is False for c in sampled)
            counts["candidates_unlabelled"] += sum(c.oracle_label is None for c in sampled)
            counts["candidates_world_accepted"] += sum(c.world_accepts is True for c in sampled)
            counts["candidates_world_accepted_not_matched"] += sum(
                c.world_accepts is True and c.oracle_label is False for c in sampled)
    counts["steps"] = sum(len(e.steps) for e in episodes)
    return items, dict(sorted(counts.items()))


def write_exploration(out_dir: str | Path, episodes_path: str | Path, model: str, explored: list[ExploredStep],
                      counts: dict[str, int], config: ExploreConfig) -> Path:
    """Write ``out_dir/manifest.json`` and ``out_dir/candidates.jsonl``; returns the candidates path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    manifest = {"episodes": str(Path(episodes_path).resolve()), "model": str(model), "samples": config.samples,
                "temperature": config.temperature, "window": config.window,
                "dedup": {"rule": "same type and normalised value; pointed: same smallest a11y element containing "
                                  "both points, else distance <= tolerance x max(W, H)",
                          "tolerance": config.tolerance, "text": "casefold, whitespace collapsed",
                          "keys": "normalise_key, order-free", "unparsable": "dropped"},
                "counts": counts, "config": asdict(config)}
    path = out / "candidates.jsonl"
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(json.dumps(e.record()) + "\n" for e in explored))
    tmp.replace(path)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return path


def merge_verified(candidates_path: str | Path, labels: dict[str, bool]) -> list[Episode]:
    """The input episodes (``manifest.json``'s ``episodes``) with each explored step's ``valid_actions`` =
    its recorded A*_t (or the recorded action when it has none) plus every candidate labelled True that
    none of them already matches (:func:`guirl.matching.step.match_action`)."""
    candidates_path = Path(candidates_path)
    manifest_path = candidates_path.parent / "manifest.json"
    if not manifest_path.is_file():
        raise DataError(f"{manifest_path}: missing; merge_verified needs the manifest.json written with "
                        f"{candidates_path.name} by `guirl datagen explore`")
    episodes_path = Path(json.loads(manifest_path.read_text())["episodes"])
    if not episodes_path.is_file():
        raise DataError(f"{manifest_path}: episodes file {episodes_path} does not exist; restore it or edit the "
                        "manifest's 'episodes' to where it is now")
    episodes = read_episodes(episodes_path, check_images=False)
    steps = {(e.id, s.index): s for e in episodes for s in e.steps}
    unknown = dict(labels)
    for line_no, line in enumerate(candidates_path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        record = json.loads(line)
        key = (record["episode_id"], record["step_index"])
        if key not in steps:
            raise DataError(f"{candidates_path}:{line_no}: step {key[0]}/{key[1]} is not in {episodes_path}")
        step = steps[key]
        size = (step.screenshot.width, step.screenshot.height)
        valid = list(step.valid_actions) or ([step.action] if step.action is not None else [])
        for cand in record["candidates"]:
            if not unknown.pop(cand["id"], False):
                continue
            action = Action.model_validate(cand["action"])
            if not valid or not match_action(action, valid, screen_size=size, a11y=step.a11y).success:
                valid.append(action)
        step.valid_actions = valid
    if unknown:
        raise ValueError(f"labels name candidates not in {candidates_path}: {sorted(unknown)[:5]}; "
                         "label only ids written there")
    return episodes
