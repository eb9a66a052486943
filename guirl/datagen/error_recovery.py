"""InfiGUI-R1 error-recovery scenarios from a policy's own mistakes in the built-in world (docs/methods.md section 3).

For every recorded step ``s`` of ``gen-data`` trajectories:

1. sample ``N`` actions from the policy at a high temperature, all steps of a
   chunk in one ``engine.generate`` call (prompts built by
   :func:`guirl.rollout.history.recorded_prompt`, as evaluation and GRPO build them);
2. score each against ``A*_t``: :func:`guirl.matching.step.match_action` step
   success (``scorer="match"``, what the step-success metric and the rewards
   count) or the world's own judge (``scorer="oracle"``: the action leads
   where a valid action leads, :func:`guirl.envs.sim.is_advancing`);
3. ``s`` is *error-prone* when ``0 < correct / N < 1``;
4. there, pick one wrong sample that the world can execute (parsed, not
   ``terminate`` / ``answer``, and not advancing by its effect), restore the
   world at ``s`` (:mod:`guirl.envs.sim.replay`) and step it: the real next
   screen ``I'``;
5. write an **error-escape** sample: history ``H_{s-1} + a_err``, screenshot
   ``I'``, target = the oracle's valid actions on ``I'`` (``valid_actions``;
   ``action`` = one of them that returns to ``I_s`` when there is one),
   label ``ERROR_ESCAPE``;
6. execute that escape; when the world is back (same state, same pixels as
   ``I_s``) write a **back-on-track** sample: history ``H_{s-1} + a_err +
   a_escape``, screenshot ``I_s``, target ``A*_t``, label ``BACK_ON_TRACK``;
   otherwise skip it and count: ``skipped_back/no_undo`` when no valid action
   on ``I'`` returns to ``I_s`` (the oracle's way on bypasses it, e.g. after a
   mistake that only selected something), ``skipped_back/not_back`` when the
   executed escape did not restore the state and pixels (a sanity check).

Wrong actions with no visible effect (a click on empty space: ``I' == I_s``
pixel for pixel) follow ``noop``: ``"skip"`` (default) never picks them, so a
step whose only executable mistakes are no-ops is skipped
(``skipped/only_noop_wrong``); ``"keep"`` picks them like any other and
writes their escape sample (screen unchanged, target = the valid actions
there, i.e. ``A*_t``) but no back-on-track sample, since there is nothing to
get back from (``skipped_back/noop``).

Departures from InfiGUI-R1: the escape target is the set of every valid
action on ``I'`` (the oracle's), not one annotated action; the wrong action's
history description says what it did in the world ("click the 'Trash'
icon"), not what the policy claimed. The generated samples are single-step
episodes (guirl Episode JSONL + PNGs), like ``gen-data``'s ``recovery.jsonl``
(which takes oracle-chosen mistakes instead of sampled ones).
"""

from __future__ import annotations

import json
import random
import shutil
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from PIL import Image

from guirl.actions import Action, ActionType, Frame, ParseFailure, parse_action
from guirl.data.io import write_episodes
from guirl.data.schema import A11yNode, Episode, HistoryItem, ImageRef, Step, StepLabel
from guirl.envs.sim import is_advancing
from guirl.envs.sim.engine import state_key
from guirl.envs.sim.env import SimEnv
from guirl.envs.sim.render import render
from guirl.envs.sim.replay import ReplayError, check_replayable, env_for_episode, replay_snapshots, same_image
from guirl.matching.step import match_action
from guirl.models.prompts import PromptSpec
from guirl.rollout.engine import GenerationEngine, SamplingParams
from guirl.rollout.history import recorded_prompt

Scorer = Literal["match", "oracle"]
NoopRule = Literal["skip", "keep"]
SCORERS, NOOP_RULES = ("match", "oracle"), ("skip", "keep")
SOURCE = "guirl.datagen.error_recovery"
_VERBS = {ActionType.CLICK: "click", ActionType.DOUBLE_CLICK: "double-click", ActionType.TRIPLE_CLICK: "triple-click",
          ActionType.RIGHT_CLICK: "right-click", ActionType.LONG_PRESS: "long-press", ActionType.SELECT: "select in"}


