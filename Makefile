# The few commands people need. Each one creates or reuses the virtual environment .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: lab test lint format bench clean

# JupyterLab refuses to run as root unless told; containers often run as root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

lab: $(VENV)/.learner      ## set up, then open the lessons in JupyterLab
	$(BIN)/jupyter lab lessons/ $(ROOT_FLAG)

test: $(VENV)/.dev         ## set up, then lint and run every test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest

lint: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(VENV)/.dev
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(VENV)/.dev        ## print the speed figures recorded in benchmarks/README.md
	$(BIN)/python benchmarks/attention_speed.py
	$(BIN)/python benchmarks/training_throughput.py
	$(BIN)/python benchmarks/train_translator.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info

$(VENV)/bin/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
		|| { echo "Python 3.11 or later is needed; set PYTHON=/path/to/python3.11"; exit 1; }
	$(PYTHON) -m venv $(VENV)

$(VENV)/.learner: requirements.txt pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install -r requirements.txt -e .
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install -r requirements-dev.txt -e .
	touch $@ $(VENV)/.learner
