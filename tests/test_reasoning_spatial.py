"""Spatial description of an a11y tree (InfiGUI-R1 D_spatial): text, hierarchy, filtering, frames."""

from __future__ import annotations

import pytest

from guirl.actions import Frame
from guirl.data.schema import A11yNode
from guirl.datagen.spatial import (
    SpatialOptions,
    compress_with_judge,
    describe_elements,
    region_name,
    select_elements,
)
from guirl.judges import JudgeRequest, JudgeResult

SIZE = (200, 100)


def _tree() -> list[A11yNode]:
    """A 200x100 window: an unlabelled group with two controls, decoration, hidden and off-screen nodes."""
    return [
        A11yNode(id="win", role="window", text="Main", box=(0, 0, 200, 100)),
        A11yNode(id="grp", role="group", text="", box=(0, 0, 200, 50), parent="win"),
        A11yNode(id="ok", role="button", text="OK", box=(10, 10, 50, 30), parent="grp", focused=True),
        A11yNode(id="rem", role="checkbox", text="Remember", box=(60, 10, 100, 30), parent="grp", checked=False),
        A11yNode(id="deco", role="img", text="logo", box=(150, 10, 190, 40), parent="win", enabled=False),
        A11yNode(id="hidden", role="button", text="Hidden", box=(5, 5, 5, 5), parent="win"),
        A11yNode(id="far", role="link", text="Far", box=(300, 0, 350, 20), parent="win"),
        A11yNode(id="status", role="text", text="Status: ready", box=(10, 60, 110, 90), parent="win"),
        A11yNode(id="apply", role="button", text="Apply", box=(120, 60, 180, 90), parent="win", enabled=False,
                 value="x"),
    ]


def test_relevant_elements_with_hierarchy():
    # dropped: grp (unlabelled container: OK and Remember hang under the window), deco (disabled, not
    # interactive), hidden (zero size), far (x1=300 >= width 200). Apply is kept although disabled.
    text = describe_elements(_tree(), SIZE)
    assert text == "\n".join([
        "Screen 200x100; coordinates are screen pixels [x1, y1, x2, y2], origin top left.",
        '[0] window "Main" [0, 0, 200, 100]',
        '  [1] button "OK" [10, 10, 50, 30] (focused)',
        '  [2] checkbox "Remember" [60, 10, 100, 30] (unchecked)',
        '  [3] text "Status: ready" [10, 60, 110, 90]',
        '  [4] button "Apply" [120, 60, 180, 90] (value="x", disabled)',
    ])


def test_relative_centres_and_flat_indent():
    # OK centre (30, 20) of 200x100 -> (30/200*1000, 20/100*1000) = (150, 200); window centre -> (500, 500)
    options = SpatialOptions(coords="center", frame="relative", indent=0, states=False)
    lines = describe_elements(_tree(), SIZE, options=options).splitlines()
    assert lines[0] == "Screen 200x100; coordinates are relative (x, y) centres from 0 to 1000, origin top left."
    assert lines[1] == '[0] window "Main" (500, 500)'
    assert lines[2] == '[1] button "OK" (150, 200)'
    assert lines[5] == '[4] button "Apply" (750, 750)'  # (150, 75) -> (750, 750), no "(disabled)" with states off


def test_source_frame_is_converted():
    # the same tree stored in unit coordinates (a11y_frame relative scale 1) describes identically
    unit = [n.model_copy(update={"box": (n.box[0] / 200, n.box[1] / 100, n.box[2] / 200, n.box[3] / 100)})
            for n in _tree()]
    assert describe_elements(unit, SIZE, Frame.unit()) == describe_elements(_tree(), SIZE)


def test_budget_keeps_interactive_first():
    # 5 relevant nodes; priority interactive (OK, Remember, Apply) > labelled (Status) > container (Main):
    # max 2 keeps OK and Remember; the window is cut, so both sit at depth 0; 3 are reported as cut
    elements, cut = select_elements(_tree(), SIZE, options=SpatialOptions(max_elements=2))
    assert [e.node.id for e in elements] == ["ok", "rem"] and [e.depth for e in elements] == [0, 0] and cut == 3
    text = describe_elements(_tree(), SIZE, options=SpatialOptions(max_elements=2))
    assert text.splitlines()[-1] == "... 3 more elements not listed"


def test_relevance_all_keeps_every_visible_node():
    elements, _ = select_elements(_tree(), SIZE, options=SpatialOptions(relevance="all"))
    assert [e.node.id for e in elements] == ["win", "grp", "ok", "rem", "deco", "status", "apply"]
    assert [e.depth for e in elements] == [0, 1, 2, 2, 1, 1, 1]


def test_empty_tree_and_bad_options():
    assert describe_elements([], SIZE).splitlines()[1] == "(no visible elements)"
    with pytest.raises(ValueError, match="coords"):
        SpatialOptions(coords="corner")
    with pytest.raises(ValueError, match="max_elements"):
        SpatialOptions(max_elements=0)
    with pytest.raises(ValueError, match="screen_size"):
        describe_elements(_tree(), (0, 100))


def test_region_names():
    assert region_name((0, 0, 10, 10), SIZE) == "top left"  # centre (5, 5)
    assert region_name((90, 40, 110, 60), SIZE) == "centre"  # centre (100, 50)
    assert region_name((180, 80, 200, 100), SIZE) == "bottom right"
    assert region_name((0, 40, 10, 60), SIZE) == "middle left"
    assert region_name((90, 0, 110, 10), SIZE) == "top"


class _EchoJudge:
    """A Judge that answers with a fixed verdict (the protocol: JudgeRequest -> JudgeResult)."""

    def __init__(self, result: JudgeResult):
        self.result, self.requests = result, []

    def __call__(self, request: JudgeRequest) -> JudgeResult:
        self.requests.append(request)
        return self.result


def test_judge_compression_and_fallback():
    rule_text = describe_elements(_tree(), SIZE)
    good = _EchoJudge(JudgeResult(verdict={"description": "  A dialog with OK at (30, 20).  "}))
    assert compress_with_judge(good, rule_text, "press OK") == ("A dialog with OK at (30, 20).", True)
    assert good.requests[0].role == "spatial" and rule_text in good.requests[0].prompt
    failed = _EchoJudge(JudgeResult(verdict={}, ok=False, reason="timeout"))
    assert compress_with_judge(failed, rule_text, "press OK") == (rule_text, False)
    wrong_type = _EchoJudge(JudgeResult(verdict={"description": 3}))
    assert compress_with_judge(wrong_type, rule_text, "press OK") == (rule_text, False)
