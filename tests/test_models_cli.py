"""``guirl init-model`` and ``guirl demo`` smoke runs (real tiny models, CPU, offline)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from models_fixtures import tiny_model_dir
from PIL import Image
from transformers import AutoModelForImageTextToText, AutoProcessor

from guirl.actions import Action, ActionType, Frame, ParseFailure
from guirl.cli import main
from guirl.commands import demo, init_model


def test_init_model_writes_a_loadable_directory(tmp_path, capsys):
    assert main(["init-model", "--arch", "qwen2_5_vl", "--size", "tiny", "--out", str(tmp_path), "--seed", "1"]) == 0
    assert "qwen2_5_vl" in capsys.readouterr().out
    processor = AutoProcessor.from_pretrained(tmp_path, local_files_only=True)
    model = AutoModelForImageTextToText.from_pretrained(tmp_path, local_files_only=True)
    assert model.config.model_type == "qwen2_5_vl" and processor.image_processor.patch_size == 14
    # the directory now holds a model: building over it is refused unless asked for
    capsys.readouterr()
    assert main(["init-model", "--out", str(tmp_path)]) == 2
    assert re.fullmatch(r"guirl init-model: error: --out .* already holds a model \(config.json\).*--overwrite.*\n",
                        capsys.readouterr().err)
    assert main(["init-model", "--out", str(tmp_path), "--overwrite"]) == 0


def test_every_argument_has_help():
    import argparse

    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    for module in (init_model, demo):
        module.add_parser(subparsers)
    for verb, sub in subparsers.choices.items():
        for action in sub._actions:
            assert action.help, f"guirl {verb} {action.option_strings} has no help text"
    # and the real entry point prints it
    result = subprocess.run(
        [sys.executable, "-m", "guirl", "init-model", "--help"],
        capture_output=True,
        text=True,
        env=dict(os.environ, HF_HUB_OFFLINE="1"),
        check=True,
    )
    assert "--max-visual-tokens" in result.stdout and "qwen3_vl" in result.stdout


def test_demo_runs_and_saves_the_screenshot(tmp_path, capsys):
    model = str(tiny_model_dir("qwen3_vl"))
    assert main(["demo", "--out", str(tmp_path), "--model", model, "--max-new-tokens", "16", "--screens", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count("raw output:") == 2 and ("action (screen pixels):" in out or "no valid action" in out)
    assert "correct (one of the" in out and "/2 right" in out
    for i in range(2):
        image = Image.open(tmp_path / f"screen_{i}.png")
        assert image.size == (512, 512)


def test_demo_builds_a_model_when_none_is_given(tmp_path, capsys):
    args = ["demo", "--out", str(tmp_path), "--arch", "qwen2_5_vl", "--max-new-tokens", "8", "--untrained"]
    assert main(args + ["--screens", "1"]) == 0
    assert (tmp_path / "model-qwen2_5_vl" / "config.json").is_file()
    assert "building an untrained tiny qwen2_5_vl model" in capsys.readouterr().out


def test_demo_names_a_missing_model(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--model", str(tmp_path / "nothing")]) == 2
    assert "init-model" in capsys.readouterr().err


def test_mark_point_draws_at_the_screen_point():
    screen = Image.new("RGB", (100, 50), "white")
    click = Action(type=ActionType.CLICK, point=(30, 20), frame=Frame.screen(100, 50))
    marked = demo.mark_point(screen, click)
    # a ring of radius 6 around (30, 20): its rightmost edge passes (36, 20), its centre stays white
    assert marked.getpixel((36, 20)) != (255, 255, 255) and marked.getpixel((30, 20)) == (255, 255, 255)
    assert demo.mark_point(screen, ParseFailure(reason="x")).tobytes() == screen.tobytes()