@dataclass(frozen=True)
class ErrorRecoveryConfig:
    """How error-prone steps are found and which samples are written."""

    samples: int = 8
    """N: actions sampled per step (InfiGUI-R1 samples several; 8 gives success rates in steps of 1/8)."""
    temperature: float = 1.0
    """sampling temperature: high enough for mistakes at steps the greedy policy solves (see docs/error_recovery.md)."""
    top_p: float = 1.0
    """nucleus sampling mass (1 = off)."""
    max_new_tokens: int = 80
    """generation length (as held-out evaluation); one qwen_computer_use action with its Action: line is ~45 tokens."""
    scorer: Scorer = "match"
    """'match': step success of match_action against A*_t; 'oracle': the world's judge (effect-equivalent counts)."""
    noop: NoopRule = "skip"
    """wrong actions with no visible effect: 'skip' never picks them; 'keep' writes only their escape sample."""
    steps_per_call: int = 64
    """steps whose prompts go into one engine.generate call (bounds the memory of the encoded prompts)."""
    max_steps: int | None = None
    """stop after sampling this many steps (None: every eligible step)."""
    seed: int = 0
    """seed of sampling (per call) and of the choice of wrong / escape action (per step)."""

    def __post_init__(self) -> None:
        if self.samples < 2:
            raise ValueError(f"samples must be >= 2 (a success rate strictly between 0 and 1 needs two), got {self.samples}")
        if self.scorer not in SCORERS:
            raise ValueError(f"unknown scorer {self.scorer!r}; choose one of {SCORERS}")
        if self.noop not in NOOP_RULES:
            raise ValueError(f"unknown noop rule {self.noop!r}; choose one of {NOOP_RULES}")
        if self.steps_per_call < 1 or (self.max_steps is not None and self.max_steps < 1):
            raise ValueError("steps_per_call and max_steps must be >= 1")
        SamplingParams(n=self.samples, temperature=self.temperature, top_p=self.top_p,
                       max_new_tokens=self.max_new_tokens)  # raises on a bad temperature / top_p / length


@dataclass
class _Item:
    """One eligible recorded step and the snapshot that restores the world there."""

    episode: Episode
    step: Step
    snapshot: dict


class Worlds:
    """One SimEnv per (domain, preset, task), reset to whichever episode is being restored."""

    def __init__(self):
        self.envs: dict[tuple, SimEnv] = {}
        self.episode_of: dict[tuple, str] = {}

    def env(self, episode: Episode) -> SimEnv:
        check_replayable(episode)
        key = (episode.extra.get("domain"), episode.extra.get("preset"), episode.task)
        if key not in self.envs:
            self.envs[key] = env_for_episode(episode)
        env = self.envs[key]
        if self.episode_of.get(key) != episode.id:
            env.reset(seed=episode.extra["seed"], options={"task": episode.task})
            self.episode_of[key] = episode.id
        return env

    def snapshots(self, episode: Episode, root: Path) -> list[dict]:
        env = self.env(episode)
        return replay_snapshots(env, episode, root)

    def restore(self, item: _Item):
        env = self.env(item.episode)
        return env, env.restore(item.snapshot)


def describe(action: Action, a11y: list[A11yNode] | None, hit: str | None) -> str:
    """What ``action`` did, named by the widget it hit (the oracle's wording: "click the 'Trash' icon").

    >>> describe(Action(type=ActionType.KEY, keys=("ctrl", "s")), None, None)
    'press ctrl+s'
    """
    node = next((n for n in a11y or [] if n.id == hit), None) if hit else None
    target = (f"the '{node.text}' {node.role}" if node.text else f"the {node.role}") if node else None
    kind = action.type
    if kind in _VERBS:
        prefix = f"select {action.text!r} in" if kind is ActionType.SELECT else _VERBS[kind]
        point = action.target_point()
        where = target or (f"({point[0]:.0f}, {point[1]:.0f})" if point else "nothing")
        return f"{prefix} {where}"
    if kind in (ActionType.KEY, ActionType.BACK, ActionType.HOME, ActionType.ENTER):
        return "press " + "+".join(action.keys or (kind.value,))
    if kind is ActionType.TYPE:
        return f"type {action.text!r}"
    if kind in (ActionType.SCROLL, ActionType.SWIPE):
        return f"{kind.value} {action.direction or ''}".strip()
    if kind is ActionType.OPEN_APP:
        return f"open the {action.text} app"
    return kind.value


def eligible_items(episodes: list[Episode], root: Path, worlds: Worlds, counts: Counter) -> list[_Item]:
    """Steps with A*_t, a recorded action and a CORRECT label, in episodes that replay in the world."""
    items = []
    for episode in episodes:
        counts["steps"] += len(episode.steps)
        try:
            snapshots = worlds.snapshots(episode, root)
        except ReplayError:
            counts["episodes_not_replayable"] += 1
            counts["steps_not_eligible"] += len(episode.steps)
            continue
        for step, snapshot in zip(episode.steps, snapshots, strict=True):
            if step.valid_actions and step.action is not None and step.label is StepLabel.CORRECT:
                items.append(_Item(episode, step, snapshot))
            else:
                counts["steps_not_eligible"] += 1
    return items


