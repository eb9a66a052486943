"""Guided on-policy distillation: guidance choice, the privileged block, losses, the trainer and its teacher."""

from __future__ import annotations

import json
import math
import random
import shutil
import warnings
from pathlib import Path

import pytest
import torch
from models_fixtures import tiny_model_dir

from guirl.actions import Action, Frame, ParseFailure
from guirl.algorithms import bucket_reverse_kl, reverse_kl_full_vocab, reverse_kl_sampled_token
from guirl.models.guidance import Guidance, UnguidedMonitor, choose_guidance, guidance_block
from guirl.models.prompts import GUIDANCE_HEADER
from guirl.rollout.hf_engine import HFEngine
from guirl.trainers.opd import OPDConfig, OPDSampler, Teacher, opd_loss, train_opd
from guirl.trainers.rl_common import load_states

SCREEN = Frame.screen(200, 100)
FMT = "qwen_computer_use"


def click(x, y, box=None, kind="click"):
    return Action(type=kind, point=(x, y), box=box, frame=SCREEN)


def config(tmp_path, data, **overrides) -> OPDConfig:
    base = {"model": str(tiny_model_dir("qwen3_vl")), "teacher": "self", "output_dir": str(tmp_path / "run"),
            "train_data": [str(data)], "max_steps": 2, "batch_size": 2, "samples_per_state": 2,
            "micro_batch_size": 8, "max_new_tokens": 6, "save_every": 0, "log_every": 1, "report_to": [],
            "num_threads": 1, "optim": {"lr": 1e-3, "max_grad_norm": 0.0}}
    return OPDConfig(**(base | overrides))


# --- guidance choice -------------------------------------------------------------------------------------


def test_most_matched_picks_the_nearest_reference_ties_first_and_falls_back_on_garbage():
    left, right = click(20, 50, (0, 40, 40, 60)), click(180, 50, (160, 40, 200, 60))
    rng = random.Random(0)
    g = choose_guidance("most_matched", [left, right], FMT, rng, pred=click(175, 52), screen=SCREEN)
    assert g.index == 1 and g.actions == [right] and not g.fallback
    g = choose_guidance("most_matched", [left, right], FMT, rng, pred=click(25, 48), screen=SCREEN)
    assert g.index == 0
    twin = click(20, 50, (0, 40, 40, 60))  # a tie (equal scores): the first maximum, as LiteGUI's argmax
    g = choose_guidance("most_matched", [right, twin, left], FMT, rng, pred=click(20, 50), screen=SCREEN)
    assert g.index == 1
    g = choose_guidance("most_matched", [right, left], FMT, rng, pred=ParseFailure(reason="garbage"), screen=SCREEN)
    assert g.index == 0 and g.fallback and g.actions == [right]  # the deterministic reference
    # the type counts too: a double click at the left box matches the double-click reference
    dbl = click(20, 50, (0, 40, 40, 60), kind="double_click")
    g = choose_guidance("most_matched", [left, dbl], FMT, rng, pred=click(20, 50, kind="double_click"), screen=SCREEN)
    assert g.index == 1


def test_single_is_seeded_multi_is_the_set_none_is_empty():
    refs = [click(20, 50), click(180, 50), click(100, 10)]
    draws = [choose_guidance("single", refs, FMT, random.Random(3)).index for _ in range(3)]
    assert len(set(draws)) == 1  # same seed, same reference
    seen = {choose_guidance("single", refs, FMT, random.Random(s)).index for s in range(40)}
    assert seen == {0, 1, 2}  # uniform over A*_t: every reference gets drawn
    assert choose_guidance("multi", refs, FMT, random.Random(0)).actions == refs
    assert choose_guidance("none", refs, FMT, random.Random(0)).text(FMT, SCREEN) is None
    with pytest.raises(ValueError, match="unknown guidance mode 'best'"):
        choose_guidance("best", refs, FMT, random.Random(0))


