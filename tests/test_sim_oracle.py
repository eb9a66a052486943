"""The sim world's oracle: every family solvable, valid sets honest, several solutions, recovery."""

from __future__ import annotations

import random

import pytest

from guirl.actions.types import Action, ActionType
from guirl.envs.sim import SimEnv, available_tasks, is_advancing, oracle_valid_actions
from guirl.envs.sim.engine import full_key, state_key

MULTI = [t for t in available_tasks() if not t.endswith(".ground")]


def expert_rollout(env: SimEnv, seed: int, check=None) -> tuple[float, int]:
    obs = env.reset(seed=seed)
    rng = random.Random(seed)
    steps, reward = 0, 0.0
    while True:
        assert obs.valid_actions, f"{env.task.family} seed {seed}: no valid action at step {steps} ({obs.sub_goal})"
        if check:
            check(env, obs, rng)
        obs, reward, terminated, truncated, _ = env.step(rng.choice(obs.valid_actions))
        steps += 1
        if terminated or truncated:
            return reward, steps


@pytest.mark.parametrize("task", available_tasks())
def test_every_family_solved_by_the_oracle_from_many_seeds(task):
    for seed in range(12):
        reward, steps = expert_rollout(SimEnv(task=task, preset="coarse"), seed)
        assert reward == 1.0, f"{task} seed {seed} not solved"
        if not task.endswith(".ground"):
            assert 3 <= steps <= 16, f"{task} seed {seed}: {steps} steps"
    for seed in range(3):
        assert expert_rollout(SimEnv(task=task, preset="realistic"), 100 + seed)[0] == 1.0


def _check_valid_and_invalid(env: SimEnv, obs, rng: random.Random) -> None:
    """Listed actions advance (progress, shorter way to progress, or undo); sampled others do not."""
    oracle, world, state = env.oracle, env.world, env.state
    p0 = oracle.rank(state)  # (milestones reached, finer measure within the milestone)
    if oracle.done(state):
        assert [a.type for a in obs.valid_actions] in ([ActionType.TERMINATE], [ActionType.ANSWER])
        return
    judgement = env.judgement()
    base_cost = None
    memo: dict = {}
    for action in obs.valid_actions:
        child, _ = world.simulate(state, action)
        assert is_advancing(env, action)
        if oracle.rank(child) > p0 or state_key(child) == env.anchor:
            continue
        base_cost = base_cost if base_cost is not None else oracle._steps(state, p0, 3, memo)
        assert oracle._steps(child, p0, 3, memo) < base_cost, f"{action} does not shorten the way to progress"
    screen = world.screen(state)
    boxes = [a.box for a in obs.valid_actions if a.box is not None]
    frame = world.frame
    for _ in range(6):  # random clicks outside every valid box
        x, y = rng.uniform(0, screen.width), rng.uniform(0, screen.height)
        if any(b[0] <= x <= b[2] and b[1] <= y <= b[3] for b in boxes):
            continue
        for kind in (ActionType.CLICK, ActionType.RIGHT_CLICK, ActionType.LONG_PRESS):
            action = Action(type=kind, point=(x, y), frame=frame)
            child, _ = world.simulate(state, action)
            assert oracle.rank(child) <= p0, f"unlisted {kind.value} at {(x, y)} advanced {env.task.family}"
            assert not is_advancing(env, action)
    for action in (Action(type=ActionType.TYPE, text="zzz"), Action(type=ActionType.KEY, keys=("f5",))):
        assert not is_advancing(env, action)
    for action in obs.valid_actions:  # any point inside a valid box that hits the same widget is valid too
        if action.type is ActionType.CLICK:
            x1, y1, x2, y2 = action.box
            point = (rng.uniform(x1, x2 - 1), rng.uniform(y1, y2 - 1))
            if screen.hit(*point) is screen.hit(*action.point):
                assert full_key(world.simulate(state, action.model_copy(update={"point": point}))[0]) in \
                    judgement.child_keys


@pytest.mark.parametrize("task", MULTI)
def test_listed_actions_advance_and_unlisted_do_not(task):
    for seed in range(2):
        env = SimEnv(task=task, preset="coarse")
        assert expert_rollout(env, seed, _check_valid_and_invalid)[0] == 1.0


def _centre(env: SimEnv, widget_id: str) -> Action:
    widget = env.world.screen().find(widget_id)
    assert widget is not None, f"{widget_id} not on screen"
    x1, y1, x2, y2 = widget.box
    return Action(type=ActionType.CLICK, point=((x1 + x2) / 2, (y1 + y2) / 2), frame=env.world.frame)


def _kinds(env: SimEnv) -> set[tuple]:
    return {(a.type.value, a.keys, a.description) for a in oracle_valid_actions(env)}


def test_double_click_or_select_then_enter_both_open():
    env = SimEnv(task="desktop.open_file", preset="realistic")
    env.reset(seed=3)
    first = _kinds(env)
    assert ("click", None, "click the 'Files' icon") in first  # select, then Enter
    assert ("double_click", None, "double-click the 'Files' icon") in first
    env.step(_centre(env, "icon.Files"))
    after_select = _kinds(env)
    assert ("key", ("enter",), "press enter") in after_select
    assert ("double_click", None, "double-click the 'Files' icon") in after_select


def test_menu_path_or_keyboard_shortcut():
    env = SimEnv(task="desktop.save_document", preset="coarse")
    env.reset(seed=1)
    env.step(_centre(env, "icon.Editor").model_copy(update={"type": ActionType.DOUBLE_CLICK}))
    env.step(_centre(env, "editor.text"))
    env.step(Action(type=ActionType.TYPE, text=env.task.type_texts[0]))
    kinds = _kinds(env)
    assert ("click", None, "click the 'File' menu") in kinds
    assert ("key", ("ctrl", "shift", "s"), "press ctrl+shift+s") in kinds
    assert ("key", ("ctrl", "s"), "press ctrl+s") in kinds  # untitled: Save opens Save As


