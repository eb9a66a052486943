"""ComputerSD's analyzer pipeline: expert-annotated step data, SFT of a judge on it, agreement with the expert.

Tiny settings throughout (one task, two-step episodes, a few records, three optimiser steps)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import yaml

from guirl.datagen.analyzer_data import collect_splits, read_records, record_request
from guirl.eval.analyzer_agreement import agreement_of, analyzer_agreement, expert_verdict
from guirl.judges import JudgeResult, make_judge
from guirl.judges.analyzer import AnalyzerVerdict, verdict_of
from guirl.judges.prompts import read_verdict
from guirl.trainers.judge_sft import JudgeSFTCollator, JudgeSFTConfig, answer_loss, train_judge_sft

ROOT = Path(__file__).resolve().parents[1]
POLICY, BASE = ROOT / "checkpoints" / "computersd-start-tiny", ROOT / "checkpoints" / "base-agent-tiny"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    torch.set_num_threads(1)
    out = tmp_path_factory.mktemp("analyzer-data")
    paths = collect_splits(POLICY, ["desktop.open_file"], out, episodes_per_task=2, heldout_episodes_per_task=1,
                           max_episode_steps=2, heldout_max_steps=2)
    return out, paths


def test_collected_records_are_consistent(data):
    out, paths = data
    train, held = read_records(paths["train"]), read_records(paths["heldout"])
    assert train and held
    for r in train + held:
        # the expert's answer text parses back to the recorded verdict, and that verdict's vote
        parsed = verdict_of(read_verdict(r["answer"], "analyzer"))
        assert parsed == expert_verdict(r) and parsed.vote == r["vote"]
        assert r["expert"] == "ground_truth_analyzer" and r["role"] == "analyzer"
        assert len(r["images"]) == 2 and all((out / name).is_file() for name in r["images"])
        assert "<judge_data>" in r["prompt"] and "effective" not in r["prompt"][r["prompt"].rfind("<judge_data>"):]
        assert r["id"] == f"{r['task']}/{r['seed']}/{r['step']}"
    assert {r["seed"] for r in train}.isdisjoint({r["seed"] for r in held})
    assert {r["seed"] for r in train} <= {0, 1} and {r["seed"] for r in held} == {100_000}
    meta = json.loads((out / "train.meta.json").read_text())
    assert meta["records"] == len(train) and meta["episodes_per_task"] == 2
    # the records rebuild requests the ground-truth expert answers the same way (agreement 1 with itself)
    again = analyzer_agreement(make_judge("ground_truth_analyzer"), held)
    assert again["valid_rate"] == again["vote_agreement"] == again["consistency_agreement"] == 1.0
    assert record_request(held[0]).images[0].size == (512, 512)


def test_overlapping_seed_ranges_are_refused(tmp_path):
    with pytest.raises(ValueError, match="also training seeds"):
        collect_splits(POLICY, ["desktop.open_file"], tmp_path, episodes_per_task=2, train_seeds=range(10),
                       heldout_seeds=range(1, 5))


def _loss(model, collate, records) -> float:
    model.eval()
    with torch.no_grad():
        batch = collate(records)
        return float(answer_loss(model, batch, [batch])[0])


def test_judge_sft_lowers_the_loss_and_saves_a_checkpoint_judge(data, tmp_path):
    from guirl.models.load import load_policy

    _, paths = data
    records = read_records(paths["train"])[:4]
    cfg = JudgeSFTConfig(model=str(BASE), train_data=[str(paths["train"])], max_records=4, output_dir=str(tmp_path),
                         max_steps=3, batch_size=2, save_every=0, report_to=[], num_threads=1, log_every=1,
                         max_new_tokens=16, optim={"lr": 1e-3})
    start = load_policy(BASE)
    collate = JudgeSFTCollator(start.processor)
    before = _loss(start.model, collate, records)
    result = train_judge_sft(cfg)
    assert result["step"] == 3 and (tmp_path / "final" / "judge.json").is_file()
    trained = load_policy(result["final_dir"])
    after = _loss(trained.model, collate, records)
    assert after < before, (before, after)
    # the labels cover exactly the answer and its end-of-turn token
    row = collate.encode(records[0])
    answer_ids = [t for t, lab in zip(row["input_ids"], row["labels"], strict=True) if lab != -100]
    assert start.tokenizer.decode(answer_ids[: -len(collate.end_ids)]) == records[0]["answer"]
    judge = make_judge("checkpoint", model_dir=result["final_dir"], max_new_tokens=16)
    answer = judge(record_request(records[0]))  # valid or not, an answer and never an exception
    assert isinstance(answer, JudgeResult) and isinstance(answer.raw, str)


def test_agreement_on_hand_made_answers():
    experts = [AnalyzerVerdict(1, 1), AnalyzerVerdict(1, 0), AnalyzerVerdict(0, 0), AnalyzerVerdict(1, 1),
               AnalyzerVerdict(0, 1)]
    results = [
        read_verdict('{"consistency": 1, "effectiveness": 1, "guide": "g", "avoid": ""}', "analyzer"),  # agrees
        read_verdict('```json\n{"consistency": 0, "effectiveness": 0}\n```', "analyzer"),  # vote -1 = -1, c wrong
        read_verdict("I think the step is fine", "analyzer"),  # garbage: invalid
        None,  # the judge raised
        read_verdict('{"score": 1.0}', "analyzer"),  # JSON, but not an analyzer answer: invalid
    ]
    got = agreement_of(results, experts)
    assert got == {"steps": 5.0, "valid_rate": 0.4, "vote_agreement": 0.4, "consistency_agreement": 0.2,
                   "effectiveness_agreement": 0.4, "vote_agreement_valid": 1.0, "vote_agreement_pos": 0.5,
                   "vote_agreement_neg": 1 / 3, "vote_balanced": (0.5 + 1 / 3) / 2, "expert_positive_rate": 0.4,
                   "errors": 1.0}
    with pytest.raises(ValueError, match="one result per step"):
        agreement_of(results[:2], experts)


def test_analyzer_agreement_survives_a_raising_judge(data):
    _, paths = data
    held = read_records(paths["heldout"])

    def broken(request):
        raise RuntimeError("server down")

    got = analyzer_agreement(broken, held, keep_answers=True)
    assert got["valid_rate"] == got["vote_agreement"] == 0.0 and got["errors"] == len(held)
    assert [a["valid"] for a in got["answers"]] == [False] * len(held)


def test_the_recipe_loads_into_the_config():
    path = ROOT / "recipes" / "computersd_analyzer_tiny.yaml"
    text = path.read_text()
    assert text.splitlines()[0] == "# guirl train judge_sft --config recipes/computersd_analyzer_tiny.yaml"
    written = yaml.safe_load(text)
    cfg = JudgeSFTConfig(**written).model_dump()
    for key, value in written.items():
        assert cfg[key] == value or (isinstance(value, dict) and value.items() <= cfg[key].items()), key
