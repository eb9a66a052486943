"""InfiGUI-R1 stage 1 on a hand-built dataset: bottleneck steps, rejection sampling, oracle and judge teachers."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from guirl.actions import Action, ActionType, Frame, ParseFailure, format_action
from guirl.data import read_episodes, write_episodes
from guirl.data.schema import A11yNode, Episode, HistoryItem, ImageRef, Step, StepLabel
from guirl.datagen.bottleneck import decide, find_bottlenecks, with_subgoal
from guirl.datagen.reasoning import ReasoningDataConfig, build_reasoning_data
from guirl.datagen.spatial import SpatialOptions
from guirl.datagen.teachers import JudgeTeacher, OracleTeacher, TeacherInput, TeacherOutput
from guirl.judges import JudgeRequest, JudgeResult

W, H = 200, 100
SCREEN = Frame.screen(W, H)


def _click(box, text: str) -> Action:
    return Action(type=ActionType.CLICK, box=box, point=((box[0] + box[2]) / 2, (box[1] + box[3]) / 2),
                  description=f"click the '{text}' element", frame=SCREEN)


NETWORK, WIFI, SAVE, CLOSE = (10, 10, 50, 30), (60, 40, 100, 60), (120, 70, 180, 90), (150, 5, 190, 25)
WRONG = Action(type=ActionType.CLICK, point=(199, 99), frame=SCREEN)  # inside the window only
GOLD = {  # (goal, steps done) -> the action the "gold" policies answer with
    ("Turn on Wi-Fi and save.", 0): _click(NETWORK, "Network"),
    ("Turn on Wi-Fi and save.", 1): _click(WIFI, "Wi-Fi"),
    ("Turn on Wi-Fi and save.", 2): _click(SAVE, "Save"),
    ("Close the dialog.", 0): _click(CLOSE, "Close"),
    ("Close the dialog.", 1): _click(CLOSE, "Close"),
}


def _a11y() -> list[A11yNode]:
    return [
        A11yNode(id="win", role="window", text="Settings", box=(0, 0, W, H)),
        A11yNode(id="net", role="tab", text="Network", box=NETWORK, parent="win"),
        A11yNode(id="wifi", role="switch", text="Wi-Fi", box=WIFI, parent="win", checked=False),
        A11yNode(id="save", role="button", text="Save", box=SAVE, parent="win"),
        A11yNode(id="close", role="button", text="Close", box=CLOSE, parent="win"),
    ]


def _episode(root: Path, ep_id: str, goal: str, specs: list[tuple[str | None, list[Action], StepLabel]]) -> Episode:
    steps, history = [], []
    for index, (sub_goal, valid, label) in enumerate(specs):
        rel = f"shots/{ep_id}-{index}.png"
        (root / "shots").mkdir(exist_ok=True)
        Image.new("RGB", (W, H), (index * 40, 90, 160)).save(root / rel)
        ref = ImageRef(path=rel, width=W, height=H)
        steps.append(Step(index=index, screenshot=ref, history=list(history), valid_actions=valid, action=valid[0],
                          a11y=_a11y(), sub_goal=sub_goal, label=label))
        history.append(HistoryItem(action=valid[0], description=valid[0].description, screenshot=ref))
    return Episode(id=ep_id, instruction=goal, steps=steps, source="test")


@pytest.fixture()
def dataset(tmp_path) -> tuple[list[Episode], Path]:
    ok = StepLabel.CORRECT
    episodes = [
        _episode(tmp_path, "ep-a", "Turn on Wi-Fi and save.", [
            ("Open the Network tab", [GOLD[("Turn on Wi-Fi and save.", 0)]], ok),
            ("Switch Wi-Fi on", [GOLD[("Turn on Wi-Fi and save.", 1)]], ok),
            ("Save the settings", [Action(type=ActionType.KEY, keys=("enter",)), GOLD[("Turn on Wi-Fi and save.", 2)]],
             ok),
        ]),
        _episode(tmp_path, "ep-b", "Close the dialog.", [
            (None, [GOLD[("Close the dialog.", 0)]], ok),  # no sub-goal: cannot be a bottleneck
            ("Close it", [GOLD[("Close the dialog.", 1)]], StepLabel.ERROR),  # a recorded mistake: not eligible
        ]),
    ]
    write_episodes(tmp_path / "in.jsonl", episodes)
    return read_episodes(tmp_path / "in.jsonl"), tmp_path


def _gold(instruction: str, history) -> Action:
    goal = instruction.split("\nCurrent sub-goal:")[0]
    return GOLD[(goal, len(history))]


def needs_subgoal(instruction, screenshot, history):
    return _gold(instruction, history) if "Current sub-goal:" in instruction else WRONG


def always_right(instruction, screenshot, history):
    return _gold(instruction, history)


def always_wrong(instruction, screenshot, history):
    return ParseFailure(reason="no action")


def test_bottlenecks_with_deterministic_policies(dataset):
    episodes, root = dataset
    report = find_bottlenecks(needs_subgoal, episodes, root)
    # 5 steps: ep-b/0 has no sub-goal, ep-b/1 is an ERROR step; the 3 ep-a steps fail without and pass with
    assert report.keys() == {("ep-a", 0), ("ep-a", 1), ("ep-a", 2)}
    assert report.counts == {"bottleneck/steps_seen": 5, "bottleneck/not_eligible": 1, "bottleneck/no_subgoal": 1,
                             "bottleneck/checked": 3, "bottleneck/solved_without_subgoal": 0,
                             "bottleneck/bottlenecks": 3, "bottleneck/policy_calls": 6}
    right = find_bottlenecks(always_right, episodes, root)
    assert right.keys() == set() and right.counts["bottleneck/solved_without_subgoal"] == 3
    assert right.counts["bottleneck/policy_calls"] == 3  # solved without the sub-goal: second condition skipped
    wrong = find_bottlenecks(always_wrong, episodes, root)
    assert wrong.keys() == set() and wrong.counts["bottleneck/policy_calls"] == 6
    assert [r.correct_with for r in wrong.records] == [0, 0, 0]


def test_bottleneck_only_where_subgoal_is_the_missing_piece(dataset):
    episodes, root = dataset

    def only_step_one(instruction, screenshot, history):  # knows steps 0 and 2 anyway
        return needs_subgoal(instruction, screenshot, history) if len(history) == 1 else always_right(
            instruction, screenshot, history)

    assert find_bottlenecks(only_step_one, episodes, root).keys() == {("ep-a", 1)}
    assert find_bottlenecks(only_step_one, episodes, root, max_steps=1).counts["bottleneck/checked"] == 1


class CyclingPolicy:
    """Without the sub-goal right 1 in 3 samples, with it 2 in 3 (cycles restart per step and condition)."""

    def __init__(self):
        self.calls = {False: 0, True: 0}

    def __call__(self, instruction, screenshot, history):
        guided = "Current sub-goal:" in instruction
        hits = (True, True, False) if guided else (True, False, False)
        hit = hits[self.calls[guided] % 3]
        self.calls[guided] += 1
        return _gold(instruction, history) if hit else WRONG


@pytest.mark.parametrize(("rule", "expected"), [("majority", 3), ("any", 0), ("all", 0)])
def test_k_samples_and_rules(dataset, rule, expected):
    # k=3: without 1/3, with 2/3. majority: not 2*1>3, 2*2>3 -> bottleneck; any: 1>0 already right without;
    # all: with 2 != 3 -> not correct with the sub-goal
    episodes, root = dataset
    report = find_bottlenecks(CyclingPolicy(), episodes, root, samples=3, rule=rule)
    assert report.counts["bottleneck/bottlenecks"] == expected


def test_sampling_policy_is_called_once_per_condition(dataset):
    episodes, root = dataset

    class Batched:
        def __init__(self):
            self.calls = []

        def sample(self, instruction, screenshot, history, num_samples):
            self.calls.append(num_samples)
            return [needs_subgoal(instruction, screenshot, history)] * num_samples

        def __call__(self, instruction, screenshot, history):
            raise AssertionError("a SamplingPolicy is sampled in one call")

    policy = Batched()
    assert len(find_bottlenecks(policy, episodes, root, samples=4).keys()) == 3
    assert policy.calls == [4] * 6


def test_decide_and_prompt():
    assert decide(2, 3, "majority") and not decide(2, 4, "majority") and decide(1, 4, "any") and not decide(3, 4, "all")
    with pytest.raises(ValueError, match="majority"):
        decide(1, 1, "most")
    assert with_subgoal("Buy tea.", "Open the shop") == "Buy tea.\nCurrent sub-goal: Open the shop"


class ScriptedTeacher:
    """Wrong on known steps: ep-a/0 only on attempt 0; ep-a/1 writes no reasoning; ep-a/2 always wrong."""

    def __init__(self):
        self.inputs: list[TeacherInput] = []

    def __call__(self, inp: TeacherInput) -> TeacherOutput:
        self.inputs.append(inp)
        key = (inp.episode.id, inp.step.index)
        right = GOLD[(inp.goal, inp.step.index)]
        if (key == ("ep-a", 0) and inp.attempt == 0) or key == ("ep-a", 2):
            return TeacherOutput(f"wrong at {key}", WRONG)
        if key == ("ep-a", 1):
            return TeacherOutput(None, right)
        return TeacherOutput(f"reasoning for {key} attempt {inp.attempt}", right)


def test_rejection_sampling_keeps_exactly_correct_pairs(dataset, tmp_path):
    episodes, root = dataset
    teacher = ScriptedTeacher()
    out = tmp_path / "out" / "episodes.jsonl"
    metrics = build_reasoning_data(episodes, root, out, teacher, config=ReasoningDataConfig(attempts=2))
    # teacher steps: ep-a/0,1,2 and ep-b/0 (ep-b/1 is an ERROR step). attempts: 2 + 2 + 2 + 1 = 7;
    # kept: ep-a/0 (attempt 1) and ep-b/0 -> acceptance 2/7, per step 2/4
    assert metrics["reasoning/teacher_steps"] == 4 and metrics["reasoning/teacher_attempts"] == 7
    assert metrics["reasoning/kept"] == 2 and metrics["reasoning/rejected_no_reasoning"] == 2
    assert metrics["reasoning/rejected_wrong_action"] == 3 and metrics["reasoning/not_eligible"] == 1
    assert metrics["reasoning/acceptance_rate"] == pytest.approx(2 / 7)
    assert metrics["reasoning/step_acceptance_rate"] == pytest.approx(0.5)
    kept = read_episodes(out)  # images copied under out/: read_episodes checks they exist
    assert [(e.id, [s.index for s in e.steps]) for e in kept] == [("ep-a", [0]), ("ep-b", [0])]
    step = kept[0].steps[0]
    assert step.reasoning == "reasoning for ('ep-a', 0) attempt 1" and step.action == GOLD[(kept[0].instruction, 0)]
    assert step.extra["reasoning_data"] == {"teacher": "teacher", "attempt": 1, "bottleneck": False}
    assert (out.parent / step.screenshot.path).is_file()
    assert teacher.inputs[0].sub_goal == "Open the Network tab" and '"Network"' in teacher.inputs[0].spatial
    # one attempt: only ep-b/0 survives
    single = build_reasoning_data(episodes, root, tmp_path / "one" / "e.jsonl", ScriptedTeacher())
    assert single["reasoning/kept"] == 1 and single["reasoning/teacher_attempts"] == 4


def test_only_bottleneck_steps_and_relative_images(dataset, tmp_path):
    episodes, root = dataset
    out = tmp_path / "rel" / "episodes.jsonl"
    config = ReasoningDataConfig(attempts=2, images="relative", teacher_subgoal=False, keep_spatial=True,
                                 spatial=SpatialOptions(frame="relative"))
    teacher = ScriptedTeacher()
    metrics = build_reasoning_data(episodes, root, out, teacher, config=config, only={("ep-a", 0)})
    assert metrics["reasoning/kept"] == 1 and metrics["reasoning/not_bottleneck"] == 3
    assert all(inp.sub_goal is None for inp in teacher.inputs)
    step = read_episodes(out)[0].steps[0]
    assert step.screenshot.path.startswith("../") and step.history == []
    assert step.extra["reasoning_data"]["bottleneck"] is True and "relative" in step.extra["reasoning_data"]["spatial"]


def test_oracle_teacher_reasoning_names_the_target(dataset, tmp_path):
    episodes, root = dataset
    out = tmp_path / "oracle" / "episodes.jsonl"
    metrics = build_reasoning_data(episodes, root, out, OracleTeacher(seed=0), teacher_name="oracle")
    assert metrics["reasoning/kept"] == 4 and metrics["reasoning/acceptance_rate"] == 1.0
    kept = {(e.id, s.index): s for e in read_episodes(out) for s in e.steps}
    assert "'Network' tab" in kept[("ep-a", 0)].reasoning and "top left" in kept[("ep-a", 0)].reasoning
    assert "open the Network tab" in kept[("ep-a", 0)].reasoning  # the sub-goal is the intent
    assert "'Wi-Fi' switch" in kept[("ep-a", 1)].reasoning
    # "Save the settings" fits the Save button better than the Enter key (1 shared word vs 0)
    assert kept[("ep-a", 2)].action.type is ActionType.CLICK and "'Save' button" in kept[("ep-a", 2)].reasoning
    assert kept[("ep-a", 1)].history[0].screenshot.path == "shots/ep-a-0.png"  # history images follow the copy


def test_oracle_phrasing_is_seeded(dataset):
    episodes, _ = dataset
    step = episodes[0].steps[1]

    def text(seed: int, attempt: int = 0) -> str:
        inp = TeacherInput(episodes[0], step, episodes[0].instruction, step.sub_goal, "", SCREEN, None, attempt)
        return OracleTeacher(seed=seed)(inp).reasoning

    assert text(3) == text(3)
    assert len({text(seed) for seed in range(8)}) > 1
    with_coords = OracleTeacher(coords="screen")(TeacherInput(episodes[0], step, "g", "s", "", SCREEN, None))
    assert "(80, 50) in screen pixels" in with_coords.reasoning  # Wi-Fi box centre


def test_compact_oracle_reasoning_keeps_the_spatial_part_only(dataset):
    """The compact style names the next step, the target element and its place, and the action; it restates
    neither the goal nor the screen's windows, and is shorter than the full text on every step."""
    episodes, _ = dataset
    for step in episodes[0].steps:
        inp = TeacherInput(episodes[0], step, episodes[0].instruction, step.sub_goal, "", SCREEN, None)
        full, compact = OracleTeacher(seed=0)(inp), OracleTeacher(seed=0, style="compact")(inp)
        assert compact.action == full.action and len(compact.reasoning) < len(full.reasoning)
        assert episodes[0].instruction not in compact.reasoning and "screen shows" not in compact.reasoning.lower()
    first = episodes[0].steps[0]
    inp = TeacherInput(episodes[0], first, episodes[0].instruction, first.sub_goal, "", SCREEN, None)
    compact = OracleTeacher(seed=0, style="compact")(inp).reasoning
    assert "open the Network tab" in compact and "'Network' tab" in compact and "top left" in compact
    with pytest.raises(ValueError, match="style must be"):
        OracleTeacher(style="short")