def test_typing_the_address_or_clicking_the_link():
    env = SimEnv(task="web.shopping", preset="realistic")
    env.reset(seed=1)
    kinds = _kinds(env)
    assert ("click", None, "click the 'Shop' link") in kinds
    assert ("click", None, "click the 'Address' textbox") in kinds
    env.step(_centre(env, "addr"))
    assert ("type", None, "type 'shop.example'") in _kinds(env)


def test_either_of_two_buttons_saves_settings():
    env = SimEnv(task="desktop.change_settings", preset="coarse")
    obs = env.reset(seed=0)
    rng = random.Random(0)
    while not any(a.description == "click the 'Apply' button" for a in obs.valid_actions):
        obs = env.step(rng.choice(obs.valid_actions))[0]
    names = {a.description for a in obs.valid_actions}
    assert {"click the 'Apply' button", "click the 'OK' button"} <= names


def test_wrong_actions_lead_somewhere_real_and_escape_recovers():
    env = SimEnv(task="desktop.open_file", preset="coarse")
    env.reset(seed=1)
    before = state_key(env.state)
    obs, _, terminated, _, info = env.step(
        _centre(env, "icon.Terminal").model_copy(update={"type": ActionType.DOUBLE_CLICK}))
    assert env.state["dlg"] == "error" and info["advancing"] is False and not terminated
    assert obs.sub_goal.startswith("Get back on track")
    assert any(n.role == "dialog" for n in obs.a11y)
    escape = Action(type=ActionType.KEY, keys=("escape",))
    assert ("key", ("escape",)) in {(a.type.value, a.keys) for a in obs.valid_actions}
    assert is_advancing(env, escape)
    env.step(escape)
    assert state_key(env.state) == before


def test_wrong_folder_back_is_valid():
    env = SimEnv(task="desktop.open_file", preset="coarse")
    env.reset(seed=2)
    env.step(_centre(env, "icon.Files").model_copy(update={"type": ActionType.DOUBLE_CLICK}))
    wrong = next(f for f in env.world.content.folders if f != env.task.instruction.split(" the ")[-1].split()[0])
    env.step(_centre(env, f"item.{wrong}").model_copy(update={"type": ActionType.DOUBLE_CLICK}))
    assert env.state["folder"] == wrong
    assert ("key", ("alt", "left")) in {(a.type.value, a.keys) for a in oracle_valid_actions(env)}


def test_answer_and_terminate_are_checked_against_the_world():
    env = SimEnv(task="mobile.find_contact", preset="realistic")
    obs = env.reset(seed=4)
    # ending before the task is done fails
    _, reward, terminated, _, info = env.step(Action(type=ActionType.ANSWER, text=env.task.answer))
    assert terminated and reward == 0.0 and info["success"] is False
    obs = env.reset(seed=4)
    rng = random.Random(4)
    while obs.valid_actions[0].type is not ActionType.ANSWER:
        obs = env.step(rng.choice(obs.valid_actions))[0]
    assert not is_advancing(env, Action(type=ActionType.ANSWER, text="555-0000"))
    _, reward, terminated, _, _ = env.step(Action(type=ActionType.ANSWER, text=env.task.answer))
    assert terminated and reward == 1.0


def test_open_app_or_tap_the_icon():
    env = SimEnv(task="mobile.toggle_setting", preset="realistic")
    obs = env.reset(seed=0)
    assert {(a.type.value, a.text) for a in obs.valid_actions} >= {("click", None), ("open_app", "Settings")}
    assert not is_advancing(env, Action(type=ActionType.OPEN_APP, text="Camera"))  # a real app, the wrong one
    env.step(Action(type=ActionType.OPEN_APP, text="camera"))
    assert env.state["dlg"] == "permission"  # it asks for a permission: a real detour
    # open_app is system-wide, so it still goes straight on; the dialog's own buttons only close it
    assert ("open_app", "Settings") in {(a.type.value, a.text) for a in oracle_valid_actions(env)}
    env.step(Action(type=ActionType.BACK))
    assert env.state["dlg"] is None and env.state["app"] == "Camera"


def test_any_text_that_reaches_the_goal_state_advances():
    # the oracle lists "type 'shop.example'", but the address is normalised, so another spelling advances too
    env = SimEnv(task="web.shopping", preset="realistic")
    env.reset(seed=0)
    env.step(_centre(env, "addr"))
    assert is_advancing(env, Action(type=ActionType.TYPE, text="https://Shop.Example/"))
    assert not is_advancing(env, Action(type=ActionType.TYPE, text="shop.exampel"))


@pytest.mark.parametrize("task", MULTI)
def test_oracle_recovers_from_random_wandering(task):
    # RL policies wander: after 15 random actions (wrong apps, pages, dialogs, cart items...) the oracle must
    # still list valid actions at every step, and following them must still solve the task
    for seed in range(2):
        env = SimEnv(task=task, preset="coarse", max_steps=80)
        obs = env.reset(seed=seed)
        rng = random.Random(seed)
        for _ in range(15):
            obs, _, terminated, _, _ = env.step(rng.choice(env.oracle.candidates(env.state)))
            assert obs.valid_actions, f"{task} seed {seed}: lost at {env.state}"
        while True:
            obs, reward, terminated, truncated, _ = env.step(rng.choice(obs.valid_actions))
            if terminated or truncated:
                break
        assert reward == 1.0, f"{task} seed {seed}: not solved after wandering"
