"""``guirl eval online`` (the sub-command from guirl.commands.eval_online)."""

from __future__ import annotations

import argparse
import json

import pytest

from guirl.commands.eval_online import add_online_parser, parse_env_args
from guirl.data.io import read_episodes
from guirl.envs import available_envs
from guirl.eval.online import scripted_policy_for


def eval_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="guirl")
    verbs = parser.add_subparsers(dest="verb")
    evaluate = verbs.add_parser("eval")
    add_online_parser(evaluate.add_subparsers(dest="kind"))
    return parser


def run_cli(argv: list[str]) -> int:
    args = eval_parser().parse_args(argv)
    return args.func(args)


def test_online_eval_on_sim_prints_rates_and_writes_trajectories(tmp_path, capsys):
    assert "sim" in available_envs(), "the built-in sim world must be registered"
    argv = ["eval", "online", "--env", "sim", "--tasks", "web.search_open,web.fill_form", "--episodes-per-task", "2"]
    argv += ["--policy", "guirl.rollout.policy:oracle_policy", "--env-arg", "domain=web", "--max-episode-steps", "30"]
    assert run_cli(argv + ["--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "web.search_open" in out and "web.fill_form" in out
    # 2/2 successes: Wilson 95% low = 2/(2 + 1.96^2) = 2/5.84 = 0.34
    assert "1.00 [0.34, 1.00]" in out
    assert len(read_episodes(tmp_path / "episodes.jsonl")) == 4
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [t["successes"] for t in summary["tasks"]] == [2, 2]


@pytest.mark.browser  # no browser: skipped, or failed under GUIRL_REQUIRE_BROWSER=1 (conftest.py)
def test_online_eval_on_miniwob_with_two_workers(tmp_path, capsys):
    argv = ["eval", "online", "--env", "miniwob", "--tasks", "click-button", "click-dialog", "--episodes-per-task", "3"]
    assert run_cli(argv + ["--policy", "scripted", "--workers", "2", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "click-button                    3     1.00" in out
    episodes = read_episodes(tmp_path / "episodes.jsonl")
    assert len(episodes) == 6 and all(e.success and e.platform == "web" for e in episodes)


def test_bad_arguments_are_explained():
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_env_args(["domain"])
    assert parse_env_args(["max_steps=3", "domain=web"]) == {"max_steps": 3, "domain": "web"}
    with pytest.raises(ValueError, match="environments with one"):
        scripted_policy_for("osworld")
    with pytest.raises(SystemExit):
        eval_parser().parse_args(["eval", "online", "--policy", "scripted", "--model", "dir"])
