"""One error path and one vocabulary for ``guirl`` (docs/cli.md).

Each class of user error is run as a real ``guirl`` subprocess: it must exit with status 2 and write one line,
``guirl <verb>: error: ...``, with no traceback. Then: the deprecated spellings still work and warn, the
hyphenated train methods, recipe hints read from the recipes' own first lines, and the config a checkpoint
was trained with.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from guirl.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error", "GUIRL_DEBUG": ""}


def guirl(*argv: str, block: tuple[str, ...] = (), timeout: float = 180) -> subprocess.CompletedProcess:
    """``python -m guirl ARGV``; ``block``: modules made unimportable first (an optional extra not installed)."""
    if block:
        code = (f"import sys; sys.modules.update(dict.fromkeys({list(block)!r})); from guirl.cli import main; "
                "sys.exit(main(sys.argv[1:]))")
        cmd = [sys.executable, "-c", code, *argv]
    else:
        cmd = [sys.executable, "-m", "guirl", *argv]
    return subprocess.run(cmd, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=timeout)


def assert_one_error_line(proc: subprocess.CompletedProcess, verb: str, *needles: str) -> str:
    """Exit 2, no traceback, and exactly one ``guirl VERB: error:`` line, the last line on stderr (loaders may
    print progress bars before it)."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if ": error: " in line]
    assert len(errors) == 1, proc.stderr
    line = errors[0]
    assert line.startswith(f"guirl {verb}: error: "), line
    assert proc.stderr.rstrip("\n").splitlines()[-1] == line
    for needle in needles:
        assert needle in line, (needle, line)
    return line


# -- one error path, one test per error class ---------------------------------------------------------------------
def test_argparse_errors_are_one_line():
    assert_one_error_line(guirl("gen-data"), "gen-data", "the following arguments are required: --out")
    assert_one_error_line(guirl("train", "dance"), "train", "invalid choice: 'dance'")
    assert_one_error_line(guirl("eval", "online", "--bogus"), "eval online", "unrecognized arguments: --bogus")


def test_a_bad_value_is_one_line(tmp_path):
    # one of the former `raise SystemExit("...")` sites (exit 1, no prefix)
    assert_one_error_line(guirl("gen-data", "--out", str(tmp_path / "d"), "--domains", "tv"), "gen-data",
                          "--domains: unknown ['tv']")


def test_a_missing_input_file_is_one_line(tmp_path):
    proc = guirl("reasoning-data", "--episodes", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "o"))
    assert_one_error_line(proc, "reasoning-data", "--episodes:", "does not exist")


def test_a_malformed_key_value_option_is_one_line():
    proc = guirl("eval", "online", "--env", "sim", "--policy", "scripted", "--env-arg", "domain")
    assert_one_error_line(proc, "eval online", "--env-arg 'domain' must look like KEY=VALUE")


def test_a_wrong_judge_argument_is_one_line(tmp_path):
    proc = guirl("eval", "judge", "--episodes", str(tmp_path / "e.jsonl"), "--judge", "rule_outcome",
                 "--judge-arg", "nope=1", "--out", str(tmp_path / "o"))
    assert_one_error_line(proc, "eval judge", "--judge rule_outcome --judge-arg nope=1:", "nope")


def test_a_bad_config_override_is_one_line():
    proc = guirl("train", "sft", "--config", "recipes/sft_tiny.yaml", "max_steps=-1")
    assert_one_error_line(proc, "train sft", "max_steps", "greater than 0")


