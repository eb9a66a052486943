# guirl: the two set-up commands of the README.
#   make demo   install everything into .venv and run the main job on its embedded default
#   make test   install everything (Chromium included) and run the test suite
#   make test-vllm  build .venv-vllm (vLLM on CPU, docs/vllm.md) and run the vllm-marked tests
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.guirl-installed

VLLM_VENV  := .venv-vllm
VLLM_STAMP := $(VLLM_VENV)/.guirl-installed

.PHONY: setup demo test test-all browser bench lint vllm-venv test-vllm

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip
	# torch first, pinned (the CPU/CUDA wheel of this machine); nothing below may replace it
	$(BIN)/pip install torch==2.14.1 torchvision==0.29.1
	$(BIN)/pip install -e '.[dev,miniwob,ray]'
	touch $(STAMP)

setup: $(STAMP)

browser:
	bash scripts/install_browser.sh

demo: setup
	$(BIN)/guirl rl-demo

test: setup browser
	$(BIN)/python -m pytest -q

test-all: setup browser
	$(BIN)/python -m pytest -q -m ''

lint: setup
	$(BIN)/ruff check guirl tests benchmarks scripts

# vLLM needs torch 2.13 and transformers < 5.20: a venv of its own (~2.5 min, ~6.6 GB; docs/vllm.md)
$(VLLM_STAMP): pyproject.toml scripts/make_vllm_venv.sh
	PYTHON=$(PYTHON) bash scripts/make_vllm_venv.sh $(VLLM_VENV)
	touch $(VLLM_STAMP)

vllm-venv: $(VLLM_STAMP)

# only tests/test_vllm*.py is collected: the rest of the suite imports trl and miniwob, which this venv lacks
test-vllm: vllm-venv
	VLLM_CPU_KVCACHE_SPACE=1 $(VLLM_VENV)/bin/python -m pytest -q -m vllm $(wildcard tests/test_vllm*.py)
