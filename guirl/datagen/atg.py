"""LiteGUI's generate-verify-correct trajectory generation (ATG; docs/methods.md section 1.5, paper A.7).

In a live environment, at every step:

1. the GUI model (a :class:`~guirl.rollout.engine.GenerationEngine`, prompted
   as its :class:`~guirl.models.prompts.PromptSpec` says) proposes an action
   from the task, the current screenshot, the dialogue history (the last
   ``history_steps`` steps, as its spec writes them: raw outputs or actions)
   and the screenshots t-1, t-2; the first
   proposal is greedy, retries sample at ``temperature`` (seeded);
2. a verifier (any :class:`~guirl.judges.Judge`; the verify role,
   :mod:`guirl.judges.verify`) judges the proposal ``votes`` = 3 times;
3. :func:`decide`: the step is committed iff at least ``yes_needed`` = 2
   votes are Yes; otherwise the No votes' reasons go back to the proposer
   as negative constraints (a text block after the screenshot,
   :func:`constraints_block`: "Rejected before: <action> because <reason>")
   and it proposes again, up to ``retries`` = 3 times; when no proposal won
   a majority by then, the iteration with the most Yes votes is executed
   (ties: ``tie_break``). Failed or unreadable votes are masked: counted,
   neither Yes nor No.

Successful episodes (the environment says the task succeeded) go to the pool
``OUT/episodes.jsonl``; failed ones to ``OUT/failed.jsonl`` (screenshots as
PNG under ``OUT/images/<episode>/``, as ``gen-data`` writes them). Every
step keeps every proposal, vote, reason and retry in ``Step.extra["atg"]``;
a step whose executed action won no majority is labelled
``StepLabel.ERROR`` (an error-aware negative), a committed one ``CORRECT``.
``OUT/atg_manifest.json`` holds the config and the counts.

Departures: the paper's fallback takes the *latest* iteration among those
with the most Yes votes (recency); the default here takes the earliest
(``tie_break="latest"`` is the paper's). The proposal is whatever the
policy's output format holds (for the tiny base agent, ``qwen_computer_use``:
an ``Action:`` sentence and a tool call, no subtask list).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from PIL import Image

from guirl.actions import Action, Frame, ParseFailure, parse_action
from guirl.data.io import EpisodeWriter
from guirl.data.schema import Episode, HistoryItem
from guirl.datagen.atg_output import (
    SOURCE,
    EpisodeOutcome,
    ShownStep,
    StepOutcome,
    atg_metrics,
    count_outcome,
    to_episode,
)
from guirl.envs.base import Env, Observation, make_env
from guirl.judges.base import Judge, JudgeResult, judge_many
from guirl.judges.verify import Vote, read_vote, verify_request
from guirl.models.prompts import Prompt, PromptSpec, step_prompt, written_action
from guirl.rollout.engine import GenerationEngine, SamplingParams

REJECTED_HEADER = "Rejected before (do not propose these again):"
TieBreak = Literal["earliest", "latest"]


@dataclass(frozen=True)
class ATGConfig:
    """How proposals are verified, corrected and recorded."""

    votes: int = 3
    """verifier calls per proposal (LiteGUI: three independent evaluations)."""
    yes_needed: int = 2
    """Yes votes that commit a proposal (LiteGUI eq. 30: Count(Eval = "Yes") >= 2)."""
    retries: int = 3
    """N: proposals after the first when the verifier rejects (0 = always execute the first proposal)."""
    tie_break: TieBreak = "earliest"
    """fallback among iterations with the most Yes votes: 'earliest', or 'latest' (the paper's recency rule)."""
    first_temperature: float = 0.0
    """temperature of the first proposal of a step (0 = greedy: without retries this is the plain policy)."""
    temperature: float = 0.7
    """temperature of the retries (they must differ from the rejected proposals; the tiny base agent's samples
    stop parsing near 1.0, see docs/atg.md)."""
    feedback: bool = True
    """show the rejected proposals and the verifier's reasons to the proposer (False: plain resampling)."""
    top_p: float = 1.0
    """nucleus sampling mass of every proposal (1 = off)."""
    max_new_tokens: int = 80
    """proposal length cap (one qwen_computer_use action with its Action: line is ~45 tokens)."""
    max_steps: int = 18
    """step cap per episode (Lite-Bench: 18); the environment may truncate earlier."""
    history_steps: int = 3
    """previous outputs shown to the proposer (dialogue history); 0 = none."""
    history_images: int = 2
    """of those, how many come with their screenshot (LiteGUI: t-1 and t-2)."""
    seed: int = 0
    """seed of the sampled retries (combined with the episode's world seed, the step and the iteration)."""

    def __post_init__(self) -> None:
        if self.votes < 1 or not 1 <= self.yes_needed <= self.votes:
            raise ValueError(f"need votes >= 1 and 1 <= yes_needed <= votes, got votes={self.votes}, "
                             f"yes_needed={self.yes_needed}")
        if self.retries < 0 or self.max_steps < 1:
            raise ValueError(f"need retries >= 0 and max_steps >= 1, got {self.retries}, {self.max_steps}")
        if self.tie_break not in ("earliest", "latest"):
            raise ValueError(f"tie_break must be 'earliest' or 'latest', got {self.tie_break!r}")
        if not 0 <= self.history_images <= self.history_steps:
            raise ValueError(f"need 0 <= history_images <= history_steps, got {self.history_images}, "
                             f"{self.history_steps}")
        for temperature in (self.first_temperature, self.temperature):
            SamplingParams(temperature=temperature, top_p=self.top_p, max_new_tokens=self.max_new_tokens)


@dataclass(frozen=True)
class Decision:
    """What to do after the latest iteration: ``commit`` / ``fallback`` execute iteration ``index``."""

    kind: Literal["commit", "retry", "fallback"]
    index: int | None = None


def decide(yes_counts: Sequence[int], yes_needed: int, retries: int, tie_break: TieBreak = "earliest") -> Decision:
    """The voting and retry rule after ``len(yes_counts)`` iterations (Yes votes of each, in order).

    >>> decide([2], yes_needed=2, retries=3)
    Decision(kind='commit', index=0)
    >>> decide([1], yes_needed=2, retries=3)
    Decision(kind='retry', index=None)
    >>> decide([1, 0, 1, 0], yes_needed=2, retries=3)  # no majority after N = 3 retries: most Yes, earliest
    Decision(kind='fallback', index=0)
    """
    if not yes_counts:
        raise ValueError("decide needs the Yes votes of at least one iteration")
    last = len(yes_counts) - 1
    if yes_counts[last] >= yes_needed:
        return Decision("commit", last)
    if last < retries:
        return Decision("retry")
    best = max(yes_counts)
    winners = [i for i, yes in enumerate(yes_counts) if yes == best]
    return Decision("fallback", winners[0] if tie_break == "earliest" else winners[-1])


def constraints_block(rejected: Sequence[tuple[str, Sequence[str]]]) -> str:
    """The negative constraints shown to the proposer: one line per rejected (action, No reasons)."""
    lines = [REJECTED_HEADER]
    for action, reasons in rejected:
        reasons = list(dict.fromkeys(r for r in reasons if r)) or ["the verifier did not approve it"]
        lines.append(f"- {action} because {'; '.join(reasons)}")
    return "\n".join(lines)


@dataclass
class Proposer:
    """The GUI model: an engine, how its policy is prompted, and the coordinate frame it answers in."""

    engine: GenerationEngine
    spec: PromptSpec
    frame_for: Callable[[int, int], Frame]

    @classmethod
    def from_policy(cls, policy: Any, **engine_kwargs: Any) -> Proposer:
        """A proposer over a :class:`~guirl.models.load.LoadedPolicy` (an HFEngine on its model)."""
        from guirl.rollout.hf_engine import HFEngine

        return cls(HFEngine.from_policy(policy, **engine_kwargs), policy.prompt, policy.frame_for)


def proposal_prompt(proposer: Proposer, instruction: str, screenshot: Image.Image, history: Sequence[HistoryItem],
                    history_images: Sequence[Image.Image | None], constraints: str, history_steps: int) -> Prompt:
    """The proposer's prompt: its usual step prompt (:func:`~guirl.models.prompts.step_prompt`: its system prompt,
    its past steps as its spec writes them, raw outputs or actions), over a history window of ``history_steps``,
    plus ``constraints`` as a text block after the current screenshot when there are any."""
    spec = replace(proposer.spec, history_window=history_steps)
    prompt = step_prompt(spec, proposer.frame_for(*screenshot.size), instruction, screenshot, history,
                         history_images=history_images)
    if constraints:
        prompt.messages[-1]["content"].append({"type": "text", "text": f"\n{constraints}"})
    return prompt


def prompt_text(prompt: Prompt) -> str:
    """The text parts of a prompt's user turn (images as ``<image>``), for the log."""
    parts = prompt.messages[-1]["content"]
    return "".join(p["text"] if p["type"] == "text" else "<image>" for p in parts)


def parse_proposal(text: str, proposer: Proposer, size: tuple[int, int]) -> Action | ParseFailure:
    """The proposal's action in screen pixels, or why it cannot be read (model output is parsed, never run)."""
    action = parse_action(text, proposer.spec.fmt, proposer.frame_for(*size))
    if not action:
        return action
    try:
        return action.to_frame(Frame.screen(*size))
    except ValueError as err:
        return ParseFailure(reason=f"cannot convert to screen pixels: {err}", raw=text[:200])


def oracle_accepts(env: Env, obs: Observation, action: Action | ParseFailure) -> bool | None:
    """Whether the world's oracle takes ``action`` as a valid next action (None: the env has no oracle).

    The built-in world judges by effect (:func:`guirl.envs.sim.is_advancing`); other environments
    that report ``valid_actions`` by :func:`guirl.matching.step.match_action`."""
    from guirl.envs.sim import SimEnv, is_advancing
    from guirl.matching.step import match_action

    if isinstance(env, SimEnv) and env.oracle is not None:
        return bool(action) and is_advancing(env, action)
    if not obs.valid_actions:
        return None
    return bool(action) and match_action(action, obs.valid_actions, screen_size=obs.screenshot.size,
                                         a11y=obs.a11y).success


def ask_verifier(verifier: Judge, requests: list) -> list[Vote]:
    """The votes of ``requests``; a verifier that raises is a crash boundary: every vote masked, with the error."""
    try:
        results = judge_many(verifier, requests)
    except Exception as err:  # a judge must not end data generation; the masked votes carry the reason
        results = [JudgeResult({}, ok=False, reason=f"{type(err).__name__}: {err}") for _ in requests]
    return [read_vote(result) for result in results]


def propose_and_verify(env: Env, obs: Observation, past: list[ShownStep], proposer: Proposer, verifier: Judge,
                       config: ATGConfig, seed: int, step_index: int) -> StepOutcome:
    """Steps 1-3 of the module doc at one state: iterate until :func:`decide` says what to execute."""
    shown = past[-config.history_steps:] if config.history_steps else []
    history = [p.item for p in shown]
    images = [p.screenshot if i >= len(shown) - config.history_images else None for i, p in enumerate(shown)]
    verifier_images = [im for im in images if im is not None] + [obs.screenshot]
    size = obs.screenshot.size
    rejected: list[tuple[str, list[str]]] = []
    iterations: list[dict[str, Any]] = []
    actions: list[Action | ParseFailure] = []
    decision = Decision("retry")
    while decision.kind == "retry":
        i = len(iterations)
        constraints = constraints_block(rejected) if rejected and config.feedback else ""
        prompt = proposal_prompt(proposer, obs.instruction, obs.screenshot, history, images, constraints,
                                 config.history_steps)
        params = SamplingParams(n=1, temperature=config.first_temperature if i == 0 else config.temperature,
                                top_p=config.top_p, max_new_tokens=config.max_new_tokens,
                                seed=config.seed * 1_000_003 + seed * 7_919 + step_index * 101 + i)
        ((completion,),) = proposer.engine.generate([prompt], params)
        action = parse_proposal(completion.text, proposer, size)
        requests = [verify_request(obs.instruction, completion.text, action if action else None,
                                   images=verifier_images, history=[h.output or "" for h in history],
                                   parse_failure=None if action else action.reason, screen_size=size, vote=k + 1,
                                   valid_actions=obs.valid_actions, a11y=obs.a11y) for k in range(config.votes)]
        votes = ask_verifier(verifier, requests)
        tally = Counter("masked" if v.yes is None else "yes" if v.yes else "no" for v in votes)
        iterations.append({
            "iteration": i, "temperature": params.temperature, "seed": params.seed, "prompt_text": prompt_text(prompt),
            "constraints": constraints, "text": completion.text,
            "action": action.model_dump(mode="json", exclude_none=True) if action else None,
            "parse_failure": None if action else action.reason,
            "votes": [{"yes": v.yes, "reason": v.reason} for v in votes],
            "yes": tally["yes"], "no": tally["no"], "masked": tally["masked"],
            "oracle_accepts": oracle_accepts(env, obs, action),
        })
        actions.append(action)
        decision = decide([it["yes"] for it in iterations], config.yes_needed, config.retries, config.tie_break)
        if decision.kind == "retry":
            shown_action = (" ".join(written_action(action, proposer.spec.fmt, proposer.frame_for(*size)).split())
                            if action else repr(completion.text[:120]))
            rejected.append((shown_action, [v.reason for v in votes if v.yes is False]))
    chosen = iterations[decision.index]
    executed = actions[decision.index]
    log = {"decision": decision.kind, "executed_iteration": decision.index, "retries": len(iterations) - 1,
           "iterations": iterations}
    return StepOutcome(obs.screenshot, obs, shown, [im is not None for im in images], executed if executed else None,
                       chosen["text"], log, committed=decision.kind == "commit")


def run_atg_episode(env: Env, task: str, seed: int, proposer: Proposer, verifier: Judge,
                    config: ATGConfig) -> EpisodeOutcome:
    """One live episode; environment errors end it as failed (with the reason), never raise."""
    try:
        obs = env.reset(seed=seed)
    except Exception as err:  # crash boundary: the env restarts on its next reset
        return EpisodeOutcome(task, seed, "", failure_reason=f"reset failed: {type(err).__name__}: {err}")
    outcome = EpisodeOutcome(task, seed, obs.instruction)
    past: list[ShownStep] = []
    for t in range(config.max_steps):
        step = propose_and_verify(env, obs, past, proposer, verifier, config, seed, t)
        outcome.steps.append(step)
        past.append(ShownStep(obs.screenshot, HistoryItem(action=step.action, output=step.text,
                                                      description=step.action.description if step.action else None), t))
        if step.action is None:  # the executed proposal did not parse: nothing happens on the screen
            continue
        try:
            obs, reward, terminated, truncated, info = env.step(step.action)
        except Exception as err:  # crash boundary, as above
            outcome.failure_reason = f"step {t} failed: {type(err).__name__}: {err}"
            return outcome
        step.reward = float(reward)
        if terminated or truncated:
            outcome.success = bool(info.get("success", reward > 0))
            if not outcome.success:
                outcome.failure_reason = "the environment ended the episode without success" + (
                    f" ({info['reason']})" if info.get("reason") else "")
            return outcome
    outcome.failure_reason = f"step limit reached ({config.max_steps} steps)"
    return outcome


def generate_atg(env_name: str, tasks: Sequence[str], episodes: int, proposer: Proposer, verifier: Judge,
                 out_dir: str | Path, config: ATGConfig | None = None, world_seed: int = 9_000_000,
                 env_kwargs: dict[str, Any] | None = None,
                 on_episode: Callable[[Episode], Any] | None = None) -> dict[str, float]:
    """Run ``episodes`` episodes of every task (world seeds ``world_seed + i``), write the pool, the failed
    episodes and the manifest to ``out_dir`` (module doc); returns :func:`atg_metrics`."""
    config = config or ATGConfig()
    if not tasks or episodes < 1:
        raise ValueError(f"need at least one task and episodes >= 1, got tasks={list(tasks)}, episodes={episodes}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("episodes.jsonl", "failed.jsonl"):  # the writers append; a rerun starts afresh
        (out / name).unlink(missing_ok=True)
    counts: Counter = Counter()
    with EpisodeWriter(out / "episodes.jsonl") as pool, EpisodeWriter(out / "failed.jsonl") as failed:
        for task in tasks:
            env = make_env(env_name, task=task, **(env_kwargs or {}))
            try:
                for i in range(episodes):
                    outcome = run_atg_episode(env, task, world_seed + i, proposer, verifier, config)
                    count_outcome(outcome, counts)
                    platform = getattr(env, "domain_name", "unknown")
                    episode = to_episode(outcome, f"atg-{task}-{world_seed + i}", out, platform)
                    (pool if outcome.success else failed).write(episode)
                    if on_episode is not None:
                        on_episode(episode)
            finally:
                env.close()
    metrics = atg_metrics(counts)
    manifest = {"generator": SOURCE, "env": env_name, "tasks": list(tasks), "episodes_per_task": episodes,
                "world_seed": world_seed, "config": asdict(config), "counts": dict(sorted(counts.items())),
                "metrics": metrics}
    (out / "atg_manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return metrics