def test_an_unwritable_out_is_one_line(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    proc = guirl("gen-data", "--out", str(blocker / "sub"))
    assert_one_error_line(proc, "gen-data", f"--out {blocker / 'sub'}: cannot create it", "is a file")
    proc = guirl("train", "sft", "--config", "recipes/sft_tiny.yaml", f"output_dir={blocker}")
    assert_one_error_line(proc, "train sft", f"output_dir {blocker}: is a file")


def test_a_missing_extra_names_it():
    # an environment an extra provides (miniwob): named before anything runs
    proc = guirl("eval", "online", "--env", "miniwob", "--policy", "scripted", block=("miniwob",))
    assert_one_error_line(proc, "eval online", "environment 'miniwob' needs miniwob", "pip install -e '.[miniwob]'")


def test_the_ray_backend_without_ray_names_the_extra(tmp_path):
    proc = guirl("train", "computersd", "--config", "recipes/computersd_tiny.yaml", "env_backend=ray",
                 f"output_dir={tmp_path / 'run'}", "model=checkpoints/base-agent-tiny", "eval_episodes=0",
                 block=("ray",))
    assert_one_error_line(proc, "train computersd", "env_backend=ray", "pip install -e '.[ray]'")


@pytest.fixture(scope="module")
def verify_project(tmp_path_factory) -> Path:
    from guirl.datagen.verify_app.sample import write_sample_project

    return write_sample_project(tmp_path_factory.mktemp("verify") / "project", steps=2)


def test_a_port_in_use_is_one_line(verify_project):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = guirl("datagen", "verify", "--data", str(verify_project), "--port", str(port),
                     "--db", str(verify_project / "port.sqlite"))
    assert_one_error_line(proc, "datagen verify", f"--port {port}: 127.0.0.1:{port} is in use", "--port 0")
    assert not (verify_project / "port.sqlite").exists()  # refused before the database is created


def test_a_sqlite_wal_refusal_is_one_line(verify_project):
    # SQLite keeps an in-memory database out of WAL mode, as it does a database on some network file systems
    proc = guirl("datagen", "verify", "--data", str(verify_project), "--db", ":memory:")
    assert_one_error_line(proc, "datagen verify", "--db :memory:", "SQLite refused WAL mode")


def test_resuming_with_a_changed_config_is_refused_naming_the_fields(tmp_path):
    from guirl.config import load_config
    from guirl.trainers.checkpoint import STATE
    from guirl.trainers.sft import SFTConfig

    run = tmp_path / "run"
    recipe = "recipes/sft_tiny.yaml"
    saved = load_config(SFTConfig, ROOT / recipe, [f"output_dir={run}"]).model_dump(mode="json")
    saved["optim"]["lr"] = 0.5
    saved["batch_size"] += 1
    checkpoint = run / "checkpoints" / "step_00000002"
    checkpoint.mkdir(parents=True)
    (checkpoint / STATE).write_text(json.dumps({"step": 2, "history": [], "config": saved}))
    proc = guirl("train", "sft", "--config", recipe, f"output_dir={run}", "num_threads=1")  # threads may change
    line = assert_one_error_line(proc, "train sft", "step_00000002", "--allow-config-change")
    assert "batch_size: " in line and "optim.lr: 0.5 -> " in line and "num_threads" not in line


# -- the deprecated spellings, the train methods, recipe hints ----------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "expected", "old", "new"),
    [
        (["eval", "live", "--judge", "ground_truth", "--out", "o", "--policy", "scripted", "--episodes", "3"],
         {"episodes_per_task": 3}, "--episodes", "--episodes-per-task"),
        (["eval", "online", "--max-steps", "7"], {"max_episode_steps": 7}, "--max-steps", "--max-episode-steps"),
        (["eval", "judge", "--out", "o", "--max-steps", "5"], {"judge_steps": 5}, "--max-steps", "--judge-steps"),
        (["datagen", "explore", "--episodes", "e.jsonl", "--model", "m", "--out", "o", "--max-steps", "4"],
         {"limit_steps": 4, "episodes": "e.jsonl"}, "--max-steps", "--limit-steps"),
        (["eval", "live", "--judge", "openai", "--out", "o", "--policy", "scripted", "--judge-arg", "model=j",
          "--judge-params", '{"base_url": "http://h:1/v1", "max_tokens": 8}'],
         {"judge_arg": ["model=j", 'base_url="http://h:1/v1"', "max_tokens=8"]}, "--judge-params", "--judge-arg"),
        (["datagen", "atg", "--tasks", "t", "--model", "m", "--out", "o", "--verifier-params", '{"votes": 2}',
          "--env-params", '{"preset": "coarse"}'],
         {"verifier_arg": ["votes=2"], "env_arg": ['preset="coarse"']}, "--verifier-params", "--verifier-arg"),
    ],
)
def test_deprecated_spellings_still_work_and_warn(capsys, argv, expected, old, new):
    from guirl.commands import parse_pairs

    args = build_parser().parse_args(argv)
    for key, value in expected.items():
        assert getattr(args, key) == value
    warning = capsys.readouterr().err.splitlines()[0]
    assert warning.startswith(f"{args.guirl_prog}: warning: {old} is deprecated") and new in warning
    if "judge_arg" in expected:
        expected_kwargs = {"model": "j", "base_url": "http://h:1/v1", "max_tokens": 8}
        assert parse_pairs(args.judge_arg, "--judge-arg") == expected_kwargs