def test_judge_teacher_reads_the_description_frame(dataset, tmp_path):
    episodes, root = dataset

    def judge(request: JudgeRequest) -> JudgeResult:
        # answers in the description's relative 0-1000 frame: Network tab centre (30, 20) -> (150, 200)
        action = Action(type=ActionType.CLICK, point=(150, 200), frame=Frame.relative(1000))
        text = format_action(action, "qwen_computer_use")
        if "Network" not in request.prompt or request.fields["goal"] != "Turn on Wi-Fi and save.":
            return JudgeResult(verdict={}, ok=False, reason="unexpected prompt")
        return JudgeResult(verdict={"reasoning": "The Network tab is at the top left.", "action": text})

    config = ReasoningDataConfig(spatial=SpatialOptions(frame="relative"))
    metrics = build_reasoning_data(episodes, root, tmp_path / "j" / "e.jsonl", JudgeTeacher(judge), config=config,
                                   only={("ep-a", 0), ("ep-a", 1), ("ep-b", 0)})
    # ep-a/0 is correct; ep-a/1 (Wi-Fi) is missed by the same click; on ep-b/0 the judge fails (ok=False)
    assert metrics["reasoning/kept"] == 1 and metrics["reasoning/rejected_wrong_action"] == 1
    assert metrics["reasoning/rejected_no_reasoning"] == 1
    assert read_episodes(tmp_path / "j" / "e.jsonl")[0].steps[0].action.point == pytest.approx((30, 20))