def to_screen(text: str, spec: PromptSpec, frame_for, size: tuple[int, int]) -> Action | ParseFailure:
    action = parse_action(text, spec.fmt, frame_for(*size))
    if not action:
        return action
    try:
        return action.to_frame(Frame.screen(*size))
    except ValueError as err:
        return ParseFailure(reason=f"cannot convert to screen pixels: {err}", raw=text)


def _correct(pred: Action | ParseFailure, item: _Item, env: SimEnv, scorer: Scorer) -> bool:
    if not pred:
        return False
    if scorer == "oracle":
        return is_advancing(env, pred)
    size = (item.step.screenshot.width, item.step.screenshot.height)
    return match_action(pred, item.step.valid_actions, screen_size=size, a11y=item.step.a11y).success


class _Images:
    """Copies a recorded step's screenshots into ``out`` (same relative paths) and saves new ones."""

    def __init__(self, root: Path, out: Path):
        self.root, self.out = root, out

    def copy(self, ref: ImageRef | None) -> None:
        if ref is not None and not (self.out / ref.path).exists():
            (self.out / ref.path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.root / ref.path, self.out / ref.path)

    def save(self, image: Image.Image, name: str) -> ImageRef:
        rel = f"recovery_images/{name}.png"
        (self.out / rel).parent.mkdir(parents=True, exist_ok=True)
        image.save(self.out / rel, compress_level=1)
        return ImageRef(path=rel, width=image.width, height=image.height)


def _executable_wrong(preds, texts, correct, env: SimEnv, original: Image.Image,
                      counts: Counter) -> list[tuple[Action, str, bool]]:
    """(action, raw text, visible effect) of the wrong samples the world can execute."""
    out = []
    for pred, text, ok in zip(preds, texts, correct, strict=True):
        if ok:
            continue
        counts["wrong_samples"] += 1
        if not pred:
            counts["wrong_samples_unparsed"] += 1
            continue
        if pred.type in (ActionType.TERMINATE, ActionType.ANSWER):
            counts["wrong_samples_ending_episode"] += 1  # ends the episode: nothing to escape from
            continue
        if is_advancing(env, pred):
            counts["wrong_samples_advancing_in_world"] += 1  # match_action misses it, but it does move on
            continue
        after, _ = env.world.simulate(env.state, pred)
        visible = state_key(after) != state_key(env.state) and not same_image(
            render(env.world.screen(after), env.preset), original)
        counts["wrong_samples_noop"] += not visible
        out.append((pred, text, visible))
    return out