def test_guidance_that_cannot_be_written_is_flagged_unguided():
    # qwen_computer_use writes no home / back: no action of this A*_t can be a reference under any mode
    mobile_only = [Action(type="home"), Action(type="back")]
    for mode in ("single", "multi", "most_matched"):
        g = choose_guidance(mode, mobile_only, FMT, random.Random(0), pred=click(5, 5), screen=SCREEN)
        assert g.actions == [] and g.unguided and g.text(FMT, SCREEN) is None
    assert not choose_guidance("none", mobile_only, FMT, random.Random(0)).unguided  # plain OPD asked for
    # one writable action is enough: it is the reference
    g = choose_guidance("multi", [*mobile_only, click(20, 50)], FMT, random.Random(0))
    assert g.actions == [click(20, 50)] and not g.unguided


def test_unguided_monitor_counts_each_batch_and_warns_once():
    guided, unguided = Guidance([click(20, 50)]), Guidance([], unguided=True)
    monitor = UnguidedMonitor(threshold=0.25)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at or under the threshold
        assert monitor.update([unguided, guided, guided, guided]) == {"guidance/unguided": 1.0,
                                                                      "guidance/unguided_frac": 0.25}
    with pytest.warns(UserWarning, match="2 of 4 samples in this batch got no reference"):
        assert monitor.update([unguided, unguided, guided, guided], "multi")["guidance/unguided_frac"] == 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once only
        assert monitor.update([unguided] * 3)["guidance/unguided"] == 3.0
    assert monitor.update([])["guidance/unguided_frac"] == 0.0
    with pytest.raises(ValueError, match="threshold"):
        UnguidedMonitor(1.5)


def test_guidance_block_writes_references_as_the_model_writes_answers():
    model_frame = Frame.relative(1000)
    one = guidance_block([click(20, 50)], FMT, model_frame)
    assert one.startswith("Reference action: ") and '"coordinate": [100, 500]' in one
    many = guidance_block([click(20, 50), click(180, 50, kind="double_click")], FMT, model_frame)
    lines = many.splitlines()
    assert lines[0] == "Reference actions (any one is correct):" and "1. " in many and "2. " in many
    assert '"double_click"' in many and '"coordinate": [900, 500]' in many


# --- losses against slow references ----------------------------------------------------------------------


def _slow_full_kl(p_logits, q_logits):
    out = torch.zeros(p_logits.shape[:2], dtype=torch.float64)
    for b in range(p_logits.shape[0]):
        for t in range(p_logits.shape[1]):
            p = torch.softmax(p_logits[b, t].double(), -1)
            q = torch.softmax(q_logits[b, t].double(), -1)
            out[b, t] = sum(float(p[v]) * math.log(float(p[v]) / float(q[v])) for v in range(p.shape[0]))
    return out


def test_losses_agree_with_slow_references():
    torch.manual_seed(0)
    s, q = torch.randn(2, 3, 7), torch.randn(2, 3, 7)
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    slow = _slow_full_kl(s, q)
    loss, _ = reverse_kl_full_vocab(s, q, mask)
    assert float(loss) == pytest.approx(float((slow * mask).sum() / mask.sum()), abs=1e-6)
    # top-k + tail with the teacher's top-3 ids: buckets by hand
    log_p, log_q = torch.log_softmax(s, -1), torch.log_softmax(q, -1)
    ids = log_q.topk(3, -1).indices
    fast = bucket_reverse_kl(log_p.gather(-1, ids), log_q.gather(-1, ids))
    for b in range(2):
        for t in range(3):
            p, r = log_p[b, t].exp().double(), log_q[b, t].exp().double()
            top = ids[b, t].tolist()
            pb = [float(p[i]) for i in top] + [1 - sum(float(p[i]) for i in top)]
            qb = [float(r[i]) for i in top] + [1 - sum(float(r[i]) for i in top)]
            assert float(fast[b, t]) == pytest.approx(sum(a * math.log(a / c) for a, c in zip(pb, qb)), abs=1e-5)
    # all ids: the bucket KL is the full KL (the tail is empty)
    every = torch.arange(7).expand(2, 3, 7)
    full_buckets = bucket_reverse_kl(log_p.gather(-1, every), log_q.gather(-1, every))
    assert torch.allclose(full_buckets.double(), slow, atol=1e-5)
    # sampled token: value is the mean of log p - log q over the sampled tokens; its expectation is the KL
    tokens = torch.tensor([[1, 4, 0], [6, 2, 2]])
    lp, lq = log_p.gather(-1, tokens[..., None])[..., 0], log_q.gather(-1, tokens[..., None])[..., 0]
    loss, _ = reverse_kl_sampled_token(lp, lq, mask)
    assert float(loss) == pytest.approx(float(((lp - lq) * mask).sum() / mask.sum()), abs=1e-6)


