"""ReplayEnv: semi-online RL over recorded trajectories (UI-S1 / CCPO, docs/methods.md section 5).

The environment walks a recorded episode screen by screen. At every step
the policy's action is compared with the recorded ground truth by a
*matcher* (``(action, step) -> bool``); the episode then moves on to the
next **recorded** screen whatever the policy did, so a policy is trained on
its own history (semi-online) without a live device::

    env = make_env("replay", data="data/episodes.jsonl")            # guirl JSONL
    env = make_env("replay", data="ac/episodes.jsonl", data_format="androidcontrol_low")
    obs = env.reset(seed=0)                                         # or options={"episode": id or index}
    obs, reward, terminated, truncated, info = env.step(action)

Patching rule (``patch_threshold``, default 2):

- match -> reward 1.0, next recorded screen; the next step's history shows
  the policy's own action (``info["history_action"]``);
- mismatch (a ParseFailure, None or anything not an Action counts as one)
  while fewer than ``patch_threshold`` patches were used -> reward 0.0, the
  expert's action and thought (``Step.action`` else the first of A*_t;
  ``Step.reasoning``) are *patched* into the history
  (``info["history_action"]`` / ``info["history_thought"]``) and the episode
  still moves to the next recorded screen;
- the mismatch after that, i.e. the ``(patch_threshold + 1)``-th, ends the
  episode (terminated, the screen does not change); ``patch_threshold=0``
  ends at the first mismatch, ``-1`` patches without limit;
- after the last recorded step the episode ends (terminated);
  ``info["success"]`` is True iff every step matched.

Source: the UI-S1 authors' semi-online rollout, X-PLUG/MobileAgent
``UI-S1/verl/utils/dataset/universal_multiround.py``
(``MultiRoundGenerator.apply_response``): on ``not extract_match``, patch
``if self.patch_threshold > self.error_num[ptr] or self.patch_threshold ==
-1`` (then ``error_num += 1``), else ``finished = True``; so with threshold 2
the 1st and 2nd mismatches are patched and the 3rd ends the trajectory. The
patch is the ground-truth action with the step's recorded ``thought`` (else
``motivation``, else "") formatted as the assistant turn of the next round
(``x/data/agent/json.py``, ``JsonFormat.gen_next_round``). The patch only
changes the *history*: the mismatched step itself, the policy's own wrong
response with its low reward, stays in the training batch
(``verl/trainer/ppo/dapo_ray_trainer.py`` appends every step batch before
``apply_response``), and so does the terminating mismatch. The
``universal_multiround_sf.py`` variant patches the expert action with the
thought of a second ("self-forcing") response instead of the recorded one.
``scripts/train_example.sh`` sets ``PATCH_THRESHOLD=2``; the trainer config
default (``verl/trainer/config/ppo_trainer.yaml``) is 0.

Default matcher (:class:`UIS1Matcher`): :func:`guirl.matching.step.match_action`
``success`` over A*_t with ``rule="uis1"`` (box enlarged 1.2x, or normalised
distance <= 0.04), ``value_rule="substring"`` (``check_text``: lower-cased,
either contains the other) and ``direction_rule="exact"``. These follow the
authors' *training* reward, ``check_response_match`` in
``verl/utils/reward_score/gui_utils/utils.py`` (via ``gui_traj.py``,
``extract_match``), which compares the swipe direction; their AndroidControl
*evaluation* (``evaluation/qwenvl_utils.py``) accepts any swipe
(``direction_rule="any"``). Departures: guirl checks a terminate's status
when the ground truth records one, and a key combo by its keys (UI-S1 wants
a ``type`` answer for a ``key`` ground truth). Replace the matcher for other
rules (``matcher=`` any callable ``(action, step) -> bool``).

Rewards here are the binary match (1.0 / 0.0); UI-S1's graded step reward
(format 0.1 + action 0.9) is the ``uis1_step`` reward
(:mod:`guirl.rewards.uis1`), computed from the recorded step by a trainer.

Data is checked once, at construction: an episode without steps, a step
without ground truth (neither ``valid_actions`` nor ``action``), a step
recorded as wrong (``label`` other than ``correct``), an action whose frame
cannot be converted to the screen, or a missing screenshot raises
``ValueError`` naming the episode and step. Model garbage never raises.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from PIL import Image

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType, ParseFailure
from guirl.data.schema import Episode, Step, StepLabel
from guirl.envs.base import Observation, StepResult, register_env
from guirl.matching.rules import MatchRule
from guirl.matching.step import in_screen, match_action

#: ``(policy action, recorded step) -> matched?``; the action may be a ParseFailure or None.
Matcher = Callable[[Action | ParseFailure | None, Step], bool]
InstructionLevel = Literal["auto", "episode", "step"]


def ground_truth(step: Step) -> list[Action]:
    """A*_t of a recorded step: its ``valid_actions``, else ``[its action]`` (empty if neither)."""
    if step.valid_actions:
        return list(step.valid_actions)
    return [step.action] if step.action is not None else []


def expert_action(step: Step) -> Action:
    """The action patched in on a mismatch: the recorded action (the next screen follows from it),
    else the first valid action."""
    return step.action if step.action is not None else ground_truth(step)[0]


class UIS1Matcher:
    """UI-S1's step match: :func:`~guirl.matching.step.match_action` ``success`` over A*_t.

    Defaults follow the authors' training reward (module docstring); every option
    is :func:`match_action`'s.
    """

    def __init__(self, rule: MatchRule | str = "uis1", value_rule: str = "substring",
                 direction_rule: str = "exact", merge_scroll_swipe: bool = True):
        self.options = {"rule": rule, "value_rule": value_rule, "direction_rule": direction_rule,
                        "merge_scroll_swipe": merge_scroll_swipe}
        match_action(None, [Action(type=ActionType.WAIT)], screen_size=(1, 1), **self.options)  # unknown names raise now

    def __call__(self, action: Action | ParseFailure | None, step: Step) -> bool:
        size = (step.screenshot.width, step.screenshot.height)
        return match_action(action, ground_truth(step), screen_size=size, a11y=step.a11y, **self.options).success

    def __repr__(self) -> str:
        return f"UIS1Matcher({', '.join(f'{k}={v!r}' for k, v in self.options.items())})"


def _load_matcher(spec: str) -> Matcher:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"matcher {spec!r} must be a callable or look like 'package.module:callable'")
    try:
        target = getattr(importlib.import_module(module_name), attr)
    except (ModuleNotFoundError, AttributeError) as err:
        raise ValueError(f"matcher {spec!r} cannot be imported: {err}") from None
    if isinstance(target, type):
        target = target()
    if not callable(target):
        raise ValueError(f"matcher {spec!r} is a {type(target).__name__}, not a callable")
    return target


class ReplayEnv:
    """Semi-online environment over recorded episodes (see module docstring).

    Args:
        episodes: the recorded trajectories (guirl schema).
        image_root: directory the screenshots' paths are relative to.
        matcher: ``(action, step) -> bool`` or ``"module:callable"``; default :class:`UIS1Matcher`
            built from ``rule`` / ``value_rule`` / ``direction_rule`` / ``merge_scroll_swipe``.
        patch_threshold: how many mismatches are patched before the next one ends the episode
            (UI-S1: 2; 0 ends at the first mismatch; -1 never ends).
        instruction: ``auto`` (the step's instruction where recorded, i.e. low-level data, else the
            episode's), ``episode`` (always the goal) or ``step`` (every step must record one).
        check_images: check at construction that every screenshot file exists.
    """

    def __init__(self, episodes: list[Episode], image_root: str | Path, matcher: Matcher | str | None = None,
                 patch_threshold: int = 2, instruction: InstructionLevel = "auto", *,
                 rule: MatchRule | str = "uis1", value_rule: str = "substring", direction_rule: str = "exact",
                 merge_scroll_swipe: bool = True, check_images: bool = True):
        if isinstance(patch_threshold, bool) or not isinstance(patch_threshold, int) or patch_threshold < -1:
            raise ValueError(f"patch_threshold must be an int >= 0, or -1 for no limit; got {patch_threshold!r}")
        if instruction not in ("auto", "episode", "step"):
            raise ValueError(f"instruction must be 'auto', 'episode' or 'step', got {instruction!r}")
        if not episodes:
            raise ValueError("ReplayEnv needs at least one recorded episode; the data holds none")
        if isinstance(matcher, str):
            matcher = _load_matcher(matcher)
        if matcher is not None and not callable(matcher):
            raise ValueError(f"matcher must be a callable (action, step) -> bool, got {type(matcher).__name__}")
        self.matcher: Matcher = matcher if matcher is not None else UIS1Matcher(
            rule=rule, value_rule=value_rule, direction_rule=direction_rule, merge_scroll_swipe=merge_scroll_swipe)
        self.episodes = list(episodes)
        self.image_root = Path(image_root)
        self.patch_threshold, self.instruction_level = patch_threshold, instruction
        self._by_id: dict[str, int] = {}
        for i, episode in enumerate(self.episodes):
            if episode.id in self._by_id:
                raise ValueError(f"episode id {episode.id!r} occurs twice (episodes {self._by_id[episode.id]} "
                                 f"and {i}); ids must be unique to pick episodes by id")
            self._by_id[episode.id] = i
            self._check_episode(episode, check_images)
        self.episode: Episode | None = None

    # -- construction checks ------------------------------------------------------------------------
    def _check_episode(self, episode: Episode, check_images: bool) -> None:
        if not episode.steps:
            raise ValueError(f"episode {episode.id!r} has no steps; a replay needs at least one recorded step")
        for pos, step in enumerate(episode.steps):
            where = f"episode {episode.id!r}, step {step.index} (position {pos})"
            targets = ground_truth(step)
            if not targets:
                raise ValueError(f"{where} has no ground truth: neither valid_actions nor action is recorded")
            if step.label is not StepLabel.CORRECT:
                raise ValueError(f"{where} is labelled {step.label.value!r}: its recorded action is not a correct "
                                 "one to replay; keep only 'correct' steps (error-recovery data is for SFT)")
            if self.instruction_level == "step" and not step.instruction:
                raise ValueError(f"{where} has no step instruction, but instruction='step' was asked")
            size = (step.screenshot.width, step.screenshot.height)
            for action in [*targets, expert_action(step)]:
                try:
                    in_screen(action, *size)
                except ValueError as err:
                    raise ValueError(f"{where}: action {action.type.value} cannot be put in screen pixels: "
                                     f"{err}") from None
            if check_images and not (self.image_root / step.screenshot.path).is_file():
                raise ValueError(f"{where}: screenshot {step.screenshot.path!r} does not exist under "
                                 f"{self.image_root}; pass the image directory (image_dir)")

    # -- episode -------------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Observation:
        """Start an episode: ``options["episode"]`` (id or index), else a seeded choice.

        Other option keys (e.g. the runner's ``task``) are ignored."""
        options = options or {}
        pick = options.get("episode")
        if pick is None:
            rng = random.Random(f"replay:{seed}") if seed is not None else random.SystemRandom()
            index = rng.randrange(len(self.episodes))
        elif isinstance(pick, str):
            if pick not in self._by_id:
                known = list(self._by_id)[:5]
                raise ValueError(f"no episode with id {pick!r}; {len(self._by_id)} episodes, e.g. {known}")
            index = self._by_id[pick]
        elif isinstance(pick, int) and not isinstance(pick, bool):
            if not -len(self.episodes) <= pick < len(self.episodes):
                raise ValueError(f"episode index {pick} is out of range; there are {len(self.episodes)} episodes")
            index = pick % len(self.episodes)
        else:
            raise ValueError(f"options['episode'] must be an episode id (str) or index (int), got {pick!r}")
        self.seed, self.episode_index = seed, index
        self.episode = self.episodes[index]
        self.position, self.patches_used = 0, 0
        self.first_mismatch: int | None = None
        self.matched_steps, self.over = 0, False
        return self._observe({})

    def step(self, action: Action | ParseFailure | None) -> StepResult:
        if self.episode is None:
            raise RuntimeError("call reset() before step()")
        if self.over:
            info = {"effect": "episode_over", "reason": "the episode has ended; call reset()", "success": False,
                    "matched": False, "patched": False}
            obs = self._observe(info)
            return obs, 0.0, True, False, obs.info
        step = self.episode.steps[self.position]
        matched, match_error = self._judge(action, step)
        expert, thought = self._screen(expert_action(step), step), step.reasoning
        info: dict[str, Any] = {
            "judged_step": step.index, "judged_position": self.position, "matched": matched, "patched": False,
            "valid_actions": [self._screen(a, step) for a in ground_truth(step)],
            "expert_action": expert, "expert_thought": thought,
        }
        if match_error is not None:
            info["match_error"] = match_error
        if matched:
            self.matched_steps += 1
            info.update(effect="matched", history_action=action, history_thought=None)
        else:
            if self.first_mismatch is None:
                self.first_mismatch = step.index
            if self.patch_threshold == -1 or self.patches_used < self.patch_threshold:
                self.patches_used += 1
                info.update(effect="patched", patched=True, history_action=expert, history_thought=thought)
            else:  # the (threshold + 1)-th mismatch: the episode ends on this screen
                self.over = True
                info.update(effect="ended", history_action=action if isinstance(action, Action) else None,
                            history_thought=None, success=False,
                            reason=f"mismatch at step {step.index} after {self.patches_used} patches "
                                   f"(patch_threshold {self.patch_threshold})")
                obs = self._observe(info)
                return obs, 0.0, True, False, obs.info
        self.position += 1
        if self.position >= len(self.episode.steps):
            self.over = True
            success = self.matched_steps == len(self.episode.steps)
            info["success"] = success
            if not success:
                info["reason"] = f"{self.patches_used} of {len(self.episode.steps)} steps needed an expert patch"
        else:
            info["success"] = False
        obs = self._observe(info)
        return obs, 1.0 if matched else 0.0, self.over, False, obs.info

    def _judge(self, action: Any, step: Step) -> tuple[bool, str | None]:
        """Whether ``action`` matches ``step``; never raises on model output."""
        if not isinstance(action, Action):
            if isinstance(action, ParseFailure):
                return False, f"parse failure: {action.reason}"
            return False, None if action is None else f"not an Action: {type(action).__name__}"
        try:
            result = self.matcher(action, step)
        except (ValueError, TypeError, ArithmeticError) as err:  # e.g. a frame without size
            return False, f"{type(err).__name__}: {err}"
        return bool(getattr(result, "success", result)), None

    @staticmethod
    def _screen(action: Action, step: Step) -> Action:
        return in_screen(action, step.screenshot.width, step.screenshot.height)

    def _observe(self, extra: dict[str, Any]) -> Observation:
        episode = self.episode
        assert episode is not None
        shown = episode.steps[min(self.position, len(episode.steps) - 1)]
        image = Image.open(self.image_root / shown.screenshot.path)
        image.load()
        image = image.convert("RGB")
        level = self.instruction_level
        instruction = shown.instruction if level == "step" or (level == "auto" and shown.instruction) else None
        info = {"episode": episode.id, "episode_index": self.episode_index, "task": episode.task,
                "source": episode.source, "seed": self.seed, "step": shown.index, "position": self.position,
                "steps": len(episode.steps), "patches_used": self.patches_used,
                "patch_threshold": self.patch_threshold, "first_mismatch": self.first_mismatch, **extra}
        valid = None
        if not self.over:
            valid = [self._screen(a, shown).to_frame(Frame.screen(*image.size)) for a in ground_truth(shown)]
        return Observation(screenshot=image, instruction=instruction or episode.instruction, a11y=shown.a11y,
                           valid_actions=valid, sub_goal=shown.sub_goal, subtasks=shown.subtasks, info=info)

    def close(self) -> None:
        self.episode = None


def load_replay_data(data: str | Path, data_format: str = "guirl", image_dir: str | Path | None = None,
                     split: str | None = None, options: dict[str, Any] | None = None) -> tuple[list[Episode], Path]:
    """``(episodes, image root)`` of a guirl JSONL (file, or directory holding ``episodes.jsonl``)
    or of any public format :func:`guirl.data.adapters.open_public` reads."""
    if data_format != "guirl":
        from guirl.data.adapters import open_public

        return open_public(data_format, data, image_dir=image_dir, split=split, **(options or {}))
    from guirl.data.io import read_episodes

    if split is not None or options:
        raise ValueError("data_format 'guirl' takes no split or adapter options; they belong to public formats")
    path = Path(data)
    if path.is_dir():
        path = path / "episodes.jsonl"
    episodes = read_episodes(path, check_images=image_dir is None)
    return episodes, Path(image_dir) if image_dir is not None else path.parent


@register_env("replay")
def make_replay_env(data: str | Path, data_format: str = "guirl", image_dir: str | Path | None = None,
                    split: str | None = None, options: dict[str, Any] | None = None, **kwargs: Any) -> ReplayEnv:
    """Factory for ``make_env("replay", data=..., data_format=..., image_dir=..., split=..., options=...)``.

    ``options`` are the adapter's (:func:`guirl.data.adapters.adapter_options`); other keyword
    arguments go to :class:`ReplayEnv` (``matcher``, ``patch_threshold``, ``instruction``, ``rule``, ...).
    """
    episodes, root = load_replay_data(data, data_format, image_dir, split, options)
    return ReplayEnv(episodes, root, **kwargs)


__all__ = ["Matcher", "ReplayEnv", "UIS1Matcher", "expert_action", "ground_truth", "load_replay_data",
           "make_replay_env"]
