"""benchmarks/grounding_errors.py and base_agent_vision_levers.py: a miss is classed by where its point lands;
a vision lever's config changes only what it names."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import base_agent_vision_levers  # noqa: E402
import grounding_errors  # noqa: E402

from guirl.actions import Action, Frame, ParseFailure  # noqa: E402
from guirl.data import A11yNode, ImageRef, Step  # noqa: E402
from guirl.matching.step import match_action  # noqa: E402


def _screen() -> Step:
    ok = Action(type="click", point=(50, 50), box=(20, 20, 80, 80), frame=Frame.screen(512, 512))
    nodes = [A11yNode(id="w", role="window", text="Desktop", box=(0, 0, 512, 512)),
             A11yNode(id="ok", role="button", text="OK", box=(20, 20, 80, 80)),
             A11yNode(id="no", role="button", text="Cancel", box=(200, 20, 260, 80))]
    return Step(index=0, screenshot=ImageRef(path="x.png", width=512, height=512), valid_actions=[ok], a11y=nodes)


def test_a_miss_on_another_element_and_one_between_elements():
    step = _screen()
    # 0-1000 frame: (449, 98) is (230, 50) on the 512 px screen, inside Cancel, 150 px right of OK's box
    on_cancel = Action(type="click", point=(449, 98), frame=Frame.relative(1000))
    kind, distance = grounding_errors.classify(on_cancel, match_action(on_cancel, step.valid_actions, screen_size=(512, 512)), step)
    assert kind == "another element" and abs(distance - 150) < 1
    # (150, 300) on screen: inside only the full-screen window (a container), 220 px below and 70 right of OK
    between = Action(type="click", point=(150, 300), frame=Frame.screen(512, 512))
    kind, distance = grounding_errors.classify(between, match_action(between, step.valid_actions, screen_size=(512, 512)), step)
    assert kind == "no element" and abs(distance - (70 ** 2 + 220 ** 2) ** 0.5) < 1
    typed = Action(type="type", text="OK")
    assert grounding_errors.classify(typed, match_action(typed, step.valid_actions, screen_size=(512, 512)), step) == ("wrong type", None)
    garbage = ParseFailure(raw="click somewhere", reason="no tool call")
    assert grounding_errors.classify(garbage, match_action(typed, step.valid_actions, screen_size=(512, 512)), step)[0] == "unparsed"


def test_vision_lever_config_changes_only_its_fields(tmp_path):
    lever = base_agent_vision_levers.LEVERS["vision_wide_deep"]
    cfg = yaml.safe_load(base_agent_vision_levers.config_of("v", lever, tmp_path, 8, 5, 1).read_text())
    assert [(s["data"], s["max_steps"]) for s in cfg["stages"]] == [("locate", 8), ("grounding", 5)]
    assert cfg["size_overrides"] == {"vision_depth": 5, "vision_hidden": 192, "vision_intermediate": 384}
    assert cfg["size"] == "tiny" and "max_visual_tokens" not in cfg and cfg["output_dir"] == str(tmp_path / "v")
    res = yaml.safe_load(base_agent_vision_levers.config_of("r", base_agent_vision_levers.LEVERS["res144"], tmp_path,
                                                            8, 5, 1).read_text())
    assert res["max_visual_tokens"] == 144 and "size_overrides" not in res
