"""The conclusions the lessons draw from experiments hold with a margin on every seed and CPU.

Each experiment of :mod:`course_lib.experiments` runs with the lesson's seed 0 under every
kernel setting this machine can imitate (:mod:`course_lib.experiments.kernels`), and with its
other seeds spread over the settings: at least five runs each. A run is a fresh process, since
kernels are chosen when torch starts; two run at a time. Every run must clear each bound the
lesson asserts by the bound's margin. The worst value of each measure is written to
``build/sweep/summary.txt``.

    make test-sweep            # or: pytest tests/sweep -p no:cacheprovider
    SWEEP_ONLY=leaky_decoder make test-sweep
"""

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from course_lib import experiments
from course_lib.experiments import kernels

ONLY = os.environ.get("SWEEP_ONLY", "").split()
NAMES = [n for n in experiments.NAMES if not ONLY or n in ONLY]
OUT = Path("build/sweep")
SKIPPED: list[str] = []  # kernel settings this machine cannot imitate, and why


def plan(settings: list[str]) -> list[tuple[str, str, list[int]]]:
    """``(experiment, setting, seeds)`` per process: seed 0 everywhere, the rest spread round."""
    jobs = []
    for name in NAMES:
        seeds = {s: [0] for s in settings}
        for i, seed in enumerate(experiments.get(name).sweep_seeds[1:]):
            seeds[settings[i % len(settings)]].append(seed)
        jobs += [(name, setting, seeds[setting]) for setting in settings]
    return jobs


def run_job(name: str, setting: str, seeds: list[int]) -> list[dict]:
    command = [sys.executable, "-m", "course_lib.experiments", name, "--seeds", *map(str, seeds)]
    done = subprocess.run(
        command, env=kernels.environment(setting), capture_output=True, text=True, timeout=1800
    )
    if done.returncode:
        raise RuntimeError(f"{name} under {setting} failed:\n{done.stderr[-3000:]}")
    return [{**json.loads(line), "setting": setting} for line in done.stdout.splitlines()]


@pytest.fixture(scope="module")
def settings() -> list[str]:
    usable = []
    for setting in kernels.SETTINGS:
        why = kernels.unavailable(setting)
        if why:
            SKIPPED.append(f"kernel setting {setting} skipped: {why}")
        else:
            usable.append(setting)
    return usable


@pytest.fixture(scope="module")
def runs(settings) -> dict[str, list[dict]]:
    """Every run's result, by experiment; also written to build/sweep/."""
    jobs = plan(settings)
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = list(pool.map(lambda job: run_job(*job), jobs))
    by_name = {name: [] for name in NAMES}
    for lines in done:
        for line in lines:
            by_name[line["name"]].append(line)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "runs.json").write_text(json.dumps(by_name, indent=1))
    (OUT / "summary.txt").write_text(summary(by_name))
    return by_name


def worst(bound, runs: list[dict]) -> dict:
    pick = max if bound.op == "<" else min
    return pick(runs, key=lambda r: r["result"][bound.measure])


def summary(by_name: dict[str, list[dict]]) -> str:
    lines = []
    for name, runs in by_name.items():
        experiment = experiments.get(name)
        seconds = sum(r["seconds"] for r in runs)
        lines.append(f"{name} (lesson {experiment.lesson}): {len(runs)} runs, {seconds:.0f} s")
        for bound in experiment.bounds:
            w = worst(bound, runs)
            value = w["result"][bound.measure]
            verdict = "clears" if bound.clears(w["result"]) else "FAILS"
            lines.append(
                f"  {bound.measure} {bound.op} {bound.bar:g} (margin {bound.margin:g}): worst "
                f"{value:.4g}, seed {w['seed']} under {w['setting']}: {verdict}"
            )
    return "\n".join([*SKIPPED, *lines]) + "\n"


BOUNDS = [(name, b) for name in NAMES for b in experiments.get(name).bounds]


@pytest.mark.parametrize("name, bound", BOUNDS, ids=[f"{n}-{b.measure}" for n, b in BOUNDS])
def test_every_run_clears_the_bound_with_its_margin(runs, name, bound):
    failing = [r for r in runs[name] if not bound.clears(r["result"])]
    described = [
        f"seed {r['seed']} under {r['setting']}: {r['result'][bound.measure]:.4g}" for r in failing
    ]
    assert not failing, f"{bound.says} (margin {bound.margin}) fails for " + "; ".join(described)


@pytest.mark.parametrize("name", NAMES)
def test_each_experiment_ran_five_seeds_and_seed_0_on_every_setting(runs, settings, name):
    assert len(runs[name]) >= 5
    assert {r["setting"] for r in runs[name] if r["seed"] == 0} == set(settings)
    assert len({r["seed"] for r in runs[name]}) >= 5


def test_the_plan_runs_seed_0_everywhere_and_spreads_the_rest():
    settings = ["a", "b", "c"]
    jobs = plan(settings)
    for name in NAMES:
        seeds = [s for n, _, ss in jobs if n == name for s in ss]
        assert sorted(seeds) == sorted([0, 0, 0, *experiments.get(name).sweep_seeds[1:]])
