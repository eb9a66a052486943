"""Scripted reference policies for a few MiniWoB++ tasks.

They prove the adapter end to end: they read the instruction and the a11y
tree of the current observation, and act only through guirl Actions at
screen pixels (never through DOM references). Each decides from the current
state alone (what is already typed or checked), so no memory is needed.

``scripted_policy`` dispatches on the episode's task; tasks without a script
raise an error listing the scripted ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType
from guirl.data.schema import A11yNode
from guirl.envs.miniwob.a11y import centre, find_nodes
from guirl.rollout.policy import PolicyInput

ScriptedPolicy = Callable[[PolicyInput], Action]


def _quoted(instruction: str) -> list[str]:
    return re.findall(r'"([^"]*)"', instruction)


def _nodes(inputs: PolicyInput) -> list[A11yNode]:
    nodes = inputs.observation.a11y
    if nodes is None:
        raise ValueError("scripted MiniWoB policies need the observation's a11y tree")
    return nodes


def _click(node: A11yNode, frame: Frame, description: str) -> Action:
    return Action(type=ActionType.CLICK, point=centre(node), frame=frame, description=description)


def _type_into(node: A11yNode, text: str, frame: Frame) -> Action:
    """Click the field and type ``text`` (one TYPE action at a point)."""
    return Action(type=ActionType.TYPE, point=centre(node), text=text, frame=frame, description=f"type {text!r}")


def _button(nodes: list[A11yNode], text: str) -> A11yNode:
    matches = find_nodes(nodes, role="button", text=text)
    if not matches:
        raise ValueError(f"no button {text!r} on the page; buttons: {[n.text for n in find_nodes(nodes, 'button')]}")
    return matches[0]


def click_button(inputs: PolicyInput) -> Action:
    """'Click on the "Ok" button.'"""
    (label,) = _quoted(inputs.instruction)[:1]
    return _click(_button(_nodes(inputs), label), inputs.frame, f"click the {label} button")


def enter_text(inputs: PolicyInput) -> Action:
    """'Enter "Myron" into the text field and press Submit.'"""
    (text,) = _quoted(inputs.instruction)[:1]
    nodes = _nodes(inputs)
    field = find_nodes(nodes, role="textbox")[0]
    if field.value != text:
        return _type_into(field, text, inputs.frame)
    return _click(_button(nodes, "Submit"), inputs.frame, "click Submit")


def login_user(inputs: PolicyInput) -> Action:
    """'Enter the username "X" and the password "Y" into the text fields and press login.'"""
    username, password = _quoted(inputs.instruction)[:2]
    nodes = _nodes(inputs)
    user_field, password_field = find_nodes(nodes, role="textbox")[:2]
    if user_field.value != username:
        return _type_into(user_field, username, inputs.frame)
    if password_field.value != password:
        return _type_into(password_field, password, inputs.frame)
    return _click(_button(nodes, "Login"), inputs.frame, "click Login")


def click_checkboxes(inputs: PolicyInput) -> Action:
    """'Select 91YPF, i6Vdpn2 and click Submit.' / 'Select nothing and click Submit.'"""
    match = re.match(r"Select (.*) and click Submit", inputs.instruction)
    if match is None:
        raise ValueError(f"unexpected click-checkboxes instruction {inputs.instruction!r}")
    wanted = set() if match.group(1) == "nothing" else {w.strip() for w in re.split(r",|\band\b", match.group(1))}
    wanted.discard("")
    nodes = _nodes(inputs)
    for box in find_nodes(nodes, role="checkbox"):
        label = " ".join(n.text for n in nodes if n.parent == box.parent and n.role == "text").strip()
        if bool(box.checked) != (label in wanted):
            return _click(box, inputs.frame, f"toggle {label}")
    return _click(_button(nodes, "Submit"), inputs.frame, "click Submit")


def click_dialog(inputs: PolicyInput) -> Action:
    """'Close the dialog box by clicking the "x".' (the dialog's only button)."""
    buttons = find_nodes(_nodes(inputs), role="button")
    if not buttons:
        raise ValueError("click-dialog: no close button on the page")
    return _click(buttons[0], inputs.frame, "close the dialog")


def focus_text(inputs: PolicyInput) -> Action:
    """'Focus into the textbox.'"""
    field = find_nodes(_nodes(inputs), role="textbox")[0]
    return _click(field, inputs.frame, "focus the text box")


def _own_text(nodes: list[A11yNode], node: A11yNode) -> str:
    """The node's text with the text runs directly under it (a menu item's label beside its icon)."""
    runs = [n.text for n in nodes if n.parent == node.id and n.role == "text"]
    return " ".join([node.text, *runs]).strip()


def click_menu_2(inputs: PolicyInput) -> Action:
    """'Click the "Menu" button, and then find and click on the item labeled "Prev".' or '... on the item with the
    <span class="ui-icon ui-icon-stop"> icon.' (the icon as the environment writes it: its class names, which the
    icon's a11y node carries). Opens the menu, hovers the submenu that holds the item, then clicks the item."""
    nodes = _nodes(inputs)
    icon = re.search(r'with the <\w+ class="([^"]+)"', inputs.instruction)
    labeled = re.search(r'labeled "([^"]*)"', inputs.instruction)
    if icon:
        wanted = set(icon.group(1).split())
        targets = [n for n in nodes if n.classes and wanted <= set(n.classes)]
    elif labeled:
        targets = [n for n in nodes if n.role == "div" and _own_text(nodes, n) == labeled.group(1)]
    else:
        raise ValueError(f"unexpected click-menu-2 instruction {inputs.instruction!r}")
    targets = [n for n in targets if n.visible is not False]
    if targets:
        return _click(targets[0], inputs.frame, "click the menu item")
    if not [n for n in nodes if n.role == "list" and "ui-menu" in (n.classes or ())]:
        return _click(_button(nodes, "Menu"), inputs.frame, "open the menu")
    by_id = {n.id: n for n in nodes}
    closed = [  # items with a submenu caret whose submenu is not shown
        by_id[n.parent]
        for n in nodes
        if "ui-menu-icon" in (n.classes or ())
        and n.parent in by_id
        and not any(m.role == "list" and m.parent == by_id[n.parent].parent for m in nodes)
    ]
    if not closed:
        raise ValueError("click-menu-2: the item is not in the open menu")
    return Action(type=ActionType.MOVE, point=centre(closed[0]), frame=inputs.frame, description="open the submenu")


SCRIPTED_TASKS: dict[str, ScriptedPolicy] = {
    "click-button": click_button,
    "enter-text": enter_text,
    "login-user": login_user,
    "click-checkboxes": click_checkboxes,
    "click-dialog": click_dialog,
    "focus-text": focus_text,
    "click-menu-2": click_menu_2,
}


def scripted_policy(inputs: PolicyInput) -> Action:
    """The scripted policy of the episode's task (``inputs.episode['task']`` or the observation's)."""
    task = inputs.episode.get("task") or inputs.observation.info.get("task")
    try:
        policy = SCRIPTED_TASKS[task]
    except KeyError:
        raise ValueError(
            f"no scripted MiniWoB policy for task {task!r}; scripted tasks: {sorted(SCRIPTED_TASKS)}"
        ) from None
    return policy(inputs)


def expert_action(task: str, obs) -> Action | None:
    """The scripted expert's action on observation ``obs`` of ``task`` (the MiniWoB++ oracle's A*_t); None when the
    task has no script or the script finds no target on this page."""
    script = SCRIPTED_TASKS.get(task)
    if script is None:
        return None
    try:
        return script(PolicyInput(obs.instruction, obs.screenshot, obs.frame, [], [], 0, obs, {"task": task}))
    except ValueError:  # no such element on this page: no verdict for this step
        return None


def matches_expert(action: Action, expected: Action, before) -> bool:
    """Whether ``action``, executed on observation ``before``, is the expert's (``match_action``, inclusive)."""
    from guirl.matching.step import match_action

    try:
        executed = action.to_frame(before.frame)
    except ValueError:
        return False
    return match_action(executed, [expected], screen_size=before.screenshot.size, a11y=before.a11y).success
