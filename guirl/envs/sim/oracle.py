"""The oracle: every valid next action (A*_t) from the world's own state.

Candidate actions are enumerated from the current screen (a click / double
click on every reachable widget, every option of a drop-down, every key the
screen binds, typing each text the task needs into the focused field, both
scroll directions of every scroll area). Each candidate is simulated on a
copy of the state. An action is *valid* when

1. it moves the task's progress on (one or more milestones, see tasks.py, or
   the task's finer measure within a milestone, e.g. fewer wrong cart items); or
2. no action does, and it starts a shortest way to progress (error recovery:
   close the dialog, go back; or scrolling towards an item), found by a
   breadth-first search over simulated states (depth <= 3, deeper only when
   the agent is far off track) plus a scroll
   probe (repeat one scroll until the list ends); or
3. it returns exactly to the last on-track state (the ``anchor``: undoing a
   wrong action with Back / Escape / Close).

At the goal the only valid action is ``terminate`` (``answer`` for questions).
Any action a policy takes is judged by its effect: it advances when the
state it leads to is one a valid action leads to (so any point inside a
valid box counts), see :meth:`Oracle.advances`.
"""

from __future__ import annotations

from dataclasses import dataclass

from guirl.actions.types import Action, ActionType
from guirl.envs.sim.engine import State, World, full_key, state_key
from guirl.envs.sim.tasks import Task

SEARCH_DEPTH = 3
DEEP_SEARCH_DEPTH = 6  # only searched when nothing is found within SEARCH_DEPTH (far off track)
SEARCH_BUDGET = 20_000  # most simulated actions per judgement
SCROLL_PROBE = 40


@dataclass
class Judgement:
    """Valid actions at one state and the states they lead to."""

    actions: list[Action]
    child_keys: set[frozenset]
    on_track: bool  # False when only recovery / search actions are valid
    target: int = 0  # the milestone (index) the valid actions work towards


