"""The teacher-on-own-prefix data builder (guirl/trainers/own_prefix.py) on a hand-made case: where a student sample
leaves the reference, the exact answer texts built, which tokens are context (no loss) and which are targets;
then the wiring: samples files read by SFT's own_prefix_samples (Most-Matched references), and the
`guirl datagen own-prefix` verb."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from guirl.actions import Action, ActionType, Frame
from guirl.data import Episode, ImageRef, Step, write_episodes
from guirl.models.prompts import GUIDANCE_HEADER
from guirl.trainers.own_prefix import leave_index, own_prefix_data, own_prefix_examples, own_prefix_split
from guirl.trainers.sft import Example, SFTCollator, SFTConfig, target_action

ROOT = Path(__file__).resolve().parents[1]
FMT = "qwen_computer_use"
SCREEN = Frame.screen(256, 256)
OK = Action(type=ActionType.CLICK, box=(96, 32, 160, 96), frame=SCREEN, description="Click the OK button")
HELP = Action(type=ActionType.CLICK, box=(160, 176, 198, 208), frame=SCREEN, description="Click Help")


def answer(description: str, x: int, y: int) -> str:
    """An answer as the model writes it in qwen_computer_use (0-1000 coordinates of the tiny models)."""
    return (f'Action: {description}\n<tool_call>\n{{"name": "computer_use", "arguments": {{"action": "left_click", '
            f'"coordinate": [{x}, {y}]}}}}\n</tool_call>')


#: the reference: OK's box centre (128, 64) of 256 x 256 in 0-1000
REFERENCE = answer("Click the OK button", 500, 250)
EQUAL = REFERENCE
WRONG_DESCRIPTION = answer("Click the Cancel button", 820, 250)  # leaves at " Cancel" (and would click elsewhere)
WRONG_COORDINATE = answer("Click the OK button", 530, 250)  # leaves at the x's second digit


@pytest.fixture(scope="module")
def policy():
    from guirl.models.load import load_policy

    return load_policy(ROOT / "checkpoints" / "base-agent-tiny")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("own_prefix")
    image = Image.new("RGB", (256, 256), (220, 220, 220))
    draw = ImageDraw.Draw(image)
    draw.rectangle([96, 32, 160, 96], fill=(30, 140, 60))
    draw.rectangle([160, 176, 198, 208], fill=(30, 60, 200))
    image.save(root / "s.png")
    shot = ImageRef(path="s.png", width=256, height=256)
    episode = Episode(id="e0", instruction="Confirm the dialog", steps=[
        Step(index=0, screenshot=shot, valid_actions=[OK]),  # one valid action
        Step(index=1, screenshot=shot, valid_actions=[OK, HELP]),  # two
    ])
    write_episodes(root / "train.jsonl", [episode])
    return root / "train.jsonl", episode


def guided(episode: Episode, step: Step, root: Path, ref: Action) -> Example:
    """A teacher example with one reference in the block, the target (as SFT's Single-GT copies)."""
    return Example(episode, step, root, target_action(step.model_copy(update={"valid_actions": [ref]})), None, [ref])


def test_leaving_the_reference_is_the_first_differing_token():
    assert leave_index([1, 2, 3], [1, 2, 3]) is None  # equal
    assert leave_index([1, 2], [1, 2, 3]) is None  # a prefix: stops early without leaving
    assert leave_index([1, 5, 3], [1, 2, 3]) == 1
    assert leave_index([1, 2, 3, 4], [1, 2, 3]) == 3  # goes on past the reference's end


def test_a_skipped_or_added_field_is_realigned_at_its_tag(policy):
    """One for one, a sample without the reference's Action: sentence (or with one the reference lacks) would
    be continued mid-field; at the format's tags the continuation is realigned."""
    tok = policy.processor.tokenizer
    call = REFERENCE[REFERENCE.index("<tool_call>"):]
    skipped = own_prefix_split(call.replace("500", "530"), REFERENCE, tok)  # no Action: sentence
    assert (skipped.prefix, skipped.continuation, skipped.cut) == ("<tool_call>", call.removeprefix("<tool_call>"), 0)
    typed = ('<tool_call>\n{"name": "computer_use", "arguments": {"action": "type", "text": "hello"}}\n'
             "</tool_call>")  # a reference without a description
    added = own_prefix_split("Action: Type hallo\n" + typed.replace("hello", "hallo"), typed, tok)
    assert (added.prefix, added.continuation, added.cut) == ("Action: Type hallo\n", typed, 0)
    assert own_prefix_split("Action: Type hallo", typed, tok) is None  # never comes back to the reference


def test_the_builder_cuts_where_a_sample_leaves_and_continues_with_the_reference(policy, data):
    path, episode = data
    tok = policy.processor.tokenizer
    example = guided(episode, episode.steps[0], path.parent, OK)
    built = own_prefix_examples([(example, [EQUAL, WRONG_DESCRIPTION, WRONG_COORDINATE])], tok, FMT, policy.frame_for)
    # the sample equal to the reference gives nothing; the other two one example each, in sample order
    assert [(ex.prefix, ex.answer) for ex in built] == [
        ("Action: Click the Cancel",
         ' button\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", '
         '"coordinate": [500, 250]}}\n</tool_call>'),
        ('Action: Click the OK button\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", '
         '"coordinate": [53',
         '0, 250]}}\n</tool_call>'),
    ]
    # the block, the target action and the rest of the example are the guided example's
    assert all(ex.guidance == [OK] and ex.step is example.step and ex.target == example.target for ex in built)
    # a sample that goes on after the reference ends: the target is ending the turn; one that stops early: nothing
    past = own_prefix_split(REFERENCE + " and more", REFERENCE, tok)
    assert (past.prefix, past.continuation) == (REFERENCE + " and", "")
    assert own_prefix_split(REFERENCE[:40], REFERENCE, tok) is None

    collate = SFTCollator(policy.processor, policy.frame_for, SFTConfig(format=FMT, prompt_style="compact"))
    plain = collate.encode(example)
    end = "<|im_end|>\n"
    assert tok.decode([t for t in plain["labels"] if t != -100]) == REFERENCE + end
    for ex, sample in zip(built, [WRONG_DESCRIPTION, WRONG_COORDINATE], strict=True):
        row = collate.encode(ex)
        ids, labels, weights = row["input_ids"], row["labels"], row["weights"]
        first = next(i for i, t in enumerate(labels) if t != -100)
        # labels: exactly the reference's continuation and the end of the turn, after the whole context
        assert all(t != -100 for t in labels[first:]) and all(w > 0 for w in weights[first:])
        assert all(w == 0 for w in weights[:first])
        assert tok.decode(labels[first:]) == ex.answer + end
        # context: the teacher's prompt with the block (the same prompt as the plain copy), then the student's own
        # tokens through the one where it left the reference, outside the loss
        prompt_len = next(i for i, t in enumerate(plain["labels"]) if t != -100)
        assert ids[:prompt_len] == plain["input_ids"][:prompt_len]
        assert f"{GUIDANCE_HEADER}\nReference action: {REFERENCE}" in tok.decode(ids[:prompt_len])
        own = tok(sample, add_special_tokens=False)["input_ids"]
        cut = leave_index(own, tok(REFERENCE, add_special_tokens=False)["input_ids"])
        assert ids[prompt_len:first] == own[: cut + 1]
        assert tok.decode(ids[prompt_len:first]) == ex.prefix
        assert len(row["mm_token_type_ids"]) == len(ids)


def test_sft_own_prefix_samples_guide_each_sample_by_its_most_matched_reference(policy, data, tmp_path):
    path, episode = data
    samples = tmp_path / "samples.jsonl"
    rows = [
        {"episode": "e0", "step": 0, "samples": [WRONG_DESCRIPTION]},
        # two valid actions: Help's own answer gives nothing; one near Help is continued with Help (the reference
        # Most-Matched-GT gives it), one near OK with OK
        {"episode": "e0", "step": 1, "samples": [answer("Click Help", 699, 750), answer("Click Help", 699, 770),
                                                 answer("Click the OK button", 510, 250)]},
        {"episode": "elsewhere", "step": 0, "samples": [EQUAL]},  # not in train_data: ignored
    ]
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = SFTConfig(format=FMT, prompt_style="compact", train_data=[str(path)], own_prefix_samples=[str(samples)])
    built = own_prefix_data(cfg, policy.processor.tokenizer, policy.frame_for)
    assert [(ex.step.index, ex.guidance, ex.prefix[-11:], ex.answer) for ex in built] == [
        (0, [OK], " the Cancel", ' button\n<tool_call>\n{"name": "computer_use", "arguments": {"action": '
         '"left_click", "coordinate": [500, 250]}}\n</tool_call>'),
        (1, [HELP], '": [699, 77', "0]}}\n</tool_call>"),
        (1, [OK], 'inate": [51', "0, 250]}}\n</tool_call>"),
    ]
    empty = tmp_path / "none.jsonl"
    empty.write_text("")
    with pytest.raises(ValueError, match="no sample belongs to a trainable step"):
        own_prefix_data(cfg.model_copy(update={"own_prefix_samples": [str(empty)]}), policy.processor.tokenizer,
                        policy.frame_for)


def test_datagen_own_prefix_writes_the_students_samples(data, tmp_path, capsys):
    from guirl.cli import main

    path, _ = data
    out = tmp_path / "out"
    assert main(["datagen", "own-prefix", "--episodes", str(path), "--model", str(ROOT / "checkpoints" /
                 "base-agent-tiny"), "--out", str(out), "--samples", "3", "--max-new-tokens", "48"]) == 0
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert [(r["episode"], r["step"], len(r["samples"])) for r in rows] == [("e0", 0, 3), ("e0", 1, 3)]
    counts = json.loads((out / "manifest.json").read_text())["counts"]
    assert counts["samples"] == 6 and 0 <= counts["leave_reference"] <= 6
    assert f"own-prefix/leave_reference: {counts['leave_reference']}" in capsys.readouterr().out


def test_train_sft_adds_the_own_prefix_copies_to_its_examples(data, tmp_path, monkeypatch):
    import guirl.trainers.core as core
    from guirl.trainers.sft import train_sft

    path, _ = data
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps({"episode": "e0", "step": 0, "samples": [EQUAL, WRONG_COORDINATE]}) + "\n")
    seen = {}

    def train(cfg, model, examples, collate, loss, evaluate=None):  # no optimisation: what the trainer is given
        seen["examples"], seen["batch"] = examples, collate(examples)
        return {"model": model, "step": 0, "history": []}

    monkeypatch.setattr(core, "train", train)
    cfg = SFTConfig(model=str(ROOT / "checkpoints" / "base-agent-tiny"), train_data=[str(path)], format=FMT,
                    prompt_style="compact", own_prefix_samples=[str(samples)], output_dir=str(tmp_path / "run"))
    train_sft(cfg)
    own = [ex for ex in seen["examples"] if ex.prefix is not None]
    assert len(seen["examples"]) == 3 and [(ex.step.index, ex.answer) for ex in own] == [(0, "0, 250]}}\n</tool_call>")]
    assert seen["batch"]["labels"].shape[0] == 3
