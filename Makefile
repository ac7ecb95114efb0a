# The few commands people need. Each one creates or reuses the virtual environment .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: lab update restore test test-versions test-portable test-sweep test-mutants test-graders graders-env e2e site site-solutions lint format solutions lessons checkpoint validate grade nbgrader otter bench clean

# Notebook tests: the kernel runs in this environment; memory addresses are masked.
NBVAL := --nbval-current-env --nbval-cell-timeout=300 --nbval-sanitize-with tests/nbval_sanitize.cfg

# JupyterLab refuses to run as root unless told; containers often run as root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

lab: $(VENV)/.learner      ## set up, copy new lessons to workspace/, list outdated copies, open JupyterLab
	$(BIN)/python -m course_lib.workspace prepare
	$(BIN)/jupyter lab workspace/ $(ROOT_FLAG)

update: $(VENV)/.learner   ## new version of one lesson, your answers carried over: make update LESSON=03
	$(BIN)/python -m course_lib.workspace update $(LESSON)

restore: $(VENV)/.learner  ## fresh copy of one lesson, the old one kept: make restore LESSON=03
	$(BIN)/python -m course_lib.workspace restore $(LESSON)

# Two workers (pytest-xdist), one per core, each given whole files (--dist loadfile): nbval runs
# a notebook's cells in order in one kernel, and a test module's shared fixtures (a grading run,
# a trained model) are then built once. Each phase prints its time.
WORKERS := -n 2 --dist loadfile
TIMED   := $(BIN)/python tests/timed.py

test: $(VENV)/.dev         ## set up, then lint, the unit tests, solutions/ compared and lessons/ run
	$(TIMED) lint sh -c "$(BIN)/ruff check . && $(BIN)/ruff format --check ."
	$(TIMED) "unit tests" $(BIN)/python -m pytest $(WORKERS)
	$(TIMED) "solutions/, compared" $(BIN)/python -m pytest $(WORKERS) --nbval solutions/ $(NBVAL)
	$(TIMED) "lessons/, run through" $(BIN)/python -m pytest $(WORKERS) --nbval-lax lessons/ $(NBVAL)

# The declared versions, both ends, and a hosted notebook (tests/versions.py): Python, torch
# and every dependency at their floors, then at their newest, each running what `make test`
# runs; then each lesson Run All as Colab ships Python, torch and ipywidgets, the course not
# installed. Environments are kept in ~/.cache/attention-course/ (first run: about 17 GB).
test-versions: $(VENV)/.dev  ## the tests at the declared floors, the newest versions, and as on Colab
	$(BIN)/python tests/versions.py --nbval "$(NBVAL)" --workers "$(WORKERS)"

# The same code on other processors: CPU kernels differ in their last bits between processors.
test-portable: $(VENV)/.dev  ## solutions/ compared strictly under other CPUs' kernels; unit tests on 2 threads
	$(BIN)/python tests/portable.py

test-sweep: $(VENV)/.dev     ## every conclusion drawn from training holds over seeds and CPU kernels
	$(BIN)/python -m pytest tests/sweep -p no:cacheprovider; status=$$?; \
		cat build/sweep/summary.txt 2>/dev/null; exit $$status

# Wrong variants of every model answer (operands swapped, a scale dropped, the wrong axis...), each
# run through its exercise's check; fails on a wrong variant a check accepts. Some: ARGS="--lessons 6".
test-mutants: $(VENV)/.dev   ## how often the checks reject wrong answers and name the mistake: build/mutation/
	$(BIN)/python -m course_tools.mutation --jobs 2 $(ARGS)

e2e:                       ## widgets in a real JupyterLab, in headless chromium (installs chromium, playwright)
	bash .ci/browser

# The course as HTML pages that open from disk with no network, their explorers answering from
# pictures drawn in advance. Each notebook is run in a temporary copy; the folder is replaced only
# when every page built. The first build installs the npm packages pinned in course_tools/site/
# into build/npm/ (needs npm). Some lessons: LESSONS="03 05".
SOME_LESSONS = $(if $(LESSONS),--lessons $(LESSONS))

site: $(VENV)/.tools           ## learners' pages (lessons run, exercises unsolved): build/site/index.html
	$(BIN)/python -m course_tools.site --out build/site $(SOME_LESSONS)

site-solutions: $(VENV)/.tools ## instructors' pages (solutions/ run): build/site-solutions/index.html
	$(BIN)/python -m course_tools.site --solutions --out build/site-solutions $(SOME_LESSONS)