# --- the trainer -----------------------------------------------------------------------------------------


def _sampled(tmp_path, sim_data, **overrides):
    from guirl.trainers.grpo import load_rl_policy

    cfg = config(tmp_path, sim_data, **overrides)
    policy = load_rl_policy(cfg)
    teacher = Teacher(cfg.teacher, cfg.model, policy.processor)
    states = load_states(cfg.train_data)
    sampler = OPDSampler(cfg, policy, HFEngine.from_policy(policy), teacher)
    batches, logged = sampler(policy.model, 0, [states[:2]])
    return cfg, policy, teacher, batches, logged


def test_sampler_counts_samples_left_without_a_reference(tmp_path, sim_data):
    from guirl.trainers.grpo import load_rl_policy
    from guirl.trainers.rl_common import RecordedState

    cfg = config(tmp_path, sim_data, guidance="multi", unguided_warn_frac=0.3)
    policy = load_rl_policy(cfg)
    sampler = OPDSampler(cfg, policy, HFEngine.from_policy(policy), Teacher(cfg.teacher, cfg.model, policy.processor),
                         log_path=tmp_path / "guidance.jsonl")
    first, second = load_states(cfg.train_data)[:2]
    home = first.step.model_copy(update={"valid_actions": [Action(type="home")], "action": Action(type="home")})
    states = [RecordedState(first.episode, home, first.root), second]
    # 2 states x 2 samples: the first state's A*_t has nothing qwen_computer_use writes -> 2 of 4 unguided
    with pytest.warns(UserWarning, match="2 of 4 samples"):
        batches, logged = sampler(policy.model, 0, [states])
    assert logged["guidance/unguided"] == 2.0 and logged["guidance/unguided_frac"] == 0.5
    samples = [s for b in batches for s in b]
    tok = policy.processor.tokenizer
    for s in samples:  # unguided samples' teacher prompt is the student's own; the others carry the block
        same = list(s.teacher_prompt.input_ids) == list(s.prompt.input_ids)
        assert same == s.extra["guidance"]["unguided"]
        assert (GUIDANCE_HEADER in tok.decode(list(s.teacher_prompt.input_ids))) != same
    rows = [json.loads(line) for line in (tmp_path / "guidance.jsonl").read_text().splitlines()]
    assert [r["unguided"] for r in rows] == [True, True, False, False]


def test_teacher_input_is_the_student_input_plus_only_the_block(tmp_path, sim_data):
    cfg, policy, _, batches, logged = _sampled(tmp_path, sim_data, guidance="multi")
    samples = [s for b in batches for s in b]
    assert len(samples) == 4 and logged["guidance/teacher_prompts_per_state"] == 1.0
    tok = policy.processor.tokenizer
    for s in samples:
        student, teacher = list(s.prompt.input_ids), list(s.teacher_prompt.input_ids)
        assert GUIDANCE_HEADER not in tok.decode(student)
        # one contiguous insertion: a common prefix, then the block, then the same suffix (the assistant turn)
        start = next(i for i, (a, b) in enumerate(zip(student, teacher)) if a != b)
        inserted = len(teacher) - len(student)
        assert inserted > 0 and teacher[:start] == student[:start] and teacher[start + inserted:] == student[start:]
        block = tok.decode(teacher[start:start + inserted])
        assert GUIDANCE_HEADER in block and "Reference action" in block
        assert torch.equal(s.prompt.pixel_values, s.teacher_prompt.pixel_values)
    assert samples[0].teacher_prompt is samples[1].teacher_prompt  # one teacher prompt per distinct guidance


