# A learner's commands: set up the environment, then work on copies of the lessons. Each one
# creates or reuses the virtual environment .venv. The course's Makefile includes this file, and
# the students' release (make release) ships it as its Makefile.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: lab update restore

# JupyterLab refuses to run as root unless told; containers often run as root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

lab: $(VENV)/.learner      ## set up, copy new lessons to workspace/, list outdated copies, open JupyterLab
	$(BIN)/python -m course_lib.workspace prepare
	$(BIN)/jupyter lab workspace/ $(ROOT_FLAG)

update: $(VENV)/.learner   ## new version of one lesson, your answers carried over: make update LESSON=03
	$(BIN)/python -m course_lib.workspace update $(LESSON)

restore: $(VENV)/.learner  ## fresh copy of one lesson, the old one kept: make restore LESSON=03
	$(BIN)/python -m course_lib.workspace restore $(LESSON)

# PYTHON must run and be 3.11 or later; otherwise say which one was tried and what it said.
NEED_PYTHON = @version=$$($(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) \
	|| { echo "PYTHON=$(PYTHON) could not run ($$(command -v $(PYTHON) || echo 'not on PATH')):"; \
	     $(PYTHON) -c pass 2>&1 | sed '/^$$/d' | head -n 3 | sed 's/^/    /'; \
	     echo "Set PYTHON to a Python 3.11 or later that runs, e.g. make lab PYTHON=/usr/bin/python3.11"; \
	     exit 1; }; \
	case $$version in 3.1[1-9]|3.[2-9][0-9]) ;; \
	*) echo "PYTHON=$(PYTHON) is Python $$version; the course needs 3.11 or later."; \
	   echo "Set PYTHON to one, e.g. make lab PYTHON=/usr/bin/python3.11"; exit 1;; esac

$(VENV)/bin/python:
	$(NEED_PYTHON)
	$(PYTHON) -m venv $(VENV)

# Where torch comes from. PyPI's torch for Linux is the CUDA build, with several GB of nvidia-*
# packages that only an NVIDIA GPU uses; so on Linux without one (no driver, no nvidia-smi) the
# small CPU build comes from PyTorch's own index. Elsewhere (macOS, Windows, Linux with an NVIDIA
# GPU) PyPI's default build, and so wherever pip has an index of its own (PIP_INDEX_URL, or
# index-url in pip's configuration: a mirror). Choose yourself with TORCH_INDEX=<a PyTorch
# wheel index>, or TORCH_INDEX= (empty) for pip's default index: make lab TORCH_INDEX=
CPU_TORCH   := https://download.pytorch.org/whl/cpu
NVIDIA_GPU  := $(shell { [ -e /proc/driver/nvidia/version ] || command -v nvidia-smi; } >/dev/null 2>&1 && echo yes)
PIP_INDEX    = $(shell $(PYTHON) -m pip config list 2>/dev/null | grep -q '\.index-url=' && echo yes)
TORCH_INDEX ?= $(if $(filter Linux,$(shell uname -s)),$(if $(NVIDIA_GPU)$(PIP_INDEX),,$(CPU_TORCH)))
TORCH       = $(shell sed -n 's/^\(torch==[^ ]*\).*/\1/p' requirements.txt)
TORCH_FIRST = $(if $(TORCH_INDEX),@echo "$(TORCH) from $(TORCH_INDEX) (TORCH_INDEX= for PyPI's default build)"; \
	$(BIN)/python -m pip install $(TORCH) --index-url $(TORCH_INDEX))

$(VENV)/.learner: requirements.txt pyproject.toml | $(VENV)/bin/python
	$(TORCH_FIRST)
	$(BIN)/python -m pip install -r requirements.txt -e .
	touch $@

