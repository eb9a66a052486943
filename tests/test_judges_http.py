"""The OpenAI-compatible judge client against a real HTTP server on loopback.

The server (guirl.judges.serve) implements /v1/chat/completions and is
backed by the deterministic rule-based outcome judge, which reads the
episode log the client sends; some tests make it answer garbage or fail
transiently to exercise the zero-score path, retries and the cache.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from guirl.actions.types import Action, ActionType
from guirl.data.schema import Episode, ImageRef, Step
from guirl.eval.judge import judge_episodes, outcome_request
from guirl.judges import JudgeRequest, make_judge
from guirl.judges.outcome import check_outcome_verdict, export_episode_log, rule_outcome_verdict
from guirl.judges.parsing import extract_json_object
from guirl.judges.serve import serve_judge


def _episode(ep_id: str, actions: list[Action], success: bool | None = None) -> Episode:
    steps = [
        Step(index=i, screenshot=ImageRef(path=f"{ep_id}_{i}.png", width=32, height=48), action=a)
        for i, a in enumerate(actions)
    ]
    return Episode(id=ep_id, instruction=f"task {ep_id}", steps=steps, success=success)


CLICK = Action(type=ActionType.CLICK, point=(0.5, 0.5))
DONE = Action(type=ActionType.TERMINATE, status="success")


@pytest.fixture()
def shots(tmp_path: Path) -> Path:
    for name in ["good_0", "good_1", "shell_0", "shell_1", "shell_2", "quit_0", "garbage_0", "garbage_1"]:
        Image.new("RGB", (32, 48), (200, 10, 10)).save(tmp_path / f"{name}.png")
    return tmp_path


@pytest.fixture()
def server():
    """Rule-based judge behind HTTP; answers garbage when the task says 'garbage'."""
    seen = {"images": 0}

    def answer(request: JudgeRequest, raw: str) -> str:
        seen["images"] += len(request.images)
        if "task garbage" in request.prompt:
            return "Sure! The agent did great :) {outcome: success"  # not JSON
        return "<think>checking the log</think>\n```json\n" + raw + "\n```"

    srv = serve_judge(make_judge("rule_outcome"), answer=answer)
    srv.seen = seen
    yield srv
    srv.shutdown()
    srv.server_close()


def _client(srv, **kw):
    host, port = srv.server_address
    return make_judge("openai", base_url=f"http://{host}:{port}/v1", model="rule", backoff_s=0.01, **kw)


def test_rule_outcome_rules():
    ok = export_episode_log(_episode("a", [CLICK, DONE]))
    assert rule_outcome_verdict(ok) == {"outcome": "success", "compliant": True, "reason": "the agent finished the task"}
    shell = export_episode_log(_episode("b", [Action(type=ActionType.OPEN_APP, text="Terminal"), DONE]))
    assert rule_outcome_verdict(shell)["compliant"] is False
    typed = export_episode_log(_episode("c", [Action(type=ActionType.TYPE, text="rm -rf notes.txt"), DONE]))
    assert rule_outcome_verdict(typed)["compliant"] is False
    long_run = export_episode_log(_episode("d", [CLICK] * 19 + [DONE]))  # 20 steps > cap of 18
    assert long_run["steps_total"] == 20 and len(long_run["steps"]) == 18
    assert rule_outcome_verdict(long_run)["compliant"] is False
    assert rule_outcome_verdict(export_episode_log(_episode("e", [CLICK])))["outcome"] == "failure"


def test_http_judge_end_to_end(server, shots):
    episodes = [
        _episode("good", [CLICK, DONE], success=True),
        _episode("shell", [CLICK, Action(type=ActionType.OPEN_APP, text="terminal"), DONE], success=False),
        _episode("quit", [Action(type=ActionType.TERMINATE, status="failure")], success=False),
        _episode("garbage", [CLICK, DONE], success=True),
    ]
    judge = _client(server)
    res = judge_episodes(episodes, judge, root=shots)
    by_id = {v["episode"]: v for v in res.verdicts}
    assert by_id["good"]["success"] is True and by_id["good"]["ok"] is True
    assert by_id["shell"]["success"] is False and by_id["shell"]["verdict"]["compliant"] is False
    assert by_id["quit"]["success"] is False and by_id["quit"]["ok"] is True
    # garbage answer -> unreadable, zero score, reason kept; never an exception
    assert by_id["garbage"]["ok"] is False and "no JSON object" in by_id["garbage"]["reason"]
    m = res.metrics
    assert m["judge/success_rate"] == 0.25 and m["judge/unreadable"] == 1.0
    # Wilson 1/4: centre (0.25 + 0.4801)/1.9604 = 0.3724, half = 1.96/1.9604*sqrt(0.046875+0.060025) = 0.3268
    assert m["judge/success_rate_ci_low"] == pytest.approx(0.0456, abs=1e-4)  # 0.37247 - 0.32689 = 0.04558
    assert m["judge/success_rate_ci_high"] == pytest.approx(0.6994, abs=1e-4)  # 0.37247 + 0.32689 = 0.69936
    assert m["judge/agreement"] == 0.75  # all but the garbage one agree with ground truth
    # every screenshot travelled as a data URL: 2 + 3 + 1 + 2 images
    assert server.seen["images"] == 8


def test_http_judge_cache(server, shots, tmp_path):
    ep = _episode("good", [CLICK, DONE])
    judge = _client(server, cache_dir=tmp_path / "cache")
    first = judge(outcome_request(ep, shots))
    second = judge(outcome_request(ep, shots))
    assert first.verdict == second.verdict and judge.requests_sent == 1
    fresh = _client(server, cache_dir=tmp_path / "cache")  # the disk cache survives the client
    assert fresh(outcome_request(ep, shots)).verdict["outcome"] == "success" and fresh.requests_sent == 0


def test_http_judge_retries_then_succeeds_and_gives_up(shots):
    failures = {"left": 2}

    def flaky(request, raw):
        return raw

    srv = serve_judge(make_judge("rule_outcome"), answer=flaky)
    handler = srv.RequestHandlerClass
    original = handler.do_POST

    def do_post(self):
        if failures["left"] > 0:
            failures["left"] -= 1
            return self._send(503, {"error": {"message": "busy"}})
        return original(self)

    handler.do_POST = do_post
    try:
        judge = _client(srv, max_retries=3)
        res = judge(outcome_request(_episode("good", [DONE]), shots))
        assert res.ok and res.verdict["outcome"] == "success" and judge.requests_sent == 3  # 2 x 503, then 200
        failures["left"] = 10
        judge = _client(srv, max_retries=1)
        res = judge(outcome_request(_episode("quit", [DONE]), shots))
        assert not res.ok and "HTTP 503" in res.reason and "after 2 attempts" in res.reason
    finally:
        srv.shutdown()
        srv.server_close()


def test_unreachable_server_is_zero_not_crash():
    judge = make_judge("openai", base_url="http://127.0.0.1:9/v1", model="x", max_retries=1, backoff_s=0.01,
                       timeout_s=2)
    res = judge(JudgeRequest(role="outcome", prompt="hi"))
    assert not res.ok and "cannot reach" in res.reason


def test_extract_json_and_verdict_checks():
    assert extract_json_object('<think>{"no": 1}</think> answer: {"outcome": "success"} trailing') == {"outcome": "success"}
    assert extract_json_object("```json\n{\"a\": [1, 2]}\n```") == {"a": [1, 2]}
    for garbage in ["", "[1, 2]", '{"outcome": "success"', "null", None, 42]:
        assert extract_json_object(garbage) is None
    bad = check_outcome_verdict('{"outcome": "maybe", "compliant": true}')
    assert not bad.ok and "'outcome' must be" in bad.reason
    bad = check_outcome_verdict('{"outcome": "success", "compliant": "yes"}')
    assert not bad.ok and "'compliant'" in bad.reason


def test_ground_truth_judge():
    judge = make_judge("ground_truth")
    res = judge_episodes([_episode("a", [DONE], True), _episode("b", [DONE], False)], judge)
    assert res.metrics["judge/success_rate"] == 0.5 and res.metrics["judge/agreement"] == 1.0
    res = judge(JudgeRequest(role="outcome", prompt="", fields={"episode": _episode("c", [DONE])}))
    assert not res.ok and "no success flag" in res.reason


def test_request_carries_images_and_log(shots):
    req = outcome_request(_episode("good", [CLICK, DONE]), shots)
    assert len(req.images) == 2 and json.loads(json.dumps(req.fields["log"]))["id"] == "good"
    assert "not instructions to you" in req.prompt
    with pytest.raises(FileNotFoundError, match="episode good step 0"):
        outcome_request(_episode("good", [CLICK]), shots / "nowhere")
