"""ComputerSD's asynchronous pipeline on separated cores: the rollout side in a process of its own pinned to
one core with one torch thread, the trainer pinned to another; no finished item is lost, whichever side is
slower (guirl.trainers.async_process.ProcessPipeline, ComputerSDConfig.rollout_cpus / trainer_cpus)."""

from __future__ import annotations

import json
import os
import time

import pytest
import torch

from guirl.trainers.async_pipeline import PipelineError, StagePipeline, StalenessGate
from guirl.trainers.async_process import ProcessPipeline, SharedWeightSlot, pin_threads, unpin_threads

CORES = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
needs_two_cores = pytest.mark.skipif(len(CORES) < 2, reason="separated cores need at least 2 CPU cores")
IN_FLIGHT = 2
STEPS = 6


def scripted_side(rollout_s: float, analysis_s: float, rescore_s: float, slot: SharedWeightSlot):
    """Built in the pipeline's process: items numbered 0, 1, ... that record the weights and version they were
    made with, and the CPU mask and torch threads of every stage thread that handled them."""
    replica = torch.nn.Linear(1, 1, bias=False)
    state = {"have": -1, "next": 0}

    def source():
        state["have"] = slot.sync(replica, state["have"])
        time.sleep(rollout_s)
        torch.ones(32, 32) @ torch.ones(32, 32)
        item = {"id": state["next"], "version": state["have"], "weight": float(replica.weight.item()),
                "threads": torch.get_num_threads(), "cpus": {"rollout": sorted(os.sched_getaffinity(0))}}
        state["next"] += 1
        return item

    def stage(name: str, seconds: float):
        def run(item):
            time.sleep(seconds)
            item["cpus"][name] = sorted(os.sched_getaffinity(0))
            return item
        return run

    return source, [("analysis", stage("analysis", analysis_s)), ("rescore", stage("rescore", rescore_s))]


def failing_side():
    def broken(item):
        raise ValueError("analyzer exploded")
    return (lambda: 1), [("analysis", broken)]


@needs_two_cores
@pytest.mark.parametrize("train_s, rollout_s", [(0.12, 0.02), (0.0, 0.06)], ids=["trainer-slower", "trainer-faster"])
def test_pinned_async_run_on_a_scripted_schedule_loses_no_finished_item(train_s, rollout_s):
    rollout_core, trainer_core = CORES[0], CORES[1]
    model = torch.nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        model.weight.fill_(0.0)
    slot = SharedWeightSlot(model, 0)
    unpin = pin_threads([trainer_core])
    pipe = ProcessPipeline(scripted_side, (rollout_s, 0.01, 0.01, slot), cpus=[rollout_core],
                           max_in_flight=IN_FLIGHT)
    gate, trained, dropped, seen = StalenessGate(IN_FLIGHT, "drop"), [], [], []
    try:
        pipe.start()
        assert pipe.wait_ready(timeout=120) == {"pid": pipe._process.pid, "cpus": [rollout_core], "torch_threads": 1}
        for step in range(STEPS):
            if step:  # the trainer's update of the previous step, published as the next version
                with torch.no_grad():
                    model.weight.fill_(float(step))
                slot.publish(model, step)
            item = pipe.get(timeout=60)
            seen.append(item)
            assert item["weight"] == item["version"]  # the weights of the version it says
            (trained if gate.admit(item["version"], step) else dropped).append(item["id"])
            assert os.sched_getaffinity(0) == {trainer_core}
            time.sleep(train_s)
        if train_s:  # the rollout side is ahead: let it finish what its slots allow before the stop
            deadline = time.perf_counter() + 30
            while pipe._out.qsize() < IN_FLIGHT and time.perf_counter() < deadline:
                time.sleep(0.02)
    finally:
        pipe.stop()
        unpin_threads(unpin)
    acc = pipe.accounting()
    left, unfinished = [i["id"] for i in pipe.left_over], [i["id"] for i in pipe.unfinished]
    # every item the rollout side finished was trained on, dropped by the gate (counted) or came back
    assert sorted(trained + dropped + left) == list(range(acc["finished"]))
    assert sorted(unfinished) == list(range(acc["finished"], acc["produced"]))
    assert acc["delivered"] == len(trained) + len(dropped) == STEPS
    assert acc["left_over"] == len(left) and acc["unfinished"] == len(unfinished)
    if train_s:
        assert len(left) == IN_FLIGHT  # the slow trainer left the rollout side's finished items behind
    assert dropped == [] and max(gate.seen) <= IN_FLIGHT  # the slots bound the staleness
    # pinned: every stage thread of the rollout side ran on its core with one torch thread
    for item in seen + pipe.left_over:
        assert item["threads"] == 1
        assert item["cpus"] == {"rollout": [rollout_core], "analysis": [rollout_core], "rescore": [rollout_core]}
    assert os.sched_getaffinity(0) == set(CORES)  # the test process has its cores back