def test_the_new_spellings_do_not_warn(capsys):
    args = build_parser().parse_args(["eval", "live", "--judge", "ground_truth", "--out", "o", "--policy", "scripted",
                                      "--episodes-per-task", "2", "--max-episode-steps", "9"])
    assert (args.episodes_per_task, args.max_episode_steps, args.judge_arg) == (2, 9, [])
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(("spelling", "method"), [("semi-online", "semi_online"), ("semi_online", "semi_online"),
                                                  ("judge-sft", "judge_sft"), ("judge_sft", "judge_sft")])
def test_train_methods_take_hyphens_and_underscores(spelling, method):
    args = build_parser().parse_args(["train", spelling, "--config", "x.yaml"])
    assert args.method == method and args.guirl_prog == f"guirl train {method.replace('_', '-')}"


def test_recipe_hints_come_from_each_recipes_own_first_line(capsys):
    from guirl.commands.train import recipes_by_method
    from guirl.trainers.methods import METHODS

    found = recipes_by_method()
    assert set(found) == set(METHODS), "every method has a recipe that runs it"
    for path in sorted((ROOT / "recipes").glob("*.yaml")):
        first = path.read_text().splitlines()[0]
        relative = path.relative_to(ROOT).as_posix()
        if first.startswith("# guirl train "):
            method = first.split()[3].replace("-", "_")
            assert relative in found[method], (relative, method)
    assert "recipes/base_agent_tiny.yaml" in found["curriculum"]  # its header names it on a later line
    assert not any("accelerate/" in r for recipes in found.values() for r in recipes)  # they run other files
    with pytest.raises(SystemExit):
        build_parser().parse_args(["train", "semi-online", "--help"])
    assert "guirl train semi-online --config recipes/ccpo_semi_online_tiny.yaml" in capsys.readouterr().out


# -- the config a checkpoint was trained with -------------------------------------------------------------------
def test_config_changes_name_fields_and_leave_out_what_may_change():
    from guirl.trainers.checkpoint import config_changes

    base = {"seed": 0, "max_steps": 10, "num_threads": 2, "report_to": ["tensorboard"],
            "optim": {"lr": 1e-3, "schedule": "constant", "warmup_ratio": 0.0}, "env_kwargs": {"preset": "coarse"}}
    same_run = {**base, "max_steps": 20, "num_threads": 8, "report_to": [], "new_field": 1}
    assert config_changes(base, same_run) == []  # a constant schedule: a longer run is the same run, extended
    cosine = {**base, "optim": {**base["optim"], "schedule": "cosine"}}
    assert config_changes(cosine, {**cosine, "max_steps": 20}) == [
        "max_steps: 10 -> 20 (the learning-rate schedule depends on it)"]
    other = {**base, "seed": 1, "env_kwargs": {"preset": "hd"}}
    assert config_changes(base, other) == ['env_kwargs.preset: "coarse" -> "hd"', "seed: 0 -> 1"]


def test_the_override_lets_a_changed_config_resume(monkeypatch, tmp_path):
    from guirl.trainers.checkpoint import ConfigChangedError, check_resume_config

    state = {"step": 3, "config": {"seed": 0}}
    path = tmp_path / "run" / "checkpoints" / "step_00000003"
    with pytest.raises(ConfigChangedError, match=r"run holds a checkpoint \(step_00000003\) .*: seed: 0 -> 1;"):
        check_resume_config({"seed": 1}, state, path)
    check_resume_config({"seed": 1}, {"step": 3}, path)  # a checkpoint from before configs were stored
    logged: list[str] = []
    monkeypatch.setenv("GUIRL_ALLOW_CONFIG_CHANGE", "1")
    check_resume_config({"seed": 1}, state, path, log=logged.append)
    assert logged and "seed: 0 -> 1" in logged[0]
