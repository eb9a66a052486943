# guirl: the two set-up commands of the README.
#   make demo   install everything into .venv and run the main job on its embedded default
#   make test   install everything (Chromium included) and run the test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.guirl-installed

.PHONY: setup demo test test-all browser bench lint

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip
	# torch first, pinned (the CPU/CUDA wheel of this machine); nothing below may replace it
	$(BIN)/pip install torch==2.14.1 torchvision==0.29.1
	$(BIN)/pip install -e '.[dev,miniwob]'
	touch $(STAMP)

setup: $(STAMP)

browser:
	bash scripts/install_browser.sh

demo: setup
	$(BIN)/guirl demo

test: setup browser
	$(BIN)/python -m pytest -q

test-all: setup browser
	$(BIN)/python -m pytest -q -m ''

lint: setup
	$(BIN)/ruff check guirl tests benchmarks scripts
