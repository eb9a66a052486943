"""Can an RL recipe fit a few training states? Trained on a small fixed set, measured on those very states.

    python benchmarks/rl_fit.py [--recipe guilibra_kl_grpo_sngs_tiny] [--episodes-per-task 2] [--lrs 1e-5 1e-4]
                                [--batch-size 4] [--steps 200] [--out runs/bench-rl-fit] [--results results/rl_fit.json]

The tiny RL recipes do not beat their start on held-out steps, and the success of a sample on their own training
states does not rise either (``benchmarks/rl_room.py --models``). Those states are mostly ones a run never drew (a
run of 300 steps of one state draws about a quarter of data seed 3's 1,099 states, each once). This benchmark
tells the two readings apart: the first ``--episodes-per-task`` episodes of every family of data seed 3 (the
"fit" set) are the only training states, each drawn many times (``--steps`` x ``--batch-size`` draws), and every
run is then measured by ``rl_room`` on

- the fit set itself: greedy step success and the success of ``--k`` samples at the training temperature, each
  state paired with the start; if RL's update climbs its objective at all, the sample success rises here;
- 200 states of the other episodes of data seed 3 (the "rest"): what of it carries to screens not trained on.

Each run trains through the recipe's own ``guirl train`` command (the recipe as written, with ``train_data`` set to
the fit set and ``batch_size`` / ``max_steps`` / ``optim.lr`` / ``seed`` given here, plus any ``key=value``
overrides), its wall time, own peak RSS and CPU seconds measured by ``rl_recipes.run_measured``. A finished run
(``final/config.json``) is not trained again, so an interrupted benchmark resumes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

TEMPERATURE_DEFAULT = 1.0


def split_episodes(train: Path, per_task: int) -> tuple[Path, Path]:
    """Write the first ``per_task`` episodes of each task of ``train`` (file order) and the other episodes as two
    trajectories files beside it (so their screenshots resolve the same way); their paths.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "train.jsonl").write_text("".join(json.dumps({"task": t, "id": i}) + "\\n" for i, t in enumerate("aabab")))
    >>> fit, rest = split_episodes(d / "train.jsonl", 1)
    >>> [json.loads(x)["id"] for x in fit.read_text().splitlines()], [json.loads(x)["id"] for x in rest.read_text().splitlines()]
    ([0, 2], [1, 3, 4])
    """
    taken: dict[str, int] = defaultdict(int)
    fit, rest = [], []
    for line in train.read_text().splitlines():
        if not line.strip():
            continue
        task = json.loads(line)["task"]
        (fit if taken[task] < per_task else rest).append(line)
        taken[task] += 1
    paths = train.with_name(f"fit-{per_task}pt.jsonl"), train.with_name(f"rest-{per_task}pt.jsonl")
    for path, lines in zip(paths, (fit, rest), strict=True):
        path.write_text("".join(x + "\n" for x in lines))
    return paths


def main(argv: list[str] | None = None) -> dict:
    import rl_room
    import yaml
    from base_agent import commit, write_result
    from rl_recipes import _portable, ensure_data, recipe_method, run_measured

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="more recipe overrides for every run")
    parser.add_argument("--recipe", default="guilibra_kl_grpo_sngs_tiny", help="a recipe of recipes/ (no .yaml)")
    parser.add_argument("--episodes-per-task", type=int, default=2, help="episodes of each family in the fit set")
    parser.add_argument("--lrs", type=float, nargs="+", default=[1e-5, 1e-4], help="one run per learning rate")
    parser.add_argument("--batch-size", type=int, default=4, help="states a step")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0, help="training seed")
    parser.add_argument("--k", type=int, default=8, help="samples per state in the measurement")
    parser.add_argument("--rest-states", type=int, default=200, help="states of the other episodes measured")
    parser.add_argument("--data", default="runs/bench-rl-room", help="where data seed 3 is generated")
    parser.add_argument("--out", type=Path, default=Path("runs/bench-rl-fit"))
    parser.add_argument("--results", default=None, help="write the table as JSON here (e.g. results/rl_fit.json)")
    args = parser.parse_args(argv)
    recipe_path = ROOT / "recipes" / f"{args.recipe}.yaml"
    if not recipe_path.is_file():
        parser.error(f"--recipe {args.recipe}: no recipes/{args.recipe}.yaml; give a recipe name of recipes/")
    if any("=" not in o for o in args.overrides):
        parser.error(f"overrides {args.overrides}: give each as key=value (e.g. kl_coef=0)")
    recipe = yaml.safe_load(recipe_path.read_text())
    temperature = str(float(recipe.get("temperature", TEMPERATURE_DEFAULT)))
    tokens = str(recipe.get("max_new_tokens", 80))
    train = ensure_data(Path(args.data), 3) / "trajectories" / "train.jsonl"
    fit, rest = split_episodes(train, args.episodes_per_task)

    runs: dict[str, dict] = {}
    for lr in args.lrs:
        name = f"lr{lr:g}"
        run = (args.out / name).resolve()
        cost = run / "cost.json"
        if not (run / "final" / "config.json").is_file() or not cost.is_file():
            cmd = [sys.executable, "-m", "guirl", "train", recipe_method(args.recipe), "--config", str(recipe_path),
                   f"train_data=[{fit}]", f"batch_size={args.batch_size}", f"max_steps={args.steps}",
                   f"optim.lr={lr}", f"seed={args.seed}", f"output_dir={run}", f"save_every={args.steps}",
                   "report_to=[]", *args.overrides]
            print("$ " + " ".join(cmd[2:]), flush=True)
            wall, peak, cpu = run_measured(cmd)
            cost.write_text(json.dumps({"wall_s": round(wall, 1), "peak_rss_mb": round(peak), "cpu_s": round(cpu, 1)}))
        runs[name] = {"lr": lr, "model": str(run / "final"), **json.loads(cost.read_text())}

    models = [f"start={recipe['model']}", *(f"{n}={r['model']}" for n, r in runs.items())]
    common = ["--k", str(args.k), "--temperatures", temperature, "--max-new-tokens", tokens, "--out", "",
              "--models", *models]
    measured = {"fit": rl_room.main(["--split", str(fit), "--states", str(10**9), *common]),
                "rest": rl_room.main(["--split", str(rest), "--states", str(args.rest_states), *common])}
    for part in measured.values():
        part.pop("command", None), part.pop("commit", None)
    result = {
        "recipe": args.recipe, "start": _portable(str(recipe["model"])), "train_data_seed": 3,
        "episodes_per_task": args.episodes_per_task, "batch_size": args.batch_size, "steps": args.steps,
        "seed": args.seed, "overrides": args.overrides, "temperature": float(temperature),
        "runs": {n: {k: v for k, v in r.items() if k != "model"} for n, r in runs.items()}, **measured,
        "command": " ".join(["python", "benchmarks/rl_fit.py", *(argv if argv is not None else sys.argv[1:])]),
        "commit": commit()}
    print(f"{'run':>10} {'set':>5} {'greedy':>7} {'diff':>7} {'sample':>7} {'diff':>7}  [95% interval]")
    for part in ("fit", "rest"):
        for name, row in measured[part]["models"].items():
            (r,) = row["rows"]
            vs = row.get("versus_first")
            g = vs["greedy"]["diff"] if vs else 0.0
            s = vs["sample_success"][temperature] if vs else {"diff": 0.0, "low": 0.0, "high": 0.0}
            print(f"{name:>10} {part:>5} {r['greedy']:>7.3f} {g:>+7.3f} {r['sample_success']:>7.3f} "
                  f"{s['diff']:>+7.3f}  [{s['low']:+.3f}, {s['high']:+.3f}]")
    if args.results:
        write_result(args.results, result)
    return result


if __name__ == "__main__":
    main()
