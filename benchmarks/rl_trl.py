"""TRL 1.16's GRPOTrainer on a guirl GRPO recipe: the reference trainer of ``benchmarks/rl_recipes.py --trainer trl``.

    python benchmarks/rl_trl.py --config recipes/<recipe>.yaml [key=value ...]

The recipe is read through guirl's own ``GRPOConfig`` (the same file and overrides ``guirl train grpo`` reads), and
TRL gets what guirl would use: the starting model and its prompt (history window and thought as trained), the
states of ``train_data`` in the order guirl's trainer draws them (its seeded per-epoch permutation), B states x G
samples per optimiser step, temperature, top-p, length limit, the weighted guirl rewards (the same reward
columns per state), group-normalised advantages, clip range, KL beta (k3 in both), AdamW with the recipe's
learning rate, weight decay, betas, clipping norm and a constant schedule, and the frozen vision tower.
TRL's prompt ids are checked equal to guirl's for the first state; ``processor.tokenizer.padding_side`` is set
to ``left`` (TRL rebuilds ``mm_token_type_ids`` with it).

What TRL's GRPOTrainer does not have is refused with one line (exit 2): an advantage other than ``grpo``
(RLOO, SNGS), LoRA, dynamic sampling, the overlong filter, sequence-level ratios other than TRL's own, mu > 1.
The final model is saved like guirl's trainer saves it (``OUTPUT_DIR/final``: weights, processor, prompt spec).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def unsupported(cfg) -> list[str]:
    """The recipe settings TRL's GRPOTrainer cannot reproduce (empty: it can run the recipe)."""
    problems = []
    if cfg.advantage != "grpo" or cfg.advantage_kwargs:
        problems.append(f"advantage={cfg.advantage} (TRL's GRPOTrainer has group-normalised GRPO only; "
                        "override advantage=grpo 'advantage_kwargs={}')")
    if cfg.success_signal:
        problems.append("success_signal (SNGS only; override success_signal=null)")
    for field, off in (("lora_rank", 0), ("dynamic_sampling", False), ("overlong_filter", False), ("mu", 1)):
        if getattr(cfg, field) != off:
            problems.append(f"{field}={getattr(cfg, field)} (run it with {field}={off})")
    if cfg.loss_agg_mode != "token-mean":
        problems.append(f"loss_agg_mode={cfg.loss_agg_mode} (TRL's 'dapo' loss is guirl's token-mean)")
    if cfg.kl_coef and cfg.kl_estimator != "k3":
        problems.append(f"kl_estimator={cfg.kl_estimator} (TRL's KL term is k3)")
    return problems


def reward_function(specs, policy, states, name: str = "guirl_reward"):
    """guirl's weighted rewards (``specs``: RewardSpecs) as one TRL reward function named ``name`` (TRL logs it
    under that name); the reward columns of each state are built once."""
    from guirl.rewards import columns_for, reward_columns
    from guirl.trainers.rl_common import WeightedRewards

    rewards = WeightedRewards(specs)
    cache: dict[int, dict] = {}

    def guirl_reward(completions, state_index, completion_ids=None, **_):
        for i in set(state_index):
            if i not in cache:
                s = states[i]
                cache[i] = reward_columns(s.step, s.episode,
                                          policy.frame_for(s.step.screenshot.width, s.step.screenshot.height))
        texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
        columns = columns_for([cache[i] for i in state_index], group_size=1)
        if completion_ids is not None:
            columns["completion_ids"] = list(completion_ids)
        totals, _, _ = rewards(texts, columns)
        return totals

    guirl_reward.__name__ = name
    return guirl_reward


def train_trl(cfg) -> Path:
    import torch
    from grpo_bench_runs import check_same_prompt_ids, state_order, trl_dataset
    from trl import GRPOConfig as TRLConfig
    from trl import GRPOTrainer

    from guirl.models.scoring import encode_prompt
    from guirl.rollout.history import recorded_prompt
    from guirl.trainers.grpo import load_rl_policy, save_final
    from guirl.trainers.rl_common import load_states

    if cfg.num_threads:
        torch.set_num_threads(cfg.num_threads)
    torch.manual_seed(cfg.seed)
    policy = load_rl_policy(cfg)  # full fine-tuning, the vision tower frozen as the recipe says
    processor = policy.processor
    processor.tokenizer.padding_side = "left"
    states = load_states(cfg.train_data, cfg.data_format, cfg.image_root, cfg.step_labels)
    samples_per_step = cfg.batch_size * cfg.group_size
    order = state_order(len(states), cfg.seed, cfg.max_steps * cfg.batch_size)
    rows = trl_dataset(policy, states, order)
    first = states[order[0]]
    prompt, _ = recorded_prompt(policy.prompt, policy.frame_for, first.episode, first.step, first.root)
    check_same_prompt_ids(processor, rows[0], encode_prompt(processor, prompt).input_ids)
    micro = min(cfg.micro_batch_size, samples_per_step)
    while samples_per_step % micro:
        micro -= 1
    o = cfg.optim
    args = TRLConfig(
        output_dir=cfg.output_dir, seed=cfg.seed, max_steps=cfg.max_steps,
        learning_rate=o.lr, lr_scheduler_type=o.schedule, warmup_steps=int(o.warmup_ratio * cfg.max_steps),
        weight_decay=o.weight_decay, adam_beta1=o.betas[0], adam_beta2=o.betas[1], max_grad_norm=o.max_grad_norm,
        per_device_train_batch_size=micro, gradient_accumulation_steps=samples_per_step // micro,
        num_generations=cfg.group_size, max_completion_length=cfg.max_new_tokens,
        temperature=cfg.temperature, top_p=cfg.top_p, top_k=0,
        beta=cfg.kl_coef, epsilon=cfg.clip_eps_low, epsilon_high=cfg.clip_eps_high,
        importance_sampling_level=cfg.ratio_level, loss_type="dapo", scale_rewards="group", num_iterations=1,
        shuffle_dataset=False, use_cpu=True, bf16=False, gradient_checkpointing=False,
        logging_steps=cfg.log_every, save_strategy="no", report_to="none", disable_tqdm=True,
        dataloader_num_workers=0,
    )
    trainer = GRPOTrainer(model=policy.model, reward_funcs=[reward_function(cfg.rewards, policy, states)], args=args,
                          train_dataset=rows, processing_class=processor)
    trainer.train()
    return save_final(policy, trainer.model, Path(cfg.output_dir))


def main() -> int:
    from guirl.config import ConfigError, load_config
    from guirl.trainers.grpo import GRPOConfig

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", required=True, help="a guirl GRPO recipe (recipes/*.yaml)")
    parser.add_argument("overrides", nargs="*", help="key=value overrides, as for guirl train grpo")
    args = parser.parse_args()
    try:
        cfg = load_config(GRPOConfig, args.config, args.overrides)
    except ConfigError as err:
        print(f"rl_trl: error: {err}", file=sys.stderr)
        return 2
    problems = unsupported(cfg)
    if problems:
        print(f"rl_trl: error: {args.config} uses what TRL's GRPOTrainer does not have: {'; '.join(problems)}",
              file=sys.stderr)
        return 2
    start = time.perf_counter()
    final = train_trl(cfg)
    print(f"TRL GRPOTrainer: {cfg.max_steps} steps in {time.perf_counter() - start:.0f} s; final model in {final}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
