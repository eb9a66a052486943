"""Figures for the tiny policies: size, visual tokens, build / generate / demo time (CPU).

Run: ``.venv/bin/python benchmarks/models_tiny.py`` (1 thread: fastest for tiny models). Prints one
line per figure; nothing is asserted (speed goals live here, not in tests).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from PIL import Image  # noqa: E402

from guirl.models.build import ARCHS, build_model_dir, count_parameters  # noqa: E402
from guirl.models.generate import generate_actions  # noqa: E402
from guirl.models.load import load_policy  # noqa: E402


def _visual_tokens(policy, size: tuple[int, int]) -> int:
    grid = policy.processor.image_processor(images=[Image.new("RGB", size)], return_tensors="pt")["image_grid_thw"]
    return int(grid.prod()) // policy.processor.image_processor.merge_size**2


def main() -> None:
    torch.set_num_threads(1)
    root = Path(tempfile.mkdtemp(prefix="guirl-bench-"))
    screen = Image.new("RGB", (256, 256), (200, 200, 200))
    for arch in ARCHS:
        start = time.perf_counter()
        path = build_model_dir(arch, root / arch, seed=0)
        built = time.perf_counter() - start
        policy = load_policy(path)
        parameters = count_parameters(policy.model)
        print(f"{arch}: parameters {parameters:,}; vocab {len(policy.tokenizer)}; build {built:.2f}s")
        for size in ((256, 256), (1920, 1080)):
            print(f"{arch}: visual tokens for {size[0]}x{size[1]}: {_visual_tokens(policy, size)}")
        generate_actions(policy, screen, "Click OK", temperature=0, max_new_tokens=4)  # warm-up
        start = time.perf_counter()
        generate_actions(policy, screen, "Click OK", temperature=1.0, max_new_tokens=64, num_samples=8)
        print(f"{arch}: 8 samples x up to 64 new tokens on 256x256: {time.perf_counter() - start:.2f}s")
    for label, args in (("fresh build", []), ("reuse", [])):
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "guirl", "demo", "--out", str(root / "demo"), *args],
            check=True,
            capture_output=True,
            text=True,
        )
        inside = result.stdout.strip().splitlines()[-1].rsplit("done in ", 1)[-1]
        print(f"guirl demo ({label}): whole process {time.perf_counter() - start:.2f}s, after imports {inside}")


if __name__ == "__main__":
    main()