lint: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The notebooks are built from solutions/*.py: those are formatted, then `make solutions` passes
# the result on (ruff fixing a built notebook would only make it differ from its source).
BUILT := --extend-exclude "solutions/*.ipynb,lessons"

format: $(VENV)/.dev      ## format the packages, the tests and the lesson sources' code cells
	$(BIN)/python -m course_tools.authoring format
	$(BIN)/ruff format $(BUILT) .
	$(BIN)/ruff check --fix $(BUILT) .

# solutions/NN_name.py is what you edit; the notebooks beside it and lessons/ are built from it.
# Some only: make solutions SOURCES="solutions/03_scaled_dot_product_attention.py".
solutions: $(VENV)/.tools  ## build and run solutions/*.ipynb from their .py sources, then regenerate lessons/
	$(BIN)/python -m course_tools.authoring execute $(SOURCES)
	$(BIN)/python -m course_tools.authoring lessons

lessons: $(VENV)/.tools    ## regenerate lessons/ from solutions/
	$(BIN)/python -m course_tools.authoring lessons

checkpoint: $(VENV)/.learner ## retrain lesson 7's shipped translator (deterministic: one thread, seed 0)
	$(BIN)/python -m course_lib.pretrained

validate: $(VENV)/.tools    ## solutions pass every check, lessons none: make validate [LESSON=03]
	$(BIN)/python -m course_tools.grade --validate $(LESSON) --jobs 2

# Where grading writes grades.csv, summary.md and feedback/; notebooks graded at a time.
GRADES ?= grades/grades.csv
JOBS   ?= 2

grade: $(VENV)/.tools       ## grade student notebooks: make grade SUBMISSIONS=folder [GRADES=... JOBS=2]
	$(BIN)/python -m course_tools.grade $(SUBMISSIONS) --out $(GRADES) --jobs $(JOBS)

# The course on the platforms instructors already run ("Teaching a class" in the README), from
# solutions/ and points.toml. Some lessons: LESSONS="03 05"; nbgrader's course id: COURSE_ID=...
nbgrader: $(VENV)/.tools    ## an nbgrader course directory (config, source/lessonNN/): build/nbgrader/
	$(BIN)/python -m course_tools.classroom nbgrader $(SOME_LESSONS) $(if $(COURSE_ID),--course-id $(COURSE_ID))

otter: $(VENV)/.tools       ## otter-grader assignment notebooks, one per lesson: build/otter/
	$(BIN)/python -m course_tools.classroom otter $(SOME_LESSONS)

test-graders:              ## nbgrader, otter-grader and repo2docker run on the course (own environment)
	bash .ci/graders

# The platforms in an environment of their own: they bring JupyterLab extensions, notebook 7,
# pandas and more, which neither the learners' environment nor the browser tests should get.
GRADERS := $(VENV)-graders

graders-env: $(GRADERS)/.installed  ## nbgrader, otter-grader and repo2docker in .venv-graders/

$(GRADERS)/.installed: requirements.txt requirements-tools.txt requirements-graders.txt pyproject.toml
	$(NEED_PYTHON)
	[ -x $(GRADERS)/bin/python ] || $(PYTHON) -m venv $(GRADERS)
	$(GRADERS)/bin/python -m pip install $(TORCH) $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(GRADERS)/bin/python -m pip install -r requirements-graders.txt -e ".[tools]"
	touch $@

bench: $(VENV)/.dev        ## print the speed figures recorded in benchmarks/README.md
	$(BIN)/python benchmarks/profile_step.py
	$(BIN)/python benchmarks/attention_speed.py
	$(BIN)/python benchmarks/training_throughput.py
	$(BIN)/python benchmarks/lesson7_budget.py
	$(BIN)/python benchmarks/train_translator.py
	$(BIN)/python benchmarks/widget_redraw.py
	$(BIN)/python benchmarks/vector_widget_redraw.py
	$(BIN)/python benchmarks/pe_explorer_redraw.py
	$(BIN)/python benchmarks/deep_stack_redraw.py
	$(BIN)/python benchmarks/sequence_cost_redraw.py
	$(BIN)/python benchmarks/model_attention_redraw.py
	$(BIN)/python benchmarks/l1b_encoder_vs_bilstm.py --repeats 5
	$(BIN)/python benchmarks/run_all.py
	$(BIN)/python benchmarks/test_suite.py

clean:
	rm -rf $(VENV) $(VENV)-graders .pytest_cache .ruff_cache *.egg-info

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

# Instructors' and maintainers' tools (course_tools), then the test tools on top.
$(VENV)/.tools: requirements.txt requirements-tools.txt pyproject.toml | $(VENV)/bin/python
	$(TORCH_FIRST)
	$(BIN)/python -m pip install -r requirements-tools.txt -e ".[tools]"
	touch $@ $(VENV)/.learner

$(VENV)/.dev: requirements.txt requirements-tools.txt requirements-dev.txt pyproject.toml | $(VENV)/bin/python
	$(TORCH_FIRST)
	$(BIN)/python -m pip install -r requirements-dev.txt -e ".[tools]"
	touch $@ $(VENV)/.tools $(VENV)/.learner
