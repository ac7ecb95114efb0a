# The few commands people need. Each one creates or reuses the virtual environment .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: lab restore test lint format solutions lessons bench clean

# Notebook tests: the kernel runs in this environment; memory addresses are masked.
NBVAL := --nbval-current-env --nbval-cell-timeout=300 --nbval-sanitize-with tests/nbval_sanitize.cfg

# JupyterLab refuses to run as root unless told; containers often run as root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

lab: $(VENV)/.learner      ## set up, copy new lessons to workspace/, open JupyterLab there
	$(BIN)/python -m course_lib.workspace prepare
	$(BIN)/jupyter lab workspace/ $(ROOT_FLAG)

restore: $(VENV)/.learner  ## fresh copy of one lesson, the old one kept: make restore LESSON=03
	$(BIN)/python -m course_lib.workspace restore $(LESSON)

test: $(VENV)/.dev         ## set up, then lint and run every test and every notebook
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest
	$(BIN)/python -m pytest --nbval solutions/ $(NBVAL)
	$(BIN)/python -m pytest --nbval-lax lessons/ $(NBVAL)

lint: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(VENV)/.dev
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

solutions: $(VENV)/.dev    ## re-run the solution notebooks in place, then regenerate lessons/
	$(BIN)/python -m course_lib.authoring execute
	$(BIN)/python -m course_lib.authoring lessons

lessons: $(VENV)/.dev      ## regenerate lessons/ from solutions/
	$(BIN)/python -m course_lib.authoring lessons

bench: $(VENV)/.dev        ## print the speed figures recorded in benchmarks/README.md
	$(BIN)/python benchmarks/attention_speed.py
	$(BIN)/python benchmarks/training_throughput.py
	$(BIN)/python benchmarks/train_translator.py
	$(BIN)/python benchmarks/widget_redraw.py

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