@needs_two_cores
def test_a_failing_stage_in_the_process_is_raised_by_get():
    pipe = ProcessPipeline(failing_side, cpus=[CORES[0]], max_in_flight=1).start()
    try:
        with pytest.raises(PipelineError, match="(?s)'analysis' stage.*ValueError: analyzer exploded"):
            pipe.get(timeout=120)
    finally:
        pipe.stop()


def test_the_thread_pipeline_accounts_for_every_item_at_a_stop():
    counter = iter(range(10_000))
    pipe = StagePipeline(lambda: next(counter), [("slow", lambda x: (time.sleep(0.02), x)[1])],
                         max_in_flight=IN_FLIGHT).start()
    got = [pipe.get(timeout=10) for _ in range(3)]
    time.sleep(0.2)
    pipe.stop()
    acc = pipe.accounting()
    assert sorted(got + pipe.left_over) == list(range(acc["finished"]))
    assert sorted(pipe.unfinished) == list(range(acc["finished"], acc["produced"]))
    assert len(pipe.left_over) == IN_FLIGHT


def test_separated_cores_config_errors():
    from guirl.trainers.computersd import ComputerSDConfig

    with pytest.raises(ValueError, match="needs mode=async"):
        ComputerSDConfig(mode="sync", rollout_cpus=[0], trainer_cpus=[1])
    with pytest.raises(ValueError, match="needs trainer_cpus"):
        ComputerSDConfig(mode="async", rollout_cpus=[0])
    with pytest.raises(ValueError, match="share cores"):
        ComputerSDConfig(mode="async", rollout_cpus=[0, 1], trainer_cpus=[1])
    with pytest.raises(ValueError, match="Ray"):
        ComputerSDConfig(mode="async", rollout_cpus=[0], trainer_cpus=[1], env_backend="ray")
    assert ComputerSDConfig(mode="async", rollout_cpus=[0], trainer_cpus=[1], num_threads=4).num_threads == 1


@needs_two_cores
def test_pinned_computersd_end_to_end(tmp_path):
    from models_fixtures import tiny_model_dir

    from guirl.trainers.computersd import ComputerSDConfig
    from guirl.trainers.online_rl import train_computersd

    cfg = ComputerSDConfig(model=str(tiny_model_dir("qwen3_vl")), output_dir=str(tmp_path), mode="async",
                           rollout_cpus=[CORES[0]], trainer_cpus=[CORES[1]], tasks=["desktop.ground"], group_size=2,
                           batch_size=1, max_steps=2, max_episode_steps=1, max_new_tokens=8, save_every=0,
                           log_every=1, report_to=[], eval_episodes=0, optim={"lr": 1e-3})
    result = train_computersd(cfg)
    rows = [json.loads(line) for line in open(tmp_path / "metrics.jsonl")]
    assert [r["step"] for r in rows] == [1, 2]
    assert all(r["rollout/trajectories"] == 2 and r["async/staleness_max"] <= cfg.max_staleness for r in rows)
    acc = result["async_accounting"]
    assert acc["rollout_side"]["cpus"] == [CORES[0]] and acc["rollout_side"]["torch_threads"] == 1
    assert acc["delivered"] == 2 + acc["dropped"]
    assert acc["finished"] == acc["delivered"] + acc["left_over"]
    assert acc["produced"] == acc["finished"] + acc["unfinished"]
    assert os.sched_getaffinity(0) == set(CORES)