def recovery_samples(item: _Item, preds, texts, correct: list[bool], worlds: Worlds, images: _Images,
                     config: ErrorRecoveryConfig, counts: Counter) -> list[Episode]:
    """The error-escape (and back-on-track) episodes of one error-prone step; counts why not."""
    episode, step = item.episode, item.step
    env, _ = worlds.restore(item)
    with Image.open(images.root / step.screenshot.path) as recorded:
        original = recorded.convert("RGB")
    executable = _executable_wrong(preds, texts, correct, env, original, counts)
    options = [o for o in executable if o[2] or config.noop == "keep"]
    if not options:
        counts["skipped/only_noop_wrong" if executable else "skipped/no_executable_wrong"] += 1
        return []
    rng = random.Random(f"error-recovery:{config.seed}:{episode.id}:{step.index}")
    wrong, wrong_text, visible = options[rng.randrange(len(options))]
    here = state_key(env.state)
    after_obs, _, _, _, info = env.step(wrong)
    escapes = list(after_obs.valid_actions or [])
    if not escapes:
        counts["skipped/no_escape_action"] += 1
        return []
    returning = [a for a in escapes if state_key(env.world.simulate(env.state, a)[0]) == here]
    pool = returning or escapes  # prefer an escape that undoes the mistake; else the oracle's shortest way on
    escape = pool[rng.randrange(len(pool))]
    base = f"{episode.id}-s{step.index}"
    for ref in [step.screenshot] + [h.screenshot for h in step.history]:
        images.copy(ref)
    wrong_ref = images.save(after_obs.screenshot, f"{base}-wrong")
    wrong = wrong.model_copy(update={"description": describe(wrong, step.a11y, info.get("hit"))})
    wrong_item = HistoryItem(action=wrong, description=wrong.description, screenshot=step.screenshot)
    common = {"instruction": episode.instruction, "source": SOURCE, "platform": episode.platform,
              "task": episode.task, "extra": {"source_episode": episode.id, "source_step": step.index,
                                              "source_seed": episode.extra["seed"], "preset": episode.extra["preset"],
                                              "domain": episode.extra["domain"], "correct_samples": sum(correct),
                                              "samples": len(correct)}}
    escape_step = Step(index=0, screenshot=wrong_ref, history=step.history + [wrong_item], valid_actions=escapes,
                       action=escape, a11y=after_obs.a11y, sub_goal=after_obs.sub_goal, subtasks=after_obs.subtasks,
                       label=StepLabel.ERROR_ESCAPE,
                       extra={"wrong_output": wrong_text, "wrong_effect": info.get("effect"), "visible": visible})
    out = [Episode(id=f"{base}-escape", steps=[escape_step], **common)]
    counts["error_escape_written"] += 1
    if not visible:
        counts["skipped_back/noop"] += 1
        return out
    if not returning:  # the oracle's way on from I' does not pass I_s again (e.g. the mistake only selected)
        counts["skipped_back/no_undo"] += 1
        return out
    back_obs, *_ = env.step(escape)
    if state_key(env.state) != here or not same_image(back_obs.screenshot, original):
        counts["skipped_back/not_back"] += 1
        return out
    escape_item = HistoryItem(action=escape, description=escape.description or describe(escape, after_obs.a11y, None),
                              screenshot=wrong_ref)
    back_step = Step(index=0, screenshot=step.screenshot, history=step.history + [wrong_item, escape_item],
                     valid_actions=step.valid_actions, action=step.action, a11y=step.a11y, sub_goal=step.sub_goal,
                     subtasks=step.subtasks, label=StepLabel.BACK_ON_TRACK)
    out.append(Episode(id=f"{base}-back", steps=[back_step], **common))
    counts["back_on_track_written"] += 1
    return out


def build_error_recovery_data(engine: GenerationEngine, spec: PromptSpec, frame_for, episodes: list[Episode],
                              root: str | Path, out_dir: str | Path,
                              config: ErrorRecoveryConfig | None = None) -> dict[str, int]:
    """Sample, score, and write ``out_dir/episodes.jsonl`` (+ PNGs); returns the counts (module docstring).

    ``spec`` and ``frame_for`` say how the engine's policy is prompted and
    which coordinate frame it answers in (:class:`~guirl.models.load.LoadedPolicy`
    has both); ``root`` is the directory the episodes' screenshot paths are
    relative to.
    """
    config = config or ErrorRecoveryConfig()
    root, out = Path(root), Path(out_dir)
    counts: Counter = Counter()
    worlds, images = Worlds(), _Images(root, out)
    items = eligible_items(episodes, root, worlds, counts)[: config.max_steps]
    histogram: Counter = Counter()
    written: list[Episode] = []
    for call, start in enumerate(range(0, len(items), config.steps_per_call)):
        chunk = items[start: start + config.steps_per_call]
        prompts = [recorded_prompt(spec, frame_for, it.episode, it.step, root)[0] for it in chunk]
        params = SamplingParams(n=config.samples, temperature=config.temperature, top_p=config.top_p,
                                max_new_tokens=config.max_new_tokens, seed=config.seed * 1_000_003 + call)
        outputs = engine.generate(prompts, params)
        for item, group in zip(chunk, outputs, strict=True):
            size = (item.step.screenshot.width, item.step.screenshot.height)
            texts = [c.text for c in group]
            preds = [to_screen(t, spec, frame_for, size) for t in texts]
            env, _ = worlds.restore(item)
            correct = [_correct(p, item, env, config.scorer) for p in preds]
            counts["steps_sampled"] += 1
            counts["samples"] += len(preds)
            counts["samples_unparsed"] += sum(not p for p in preds)
            histogram[sum(correct)] += 1
            if all(correct):
                counts["steps_all_correct"] += 1
            elif not any(correct):
                counts["steps_all_wrong"] += 1
            else:
                counts["steps_error_prone"] += 1
                written += recovery_samples(item, preds, texts, correct, worlds, images, config, counts)
    out.mkdir(parents=True, exist_ok=True)
    counts["episodes_written"] = write_episodes(out / "episodes.jsonl", written)
    result = {f"error_recovery/{k}": v for k, v in sorted(counts.items())}
    manifest = {"generator": SOURCE, "config": asdict(config), "counts": result,
                "correct_samples_histogram": {str(k): histogram[k] for k in range(config.samples + 1)}}
    (out / "error_recovery_manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return result