@pytest.mark.parametrize("loss", ["sampled_token", "full_vocab", "topk"])
def test_teacher_equal_to_student_without_guidance_gives_zero_loss_and_gradient(tmp_path, sim_data, loss):
    cfg, policy, teacher, batches, _ = _sampled(tmp_path, sim_data, guidance="none", loss=loss, top_k=5)
    policy.model.zero_grad()
    value, metrics = opd_loss(policy.model, policy.processor, teacher, batches[0], batches, cfg)
    value.backward()
    grads = [p.grad for p in policy.model.parameters() if p.grad is not None]
    assert abs(float(value.detach())) < 1e-6 and grads and max(float(g.abs().max()) for g in grads) < 1e-6
    assert metrics["distill/teacher_agreement"] >= 0


def test_guidance_changes_the_self_teacher_and_gives_a_gradient(tmp_path, sim_data):
    cfg, policy, teacher, batches, _ = _sampled(tmp_path, sim_data, guidance="single")
    policy.model.zero_grad()
    value, _ = opd_loss(policy.model, policy.processor, teacher, batches[0], batches, cfg)
    value.backward()
    assert abs(float(value.detach())) > 1e-4
    assert any(float(p.grad.abs().max()) > 0 for p in policy.model.parameters() if p.grad is not None)


def test_tokenizer_mismatch_is_refused_naming_both(tmp_path):
    from guirl.models.load import load_policy

    student = tiny_model_dir("qwen3_vl")
    other = tmp_path / "other-teacher"
    shutil.copytree(student, other)
    policy = load_policy(other)
    policy.processor.tokenizer.add_tokens(["<not_in_the_student>"])
    policy.processor.save_pretrained(other)
    with pytest.raises(ValueError, match=f"teacher {other} and student {student} have different tokenizers"):
        Teacher(str(other), str(student), load_policy(student).processor)


def test_distilling_a_teacher_lowers_the_kl_and_logs_every_choice(tmp_path, sim_data):
    """Student: a random tiny model; teacher: its weights with noise added (same tokenizer). Full-vocabulary
    OPD on a few states must bring the student's distribution towards the teacher's."""
    from guirl.models.load import load_policy

    teacher_dir = tmp_path / "teacher"
    shutil.copytree(tiny_model_dir("qwen3_vl"), teacher_dir)
    noisy = load_policy(teacher_dir)
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in noisy.model.parameters():
            p.add_(torch.randn(p.shape, generator=generator) * (p.std() if p.numel() > 1 else 0.0) * 0.5)
    noisy.model.save_pretrained(teacher_dir)
    cfg = config(tmp_path, sim_data, teacher=str(teacher_dir), loss="full_vocab", guidance="most_matched",
                 max_steps=12, max_new_tokens=8, optim={"lr": 3e-3, "max_grad_norm": 1.0})
    result = train_opd(cfg)
    logged = [json.loads(line) for line in (Path(cfg.output_dir) / "metrics.jsonl").read_text().splitlines()]
    kls = [m["distill/reverse_kl"] for m in logged]
    assert sum(kls[-3:]) / 3 < 0.7 * sum(kls[:3]) / 3, kls
    choices = [json.loads(line) for line in (Path(cfg.output_dir) / "guidance.jsonl").read_text().splitlines()]
    assert len(choices) == 12 * 2 * 2 and all(c["mode"] == "most_matched" and c["references"] == 1 for c in choices)
    assert (result["final_dir"] / "model.safetensors").is_file()


