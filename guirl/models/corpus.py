"""Templated GUI-agent text used to train the tiny tokenizer.

Instructions, short reasoning, system prompts and actions: the actions are
written by every registered output format (``guirl.actions.format_action``)
and, so the corpus is useful whatever formats exist, by hand-written templates
of the five methods' formats (docs/methods.md: Qwen ``computer_use`` / ``mobile_use`` tool calls,
GUI-Libra ``<think>/<answer>``, LiteGUI JSON, pyautogui calls).
Everything is drawn from one ``random.Random``, so a seed fixes the corpus
(for a given set of registered formats: registering a custom format before
training the tokenizer changes the corpus).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

from guirl.actions import Action, ActionType, Frame, available_formats, format_action, get_format

WORDS = (
    "OK", "Cancel", "Submit", "Save", "Search", "Login", "Log in", "Sign up", "Settings", "Next", "Back",
    "Delete", "Edit", "Home", "Menu", "File", "Help", "Yes", "No", "Send", "Close", "Open", "Apply",
    "Continue", "Download", "Upload", "Share", "Print", "Copy", "Paste", "Undo", "Redo", "New", "Add",
    "Remove", "Refresh", "Profile", "Account", "Messages", "Inbox", "Compose", "Reply", "Forward",
    "Archive", "Start", "Stop", "Play", "Pause", "Done", "Finish", "Confirm", "Accept", "Decline",
)  # fmt: skip
FIELDS = ("username", "password", "email", "search", "name", "address", "city", "comment", "title", "message")
APPS = ("Chrome", "Settings", "Gmail", "Calendar", "Files", "Terminal", "Notes", "Maps", "Camera", "Clock")
KEYS = (("enter",), ("ctrl", "a"), ("ctrl", "c"), ("ctrl", "v"), ("tab",), ("escape",), ("ctrl", "s"))
PLACES = ("top left", "top right", "bottom left", "bottom right", "centre", "top", "bottom", "left", "right")
TEXTS = ("hello world", "john.doe@example.com", "Paris", "meeting at 10am", "password123", "42", "guirl")


def _instruction(rng: random.Random) -> str:
    word, field, app = rng.choice(WORDS), rng.choice(FIELDS), rng.choice(APPS)
    return rng.choice(
        (
            f"Click the {word} button",
            f"Click on {word}",
            f"Press the {word} button",
            f'Type "{rng.choice(TEXTS)}" into the {field} field',
            f"Scroll down and click {word}",
            f"Open the {app} app",
            f"Go back to the previous page and select {word}",
            f"Fill in the {field} field and press {word}",
            f"Double-click the {word} icon",
            f"Right-click on the {word} item",
        )
    )


def _reasoning(rng: random.Random, instruction: str) -> str:
    word, place = rng.choice(WORDS), rng.choice(PLACES)
    return rng.choice(
        (
            f"The task is to {instruction.lower()}. I can see a {word} button at the {place} of the screen.",
            f"The screen shows a form with a {rng.choice(FIELDS)} field. Next I should click {word}.",
            f"I need to find the {word} button. It is located at the {place}, so I will click it.",
            f"The previous action did not change the screen. I will try the {word} button instead.",
            "The task has been completed, so I will terminate with success.",
        )
    )


def _random_action(rng: random.Random) -> Action:
    x, y = rng.randint(0, 1920), rng.randint(0, 1080)
    kind = rng.choice(("click", "click", "click", "type", "key", "scroll", "drag", "wait", "terminate", "dbl"))
    frame = Frame.screen(1920, 1080)
    if kind == "type":
        return Action(type=ActionType.TYPE, text=rng.choice(TEXTS), frame=frame)
    if kind == "key":
        return Action(type=ActionType.KEY, keys=rng.choice(KEYS), frame=frame)
    if kind == "scroll":
        direction = rng.choice(("up", "down", "left", "right"))
        return Action(type=ActionType.SCROLL, point=(x, y), direction=direction, frame=frame)
    if kind == "drag":
        end = (rng.randint(0, 1920), rng.randint(0, 1080))
        return Action(type=ActionType.DRAG, point=(x, y), end_point=end, frame=frame)
    if kind == "wait":
        return Action(type=ActionType.WAIT, frame=frame)
    if kind == "terminate":
        return Action(type=ActionType.TERMINATE, status=rng.choice(("success", "failure")), frame=frame)
    kind_type = ActionType.DOUBLE_CLICK if kind == "dbl" else ActionType.CLICK
    return Action(type=kind_type, point=(x, y), frame=frame)


def _template_action(rng: random.Random) -> str:
    """Hand-written action strings in the five methods' formats (independent of the registry)."""
    x, y, word = rng.randint(0, 1920), rng.randint(0, 1080), rng.choice(WORDS)
    name = rng.choice(("computer_use", "mobile_use"))
    tool_args = rng.choice(
        (
            {"action": "left_click", "coordinate": [x, y]},
            {"action": "type", "text": rng.choice(TEXTS)},
            {"action": "key", "keys": list(rng.choice(KEYS))},
            {"action": "scroll", "coordinate": [x, y], "pixels": rng.choice((-500, 500))},
            {"action": "terminate", "status": rng.choice(("success", "failure"))},
        )
    )
    libra = {"action_type": "Click", "action_description": f"Click the {word} button", "value": "none",
             "point_2d": [x, y]}  # fmt: skip
    lite = {"reasoning": f"I should click {word}.", "subtasks": [{"task": f"Click {word}", "done": False}],
            "action": {"type": "CLICK", "position": [x, y], "value": ""}}  # fmt: skip
    return rng.choice(
        (
            f"Action: Click the {word} button.\n<tool_call>\n"
            + json.dumps({"name": name, "arguments": tool_args})
            + "\n</tool_call>",
            f"<think>I need to click {word}.</think><answer>{json.dumps(libra)}</answer>",
            json.dumps(lite),
            f"pyautogui.click(x={x}, y={y})",
            f"pyautogui.write('{rng.choice(TEXTS)}')",
            f"pyautogui.hotkey({', '.join(repr(k) for k in rng.choice(KEYS))})",
        )
    )


def _system_prompts() -> list[str]:
    from guirl.models.prompts import system_prompt

    return [system_prompt(name) for name in available_formats()]


def iter_corpus(rng: random.Random, num_samples: int) -> Iterator[str]:
    """``num_samples`` texts (plus one system prompt per registered format)."""
    formats = available_formats()
    yield from _system_prompts()
    for _ in range(num_samples):
        instruction = _instruction(rng)
        parts = [instruction, _reasoning(rng, instruction)]
        if formats and rng.random() < 0.6:
            fmt = rng.choice(formats)
            action = _random_action(rng)
            if action.type in get_format(fmt).supported_types:
                try:
                    parts.append(format_action(action, fmt))
                except ValueError:  # the format needs a field this random action lacks
                    parts.append(_template_action(rng))
        else:
            parts.append(_template_action(rng))
        yield "\n".join(parts)
