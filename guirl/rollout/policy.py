"""The Policy protocol the episode runner drives.

A policy is called once per step with :class:`PolicyInput` (the instruction,
the current screenshot and its frame, the history window built by the
runner's :class:`~guirl.rollout.window.HistoryBuilder`) and answers with a
:class:`PolicyOutput`: the raw text ``y_t`` and/or an Action, plus whatever
a trainer needs later (the exact prompt, sampled token ids and log-probs, for
ComputerSD's privileged rescoring and CCPO's replay).

Any callable ``(PolicyInput) -> PolicyOutput | Action | str`` is a policy
(:func:`as_policy` wraps it); a string answer is parsed by the runner with its
action format. Guirl models are adapted lazily through ``guirl.models.generate``
(:class:`ModelPolicy`). :func:`oracle_policy` plays the environment's first
valid action (sim and replay know them).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from PIL import Image

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ParseFailure
from guirl.data.schema import HistoryItem
from guirl.envs.base import Observation


@dataclass
class PolicyInput:
    """Everything a policy may see at one step.

    ``instruction``, ``screenshot``, ``history`` and ``history_images`` are the
    prompt inputs of a model policy. ``observation`` is the environment's full
    observation (a11y tree, and for sim/replay the valid actions): scripted and
    oracle policies may read it; a model's prompt must not include
    ``valid_actions``. ``episode`` names the task, seed, group member and pool
    worker of this episode.
    """

    instruction: str
    screenshot: Image.Image
    frame: Frame
    history: list[HistoryItem]
    history_images: list[Image.Image | None]
    step_index: int
    observation: Observation
    episode: dict[str, Any] = field(default_factory=dict)
    #: where each cropped history image lies on its full screen (CASC; None: whole or no image)
    history_crops: list[Any] = field(default_factory=list)


@dataclass
class PolicyOutput:
    """A policy's answer for one step (what a trainer needs to learn from it)."""

    text: str | None = None
    action: Action | ParseFailure | None = None
    prompt: Any = None  # the exact prompt (chat messages or text) the model saw
    images: list[Image.Image] | None = None  # images in prompt order, when not just [screenshot]
    token_ids: list[int] | None = None  # sampled completion tokens
    logprobs: list[float] | None = None  # their log-probabilities under the sampling policy
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Policy(Protocol):
    def __call__(self, inputs: PolicyInput) -> PolicyOutput: ...


class CallablePolicy:
    """Wrap ``fn(PolicyInput) -> PolicyOutput | Action | str`` into a :class:`Policy`."""

    def __init__(self, fn: Callable[[PolicyInput], Any]):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)

    def __call__(self, inputs: PolicyInput) -> PolicyOutput:
        return to_policy_output(self.fn(inputs), self.__name__)


def to_policy_output(answer: Any, who: str = "policy") -> PolicyOutput:
    """A PolicyOutput from a PolicyOutput, an Action / ParseFailure, or raw text."""
    if isinstance(answer, PolicyOutput):
        return answer
    if isinstance(answer, (Action, ParseFailure)):
        return PolicyOutput(action=answer)
    if isinstance(answer, str):
        return PolicyOutput(text=answer)
    raise TypeError(
        f"{who} returned {type(answer).__name__}; return a PolicyOutput, an Action or the raw text to parse"
    )