# --- the teacher's data and its evaluation ---------------------------------------------------------------


def test_sft_guided_copies_agree_with_their_references(sim_data):
    from guirl.models.load import load_policy
    from guirl.trainers.sft import SFTCollator, SFTConfig, build_examples

    cfg = SFTConfig(model=str(tiny_model_dir("qwen3_vl")), train_data=[str(sim_data)], guidance_fraction=1.0,
                    prompt_style="compact")
    examples = build_examples(cfg.train_data, cfg, 0)
    guided = [e for e in examples if e.guidance]
    plain = [e for e in examples if not e.guidance]
    assert guided and len(guided) == len(plain)  # every step once plain and once with a block
    for e in guided:
        valid = e.step.valid_actions or [e.step.action]
        if len(e.guidance) == 1:  # single: the target is the reference given
            assert e.target.type == e.guidance[0].type and e.target.point == e.guidance[0].target_point()
        else:  # multi: all of A*_t, the target one of them
            assert sorted(a.type.value for a in e.guidance) == sorted(a.type.value for a in valid)
    policy = load_policy(cfg.model)
    collate = SFTCollator(policy.processor, policy.frame_for, cfg)
    text = policy.processor.tokenizer.decode(collate.encode(guided[0])["input_ids"])
    assert GUIDANCE_HEADER in text and GUIDANCE_HEADER not in policy.processor.tokenizer.decode(
        collate.encode(plain[0])["input_ids"])


def test_evaluate_steps_reports_how_often_the_block_is_followed(sim_data):
    from guirl.eval.steps import evaluate_steps
    from guirl.models.load import load_policy

    policy = load_policy(tiny_model_dir("qwen3_vl"))
    steps = [(s.episode, s.step, s.root) for s in load_states([str(sim_data)])][:3]
    engine = HFEngine.from_policy(policy)
    plain = evaluate_steps(engine, policy.prompt, policy.frame_for, steps, max_new_tokens=4)
    assert "eval/followed" not in plain
    guided = evaluate_steps(engine, policy.prompt, policy.frame_for, steps, max_new_tokens=4,
                            guidance=[list(st.valid_actions[:1]) for _, st, _ in steps])
    assert 0.0 <= guided["eval/followed"] <= 1.0  # a random model writes no parsable action: 0
    with pytest.raises(ValueError, match="guidance has 1 entries for 3 steps"):
        evaluate_steps(engine, policy.prompt, policy.frame_for, steps, guidance=[None])


def test_pipeline_validates_every_stage_before_running(tmp_path):
    from guirl.config import ConfigError, load_config
    from guirl.trainers.pipeline import PipelineConfig, train_pipeline

    cfg = load_config(PipelineConfig, Path(__file__).resolve().parents[1] / "recipes" / "litegui_sft_free_tiny.yaml")
    assert [s.method for s in cfg.stages] == ["opd", "grpo"]
    bad = PipelineConfig(stages=[{"method": "opd", "config": str(cfg.stages[0].config), "set": {}},
                                 {"method": "dance", "config": "x.yaml"}])
    with pytest.raises(ConfigError, match="stage method 'dance' is not a trainer"):
        train_pipeline(bad)


def _losses(run: Path) -> dict[int, float]:
    return {m["step"]: m["train/loss"] for m in
            (json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines())}