class Oracle:
    """Valid-action sets and progress for one world and task."""

    def __init__(self, world: World, task: Task):
        self.world = world
        self.task = task
        self._candidates: dict[frozenset, list[Action]] = {}
        self._memo: dict[tuple, float] = {}  # (state key, p0, depth) -> steps; exact, so kept all episode
        self._budget = SEARCH_BUDGET

    # -- progress ---------------------------------------------------------------------------
    def progress(self, state: State) -> int:
        screen = None

        def visible(widget_id: str) -> bool:
            nonlocal screen
            screen = screen or self.world.screen(state)
            return screen.find(widget_id) is not None

        return self.task.progress(state, visible)

    def rank(self, state: State) -> tuple[int, int]:
        """(progress, the task's finer measure within a milestone); "moving on" means this increases."""
        return self.progress(state), self.task.refine(state) if self.task.refine else 0

    def done(self, state: State) -> bool:
        return self.progress(state) == len(self.task.milestones)

    def finish_action(self) -> Action:
        if self.task.answer is not None:
            return Action(type=ActionType.ANSWER, text=self.task.answer)
        return Action(type=ActionType.TERMINATE, status="success")

    # -- candidates ---------------------------------------------------------------------------
    def candidates(self, state: State) -> list[Action]:
        """Every action the oracle considers at ``state`` (cached per state)."""
        key = state_key(state)
        cached = self._candidates.get(key)
        if cached is not None:
            return cached
        screen = self.world.screen(state)
        frame = self.world.frame
        out: list[Action] = []
        for w in screen.widgets:
            if not w.enabled:
                continue
            x1, y1, x2, y2 = w.box
            centre = ((x1 + x2) / 2, (y1 + y2) / 2)
            box = tuple(float(v) for v in w.box)
            if w.scroll and w.scroll in screen.scroll_limits and screen.scroll_area_at(*centre) == w.scroll:
                for direction in ("down", "up"):
                    out.append(Action(type=ActionType.SCROLL, point=centre, box=box, direction=direction, frame=frame,
                                      description=f"scroll {direction} {w.scroll}"))
            if screen.hit(*centre) is not w:
                continue
            if w.click is not None:
                out.append(Action(type=ActionType.CLICK, point=centre, box=box, frame=frame, description=f"click {_name(w)}"))
            if w.double is not None and w.double != w.click:
                out.append(Action(type=ActionType.DOUBLE_CLICK, point=centre, box=box, frame=frame,
                                  description=f"double-click {_name(w)}"))
            for option in w.options or {}:
                out.append(Action(type=ActionType.SELECT, point=centre, box=box, text=option, frame=frame,
                                  description=f"select {option!r} in {_name(w)}"))
        keys = list(screen.keymap)
        if screen.type_target is not None:
            keys += [k for k in (("ctrl", "a"), ("backspace",)) if k not in screen.keymap]
            out += [Action(type=ActionType.TYPE, text=t, description=f"type {t!r}") for t in self.task.type_texts]
        if hasattr(self.world.domain, "open_app"):
            out += [Action(type=ActionType.OPEN_APP, text=app, description=f"open the {app} app")
                    for app in self.task.apps]
        for k in keys:
            if k in (("back",), ("home",)):
                out.append(Action(type=ActionType(k[0]), description=f"press {k[0]}"))
            else:
                out.append(Action(type=ActionType.KEY, keys=k, description="press " + "+".join(k)))
        if len(self._candidates) > 4096:
            self._candidates.clear()
        self._candidates[key] = out
        return out

    def children(self, state: State) -> list[tuple[Action, State]]:
        return [(a, self.world.simulate(state, a)[0]) for a in self.candidates(state)]

    # -- valid actions ----------------------------------------------------------------------------
    def judge(self, state: State, anchor: frozenset | None = None) -> Judgement:
        """The valid actions at ``state``; ``anchor`` is the state key of the last on-track state."""
        if self.done(state):
            return Judgement([self.finish_action()], set(), True, len(self.task.milestones))
        p0 = self.rank(state)
        here = state_key(state)
        children = self.children(state)
        self._budget = SEARCH_BUDGET
        chosen = [(a, s) for a, s in children if self.rank(s) > p0]
        on_track = bool(chosen)
        if not chosen:
            memo = self._memo
            if len(memo) > 200_000:
                memo.clear()
            # iterative deepening: a child whose true cost is <= depth is costed exactly at that depth
            for depth in range(1, DEEP_SEARCH_DEPTH):
                costs = [float("inf") if state_key(s) == here else self._steps(s, p0, depth, memo)
                         for _, s in children]
                best = min(costs, default=float("inf"))
                if best <= depth or (depth >= SEARCH_DEPTH - 1 and best < float("inf")):
                    break  # exact, or far off track: the first way found beyond the usual depth
            chosen = [(a, s) for (a, s), c in zip(children, costs) if c == best and c < float("inf")]
        if self._budget <= 0:  # costs cut short by the budget are not exact: do not keep them
            self._memo.clear()
        if anchor is not None and anchor != here:
            chosen += [(a, s) for a, s in children if state_key(s) == anchor and all(a is not b for b, _ in chosen)]
        target = max((self.progress(s) for _, s in chosen), default=p0[0] + 1) - 1 if on_track else p0[0]
        return Judgement([a for a, _ in chosen], {full_key(s) for _, s in chosen}, on_track, target)

    def _steps(self, state: State, p0: tuple[int, int], depth: int, memo: dict[tuple, float]) -> float:
        """Fewest actions from ``state`` to progress beyond ``p0`` (inf beyond the search depth)."""
        key = (state_key(state), p0, depth)
        if key in memo:
            return memo[key]
        memo[key] = float("inf")  # guards cycles
        if self.rank(state) > p0:
            memo[key] = 0
            return 0
        if self._budget <= 0:  # searched enough for this step: leave this branch uncosted
            del memo[key]
            return float("inf")
        children = self.children(state)
        self._budget -= len(children)
        best = float("inf")
        if any(self.rank(s) > p0 for _, s in children):
            best = 1
        else:
            best = min(best, self._scroll_probe(state, p0))
            if depth > 1:
                here = state_key(state)
                seen: set[tuple] = {here}
                for _, s in children:
                    k = state_key(s)
                    if k not in seen:
                        seen.add(k)
                        best = min(best, 1 + self._steps(s, p0, depth - 1, memo))
        memo[key] = best
        return best

    def _scroll_probe(self, state: State, p0: tuple[int, int]) -> float:
        best = float("inf")
        for action in self.candidates(state):
            if action.type is not ActionType.SCROLL:
                continue
            current = state
            for k in range(1, SCROLL_PROBE + 1):
                nxt = self.world.simulate(current, action)[0]
                if state_key(nxt) == state_key(current):
                    break
                current = nxt
                if self.rank(current) > p0:
                    best = min(best, k)
                    break
        return best

    def advances(self, state: State, action: Action, anchor: frozenset | None = None,
                 judgement: Judgement | None = None) -> bool:
        """Whether ``action`` at ``state`` is valid: it leads where a valid action leads."""
        judgement = judgement or self.judge(state, anchor)
        if action.type in (ActionType.TERMINATE, ActionType.ANSWER):
            return self.finish_correct(state, action)
        if self.done(state):
            return False
        child, _ = self.world.simulate(state, action)
        return full_key(child) in judgement.child_keys or self.rank(child) > self.rank(state)

    def finish_correct(self, state: State, action: Action) -> bool:
        """Whether ending the episode with ``action`` here is a success."""
        if not self.done(state):
            return False
        if self.task.answer is not None:
            return action.type is ActionType.ANSWER and _norm(action.text) == _norm(self.task.answer)
        return action.type is ActionType.TERMINATE and action.status != "failure"


def _name(widget) -> str:
    return f"the '{widget.text}' {widget.role}" if widget.text else f"the {widget.role}"


def _norm(text: str | None) -> str:
    return " ".join((text or "").lower().replace("-", " ").split())
