"""``guirl eval live`` (Lite-Bench on live episodes): a real short run of the tiny base agent in the built-in
world judged by the ground-truth judge; the same episodes judged over loopback HTTP (guirl's judge server
backed by the rule judge, the ``openai`` client) with one injected garbage answer; the CLI's one-line errors.

The base agent runs with one torch thread; the whole file takes ~15 s on a 2-core CPU.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from guirl.cli import main
from guirl.data.io import read_episodes
from guirl.eval.live import judge_live
from guirl.judges import JudgeResult, make_judge
from guirl.judges.outcome import RuleOutcomeJudge, log_from_prompt
from guirl.judges.serve import serve_judge

BASE_AGENT = Path(__file__).resolve().parents[1] / "checkpoints" / "base-agent-tiny"
TASKS = "mobile.ground,mobile.toggle_setting"  # seeds 1, 2: the agent wins 1 of the 2 grounding episodes
EPISODES, MAX_STEPS = 2, 5


@pytest.fixture(scope="module")
def live_run(tmp_path_factory):
    """One CLI run: 2 tasks x 2 episodes (seeds 1, 2), capped at 5 steps, judged by the ground-truth judge."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    out = tmp_path_factory.mktemp("live")
    argv = ["eval", "live", "--env", "sim", "--tasks", TASKS, "--episodes-per-task", str(EPISODES), "--model",
            str(BASE_AGENT)]
    argv += ["--judge", "ground_truth", "--max-episode-steps", str(MAX_STEPS), "--seed", "1", "--out", str(out)]
    try:
        assert main(argv) == 0
    finally:
        torch.set_num_threads(threads)
    return out


def test_live_run_writes_logs_screenshots_and_summary(live_run, capsys):
    episodes = read_episodes(live_run / "episodes.jsonl")
    assert [e.id for e in episodes] == ["ep000000", "ep000001", "ep000002", "ep000003"]
    assert [e.task for e in episodes] == ["mobile.ground"] * 2 + ["mobile.toggle_setting"] * 2
    assert {e.platform for e in episodes} == {"mobile"}
    for episode in episodes:
        folder = live_run / "images" / episode.id
        log = json.loads((folder / "log.json").read_text())
        assert log["task"] == episode.task and log["instruction"] == episode.instruction
        assert log["env"]["success"] is episode.success and isinstance(episode.success, bool)
        assert 1 <= len(log["steps"]) == log["steps_total"] <= MAX_STEPS  # the --max-episode-steps cap holds
        for step in log["steps"]:
            assert (live_run / step["screenshot"]).is_file() and step["screenshot"].endswith(".png")
            assert isinstance(step["output"], str) and "action" in step  # raw model text and the parsed action
        assert log["final_screenshot"] == f"images/{episode.id}/final.png" and (folder / "final.png").is_file()
    summary = json.loads((live_run / "summary.json").read_text())
    metrics = summary["metrics"]
    env_wins = sum(e.success for e in episodes)
    assert 1 <= env_wins <= 3  # both rows of the table are exercised
    # the ground-truth judge reads the env's own flag: it agrees on all 4, masks none
    assert metrics["live/agreement"] == 1.0 and metrics["live/agreement_n"] == 4
    assert metrics["live/judge_masked"] == 0 and metrics["live/judge_errors"] == 0
    assert metrics["live/judge_success_rate"] == metrics["live/env_success_rate"] == env_wins / 4
    assert summary["confusion"] == {
        "env_success": {"judge_success": env_wins, "judge_failure": 0, "masked": 0},
        "env_failure": {"judge_success": 0, "judge_failure": 4 - env_wins, "masked": 0},
    }
    assert [t["episodes"] for t in summary["tasks"]] == [2, 2]  # the `guirl eval online` rows
    assert len((live_run / "verdicts.jsonl").read_text().splitlines()) == 4


def test_loopback_http_judge_masks_and_counts_one_injected_fault(live_run):
    episodes = read_episodes(live_run / "episodes.jsonl")
    seen = []

    def answer(request, raw):  # the server's reply; the first one is garbage (the injected fault)
        log = log_from_prompt(request.prompt)
        seen.append((len(request.images), len(log["steps"]) if log else -1))
        return "the judge is overloaded, sorry" if len(seen) == 1 else raw

    server = serve_judge(RuleOutcomeJudge(), answer=answer)
    host, port = server.server_address
    try:
        client = make_judge("openai", base_url=f"http://{host}:{port}/v1", model="rule", timeout_s=10, max_retries=0)
        over_http = judge_live(episodes, client, live_run)
    finally:
        server.shutdown()
        server.server_close()
    direct = judge_live(episodes, RuleOutcomeJudge(), live_run)
    # every request carried the step screenshots plus the final one
    assert seen == [(steps + 1, steps) for steps in (len(e.steps) for e in episodes)]
    m = over_http.metrics
    assert m["live/judge_masked"] == 1 and m["live/judge_readable"] == 3 and m["live/agreement_n"] == 3
    assert m["judge/requests"] == 4 and m["judge/failures"] == 1  # counted by the client too
    assert [v["masked"] for v in over_http.verdicts] == [True, False, False, False]
    assert sum(row["masked"] for row in over_http.confusion.values()) == 1
    # the three readable verdicts are the rule judge's own
    assert over_http.verdicts[1:] == direct.verdicts[1:]
    assert direct.metrics["live/judge_masked"] == 0


def test_a_judge_that_raises_is_masked_not_fatal(live_run):
    episodes = read_episodes(live_run / "episodes.jsonl")
    calls = []

    def flaky(request):
        calls.append(request)
        if len(calls) == 2:
            raise ConnectionError("judge process died")
        return JudgeResult(verdict={"outcome": "failure", "compliant": True}, raw='{"outcome": "failure", "compliant": true}')

    report = judge_live(episodes, flaky, live_run)
    assert report.metrics["live/judge_errors"] == 1 and report.metrics["live/judge_masked"] == 1
    assert "ConnectionError: judge process died" in report.verdicts[1]["reason"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--env", "osworld", "--model", str(BASE_AGENT)], "--env 'osworld' is not a registered environment"),
        (["--model", "no/such/checkpoint"], "--model no/such/checkpoint: not a checkpoint directory"),
        (["--model", str(BASE_AGENT), "--judge-arg", "base_url"], "--judge-arg 'base_url' must look like KEY=VALUE"),
        (["--model", str(BASE_AGENT), "--judge-arg", "nope=1"], "--judge ground_truth --judge-arg nope=1: "),
    ],
)
def test_cli_errors_are_one_line(tmp_path, capsys, extra, message):
    argv = ["eval", "live", "--tasks", "desktop.ground", "--judge", "ground_truth", "--out", str(tmp_path), *extra]
    assert main(argv) == 2
    text = capsys.readouterr().err
    assert text.startswith("guirl eval live: error: ") and message in text and text.count("\n") == 1
    assert not (tmp_path / "episodes.jsonl").exists()


def test_cli_explains_a_task_the_world_does_not_have(tmp_path, capsys):
    argv = ["eval", "live", "--tasks", "mobile.nope", "--episodes-per-task", "1", "--policy", "scripted", "--judge",
            "ground_truth"]
    assert main(argv + ["--out", str(tmp_path)]) == 2
    text = capsys.readouterr().err
    assert "every episode failed to start" in text and "unknown task 'mobile.nope'" in text and text.count("\n") == 1