def test_resume_gives_the_same_losses(tmp_path, sim_data):
    """Stopped at step 2 and resumed, the run logs the losses of an uninterrupted one (sampling seed and the
    Single-GT draws are functions of the step)."""
    straight = config(tmp_path, sim_data, guidance="single", max_steps=4, save_every=2,
                      output_dir=str(tmp_path / "straight"))
    train_opd(straight)
    train_opd(straight.model_copy(update={"max_steps": 2, "output_dir": str(tmp_path / "resumed")}))
    train_opd(straight.model_copy(update={"output_dir": str(tmp_path / "resumed")}))
    expected, got = _losses(tmp_path / "straight"), _losses(tmp_path / "resumed")
    assert set(got) == {1, 2, 3, 4}
    for step in range(1, 5):
        assert got[step] == pytest.approx(expected[step], rel=1e-6, abs=1e-9), step


def test_two_processes_under_torchrun(tmp_path, sim_data):
    import os
    import subprocess
    import sys

    import yaml

    root = Path(__file__).resolve().parents[1]
    base = str(root / "checkpoints" / "base-agent-tiny")
    cfg = config(tmp_path, sim_data, model=base, teacher=base, guidance="most_matched", batch_size=1,
                 samples_per_state=2, micro_batch_size=1, max_new_tokens=24, optim={"lr": 1e-4})
    path = tmp_path / "opd.yaml"
    path.write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
    env = dict(os.environ, PYTHONPATH=str(root), OMP_NUM_THREADS="1")
    done = subprocess.run([str(Path(sys.executable).parent / "torchrun"), "--standalone", "--nproc_per_node", "2",
                           "-m", "guirl", "train", "opd", "--config", str(path)], env=env, cwd=root,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(_losses(Path(cfg.output_dir))) == [1, 2]
    assert (Path(cfg.output_dir) / "final" / "model.safetensors").is_file()


@pytest.mark.parametrize(("student", "teacher"), [("base-agent-tiny", "litegui-teacher-tiny"),
                                                  ("base-agent-history-tiny", "litegui-teacher-history-tiny")])
def test_shipped_teacher_reads_the_block_and_the_base_agent_does_not(tmp_path, student, teacher):
    """On unseen built-in-world steps with several valid actions, given the last of A*_t (not the recorded
    first choice): each shipped teacher writes it, its base agent, which never saw the block, does not
    (measured on these 34 steps, teacher / base agent: first pair 0.71 / 0.00, history pair 0.62 / 0.06)."""
    from guirl.envs.sim import generate_dataset
    from guirl.eval.steps import evaluate_steps
    from guirl.models.guidance import references
    from guirl.models.load import load_policy

    root = Path(__file__).resolve().parents[1] / "checkpoints"
    generate_dataset(out_dir=str(tmp_path), seed=11, train_per_task=1, test_per_task=2, grounding_train=2,
                     grounding_test=2)
    states = load_states([str(tmp_path / "trajectories" / "test_seed.jsonl")], labels=["correct"])
    steps = [(s.episode, s.step, s.root) for s in states if len(references(s.step.valid_actions, FMT)) >= 2]
    given = [references(st.valid_actions, FMT)[-1:] for _, st, _ in steps]
    followed = {}
    for name in (student, teacher):
        policy = load_policy(root / name)
        followed[name] = evaluate_steps(HFEngine.from_policy(policy), policy.prompt, policy.frame_for, steps,
                                        max_new_tokens=80, guidance=given)["eval/followed"]
    assert len(steps) >= 20 and followed[teacher] >= 0.5 and followed[student] <= 0.1, followed


def test_student_logprobs_of_fresh_samples_equal_the_engine(tmp_path, sim_data):
    """The invariant: the student is trained on exactly the prompt tokens and images it sampled from."""
    from guirl.trainers.rl_common import score_samples

    cfg, policy, _, batches, _ = _sampled(tmp_path, sim_data, guidance="most_matched", max_new_tokens=10,
                                          temperature=1.0, top_p=1.0)
    samples = [s for b in batches for s in b]
    with torch.no_grad():
        out = score_samples(policy.model, policy.processor, samples, 1.0)
    for i, s in enumerate(samples):
        assert torch.allclose(out.logprobs[i, : s.num_tokens], torch.tensor(s.behaviour_logprobs), atol=1e-5)
