"""``guirl rl-demo`` end to end on a fresh tiny model (a few steps): scores before/after, the report, CLI errors."""

from __future__ import annotations

from models_fixtures import tiny_model_dir

from guirl.cli import main


def test_rl_demo_runs_and_writes_the_report(tmp_path, capsys):
    out = tmp_path / "demo"
    code = main(["rl-demo", "--out", str(out), "--model", str(tiny_model_dir("qwen3_vl")), "--steps", "2",
                 "--heldout", "6", "--heldout-episodes", "1", "max_new_tokens=8", "batch_size=2", "group_size=2", "num_threads=1"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "before: held-out step success" in printed and "after GRPO" in printed and "paired 95% CI" in printed
    html = (out / "report.html").read_text()
    assert "held-out multi-step steps" in html and html.count("data:image/png;base64") >= 2
    assert (out / "run" / "final" / "model.safetensors").is_file()


def test_rl_demo_names_a_missing_model(tmp_path, capsys):
    assert main(["rl-demo", "--out", str(tmp_path), "--model", str(tmp_path / "nope")]) == 2
    assert "is not a model directory" in capsys.readouterr().err


def test_rl_demo_without_training_pairs_the_same_steps(tmp_path, capsys):
    """--steps 0 evaluates the start twice on the same held-out steps: the paired difference is exactly 0."""
    out = tmp_path / "demo"
    code = main(["rl-demo", "--out", str(out), "--model", str(tiny_model_dir("qwen3_vl")), "--steps", "0",
                 "--heldout", "8", "--heldout-episodes", "1", "max_new_tokens=8", "num_threads=1"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "difference  +0.000  paired 95% CI [+0.000, +0.000]" in printed, printed
    assert not (out / "run" / "final").exists()
