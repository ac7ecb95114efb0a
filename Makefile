# The course's commands. Each one creates or reuses the virtual environment .venv. A learner's
# (lab, update, restore, and the set-up they share with the rest) are in learner.mk.
include learner.mk

.PHONY: stored sandbox-tool test test-sandbox test-answers test-versions test-portable test-sweep test-mutants test-graders graders-env autograde e2e site site-solutions lint format solutions lessons checkpoint validate grade release nbgrader otter bench clean

# Notebook tests: the kernel runs in this environment; memory addresses are masked.
NBVAL := --nbval-current-env --nbval-cell-timeout=300 --nbval-sanitize-with tests/nbval_sanitize.cfg

# Two workers (pytest-xdist), one per core, each given whole files (--dist loadfile): nbval runs
# a notebook's cells in order in one kernel, and a test module's shared fixtures (a grading run,
# a trained model) are then built once. Each phase prints its time.
WORKERS := -n 2 --dist loadfile
TIMED   := $(BIN)/python tests/timed.py

test: $(VENV)/.dev sandbox-tool ## set up, then lint, the unit tests, solutions/ compared and lessons/ run
	$(TIMED) lint sh -c "$(BIN)/ruff check . && $(BIN)/ruff format --check ."
	$(TIMED) "unit tests" $(BIN)/python -m pytest $(WORKERS)
	$(TIMED) "solutions/, compared" $(BIN)/python -m pytest $(WORKERS) --nbval solutions/ $(NBVAL)
	$(TIMED) "lessons/, run through" $(BIN)/python -m pytest $(WORKERS) --nbval-lax lessons/ $(NBVAL)

# A submission's attacks on the grader (tests/sandbox), then every check test again with each
# answer handed to its check as the grader hands it: out of a sandbox, as plain data
# (tests/through_the_grader.py): one verdict in the notebook and at grading.
test-sandbox: $(VENV)/.dev sandbox-tool ## the grader attacked; every check test's verdict again as the grader reaches it
	$(TIMED) "tamper battery" $(BIN)/python -m pytest tests/sandbox
	$(TIMED) "checks through the grader" env CHECKS_THROUGH_THE_GRADER=1 \
		$(BIN)/python -m pytest $(WORKERS) $(wildcard tests/test_check*.py)

# Each lesson twice: its solution, recording what each check(...) receives, then the untouched
# lesson as a learner's Run All. Fails where an exercise's expected number is printed above its
# check, or shown in the code or output of the two code cells under it, unless
# tests/answers_shown.toml gives the reason.
test-answers: $(VENV)/.dev   ## no answer on screen before its exercise, on an untouched Run All
	$(BIN)/python -m pytest -n 2 -p no:cacheprovider tests/answers_unshown.py

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

stored: $(VENV)/.tools     ## record the demonstrations a graded run replays (course_lib/stored/)
	$(BIN)/python -m course_tools.authoring record

validate: $(VENV)/.tools sandbox-tool ## solutions pass every check, lessons none: make validate [LESSON=03]
	$(BIN)/python -m course_tools.grade --validate $(LESSON) --jobs 2

# Where grading writes grades.csv, summary.md and feedback/ (outside the course folder: students'
# data, never committed or released by mistake); notebooks graded at a time.
GRADES ?= $(HOME)/attention-course-grades/grades.csv
JOBS   ?= 2

grade: $(VENV)/.tools sandbox-tool  ## grade student notebooks: make grade SUBMISSIONS=folder [GRADES=... JOBS=2]
	$(BIN)/python -m course_tools.grade $(SUBMISSIONS) --out $(GRADES) --jobs $(JOBS)

# The grader runs each submission in a bubblewrap sandbox (course_tools/grading/sandbox.py):
# installed here where apt-get can; elsewhere the grader says how, and refuses to grade without.
SUDO := $(if $(filter 0,$(shell id -u)),,sudo -n)
sandbox-tool:
	@command -v bwrap >/dev/null || { echo "installing bubblewrap (apt-get)"; \
	  $(SUDO) apt-get install -y -q bubblewrap >/dev/null 2>&1 \
	  || $(SUDO) sh -c 'apt-get update -q && apt-get install -y -q bubblewrap' >/dev/null; } \
	  || echo "bubblewrap could not be installed: the grader will say what to do"

# What students receive (lessons, course_lib, binder/; no solutions, no instructor tools), to push
# as the repository's students branch, which the Binder and hub links of docs/ open.
RELEASE ?= build/release

release: $(VENV)/.tools     ## the students' release, without solutions: build/release/
	$(BIN)/python -m course_tools.release $(RELEASE)

# The course on the platforms instructors already run (docs/teaching.md), from
# solutions/ and points.toml. Some lessons: LESSONS="03 05"; nbgrader's course id: COURSE_ID=...
nbgrader: $(VENV)/.tools    ## an nbgrader course directory (config, source/lessonNN/): build/nbgrader/
	$(BIN)/python -m course_tools.classroom nbgrader $(SOME_LESSONS) $(if $(COURSE_ID),--course-id $(COURSE_ID))

otter: $(VENV)/.tools       ## otter-grader assignment notebooks, one per lesson: build/otter/
	$(BIN)/python -m course_tools.classroom otter $(SOME_LESSONS)

test-graders: sandbox-tool ## nbgrader, otter-grader and repo2docker run on the course (own environment)
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

# nbgrader's autograde with each student's kernel in a sandbox (docs/teaching.md): it sees no
# solutions, gradebook or other student. Needs bubblewrap. OPTIONS: nbgrader's, e.g. --create.
NBGRADER_DIR ?= build/nbgrader

autograde: $(GRADERS)/.installed sandbox-tool  ## nbgrader autograde, sandboxed: make autograde ASSIGNMENT=lesson03
	$(GRADERS)/bin/python -m course_tools.classroom.sandboxed_kernel autograde \
		--course-dir $(NBGRADER_DIR) $(ASSIGNMENT) $(OPTIONS)

bench: $(VENV)/.dev        ## print the speed figures recorded in benchmarks/README.md
	$(BIN)/python benchmarks/profile_step.py
	$(BIN)/python benchmarks/attention_speed.py
	$(BIN)/python benchmarks/training_throughput.py
	$(BIN)/python benchmarks/step_ablation.py
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

# Instructors' and maintainers' tools (course_tools), then the test tools on top.
$(VENV)/.tools: requirements.txt requirements-tools.txt pyproject.toml | $(VENV)/bin/python
	$(TORCH_FIRST)
	$(BIN)/python -m pip install -r requirements-tools.txt -e ".[tools]"
	touch $@ $(VENV)/.learner

$(VENV)/.dev: requirements.txt requirements-tools.txt requirements-dev.txt pyproject.toml | $(VENV)/bin/python
	$(TORCH_FIRST)
	$(BIN)/python -m pip install -r requirements-dev.txt -e ".[tools]"
	touch $@ $(VENV)/.tools $(VENV)/.learner