class ModelPolicy:
    """A loaded guirl model (``guirl.models.load.Policy``) as a policy.

    One step: ``build_messages`` (the instruction, the history window with
    its images, the screenshot, the model's coordinate frame), the generation
    engine (:class:`~guirl.rollout.hf_engine.HFEngine`; sampling log-probs,
    finish reason and policy version come back with the tokens), then
    ``decode_generation`` (parse + convert to screen pixels). The output keeps
    the exact messages, images, sampled token ids and their log-probs. Imported at the first call, so the runner itself
    needs no torch. The sampling seed varies with the episode's seed, group
    member and step, so the G members of a GRPO group sample differently.
    """

    def __init__(
        self,
        model: Any,
        fmt: str | None = None,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_new_tokens: int = 128,
        seed: int = 0,
    ):
        self.model, self.fmt = model, fmt
        self.temperature, self.top_p, self.max_new_tokens, self.seed = temperature, top_p, max_new_tokens, seed
        self._engine = None

    @classmethod
    def load(cls, path: str, **kwargs: Any) -> ModelPolicy:
        """Load a checkpoint directory with ``guirl.models.load.load_policy`` (CPU, float32)."""
        load = importlib.import_module("guirl.models.load")
        return cls(load.load_policy(path), **kwargs)

    def __call__(self, inputs: PolicyInput) -> PolicyOutput:
        generate = importlib.import_module("guirl.models.generate")
        prompts = importlib.import_module("guirl.models.prompts")
        engine_module = importlib.import_module("guirl.rollout.engine")
        spec = getattr(self.model, "prompt", None) or prompts.PromptSpec()
        fmt = self.fmt or spec.fmt
        width, height = inputs.screenshot.size
        messages, images = prompts.build_messages(
            inputs.instruction,
            inputs.screenshot,
            inputs.history,
            fmt=fmt,
            frame=self.model.frame_for(width, height),
            history_window=len(inputs.history),
            history_images=inputs.history_images,
            style=spec.style,
            reasoning=spec.reasoning,
            history_captions=self._captions(inputs, width, height),
            history_text=spec.history_text,
        )
        episode = inputs.episode
        seed = self.seed + 1_000_003 * int(episode.get("seed") or 0) + 10_007 * int(episode.get("group") or 0)
        params = engine_module.SamplingParams(n=1, temperature=self.temperature, top_p=self.top_p,
                                              max_new_tokens=self.max_new_tokens, seed=seed + inputs.step_index)
        ((completion,),) = self.engine.generate([prompts.Prompt(messages, images)], params)
        generation = generate.decode_generation(self.model, completion.token_ids, fmt, width, height)
        return PolicyOutput(
            text=generation.text, action=generation.action, prompt=messages, images=images,
            token_ids=completion.token_ids, logprobs=completion.logprobs,
            extra={"finish_reason": completion.finish_reason, "policy_version": completion.policy_version},
        )

    def _captions(self, inputs: PolicyInput, width: int, height: int) -> list[str | None] | None:
        """One line per cropped history image saying which part of the screen it shows (CASC)."""
        if not any(inputs.history_crops):
            return None
        casc = importlib.import_module("guirl.rollout.casc")
        frame = self.model.frame_for(width, height)
        return [casc.crop_caption(c, frame) if c is not None else None for c in inputs.history_crops]

    @property
    def engine(self):
        """The generation engine this policy samples with (an HFEngine over its model, made on first use)."""
        if self._engine is None:
            self._engine = importlib.import_module("guirl.rollout.hf_engine").HFEngine.from_policy(self.model)
        return self._engine


def as_policy(obj: Any) -> Policy:
    """A :class:`Policy` from a policy, a callable, or a ``"module:callable"`` string."""
    if isinstance(obj, str):
        obj = load_callable(obj)
    if isinstance(obj, (CallablePolicy, ModelPolicy)):
        return obj
    if callable(obj):
        return CallablePolicy(obj)
    raise TypeError(f"cannot use a {type(obj).__name__} as a policy; pass a callable (PolicyInput) -> action")


def load_callable(spec: str) -> Callable[..., Any]:
    """Import ``"package.module:name"``; a class or factory is called without arguments when it
    is not itself a policy (i.e. ``name`` may be a policy function or a zero-argument policy class)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"policy {spec!r} must look like 'package.module:callable'")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        raise ValueError(f"policy {spec!r}: cannot import module {module_name!r} ({err})") from None
    try:
        target = getattr(module, attr)
    except AttributeError:
        raise ValueError(f"policy {spec!r}: module {module_name!r} has no attribute {attr!r}") from None
    if isinstance(target, type):
        target = target()
    if not callable(target):
        raise ValueError(f"policy {spec!r} is a {type(target).__name__}, not a callable")
    return target


def oracle_policy(inputs: PolicyInput) -> Action:
    """The environment's first valid action A*_t (for envs that know them: sim, replay)."""
    valid = inputs.observation.valid_actions
    if not valid:
        raise ValueError("the oracle policy needs an environment whose observations carry valid_actions (sim, replay)")
    return valid[0]