def test_student_format_rejects_unwritable_targets(tmp_path):
    # the only valid action is open_app, which qwen_computer_use cannot write: the oracle falls back to it and the
    # pair is rejected; with qwen_mobile_use (which has open_app) it is kept
    open_app = Action(type=ActionType.OPEN_APP, text="Contacts", description="open the Contacts app")
    episode = _episode(tmp_path, "ep-c", "Open Contacts.", [("Open Contacts", [open_app], StepLabel.CORRECT)])
    for fmt, kept in (("qwen_computer_use", 0), ("qwen_mobile_use", 1)):
        config = ReasoningDataConfig(student_format=fmt)
        metrics = build_reasoning_data([episode], tmp_path, tmp_path / fmt / "e.jsonl", OracleTeacher(fmt=fmt),
                                       config=config)
        assert metrics["reasoning/kept"] == kept and metrics["reasoning/rejected_unwritable"] == 1 - kept


def test_a_model_teacher_reads_past_steps_as_its_policy_was_trained_to():
    """A :class:`ModelTeacher` over the history-reading agent (its spec: ``history_text: action``) sees a past step
    as its action, not the raw output (thought included) the step was recorded with."""
    from guirl.datagen.teachers import ModelTeacher
    from guirl.models.load import load_policy

    policy = load_policy(Path(__file__).resolve().parents[1] / "checkpoints" / "base-agent-history-tiny")
    assert policy.prompt.history_text == "action"
    past = HistoryItem(action=_click((10, 10, 50, 30), "OK"), output="<think>a private thought</think> click OK")
    step = Step(index=1, history=[past], screenshot=ImageRef(path="x.png", width=W, height=H),
                action=_click((10, 10, 50, 30), "OK"))
    episode = Episode(id="e", instruction="Press OK.", steps=[step])
    image = Image.new("RGB", (W, H), "white")
    messages, _ = ModelTeacher(policy).prompt(TeacherInput(episode, step, "Press OK.", None, "", SCREEN, image))
    said = " ".join(part.get("text", "") for m in messages for part in m["content"] if isinstance(m["content"], list))
    assert "a private thought" not in said and "Step 1:" in said and "left_click" in said
