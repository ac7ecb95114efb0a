"""The Makefile's set-up says what went wrong when PYTHON cannot be used, and picks torch's build."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def make(tmp_path, *args, env=None) -> subprocess.CompletedProcess:
    """``make ARGS`` with a copy of the Makefile in an empty folder (no .venv to reuse)."""
    for name in ("Makefile", "learner.mk"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copy(ROOT / "requirements.txt", tmp_path / "requirements.txt")
    command = ["make", "--no-print-directory", *args]
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env)


def fake_python(tmp_path, body: str) -> Path:
    script = tmp_path / "fakepython"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return script


def test_a_python_that_cannot_run_is_named_with_what_it_said(tmp_path):
    broken = fake_python(tmp_path, 'echo "pyenv: python3.12: command not found" >&2; exit 127')
    done = make(tmp_path, ".venv/bin/python", f"PYTHON={broken}")
    assert done.returncode != 0
    assert f"PYTHON={broken} could not run ({broken})" in done.stdout
    assert "pyenv: python3.12: command not found" in done.stdout
    assert "Python 3.11 or later" in done.stdout
    assert not (tmp_path / ".venv").exists()


def test_a_python_not_on_the_path(tmp_path):
    done = make(tmp_path, ".venv/bin/python", "PYTHON=no-such-python3")
    assert done.returncode != 0
    assert "PYTHON=no-such-python3 could not run (not on PATH)" in done.stdout


def test_an_old_python_is_named_with_its_version(tmp_path):
    old = fake_python(tmp_path, 'echo "3.10"')
    done = make(tmp_path, ".venv/bin/python", f"PYTHON={old}")
    assert done.returncode != 0
    assert f"PYTHON={old} is Python 3.10; the course needs 3.11 or later." in done.stdout


def torch_index(tmp_path, *args, env=None) -> str:
    """What ``make`` would take torch from, given ``args`` and the environment ``env``."""
    show = "--eval=show: ; @echo '[$(TORCH_INDEX)]'"
    done = make(tmp_path, "-s", show, "show", *args, env=env)
    return done.stdout.strip().removeprefix("[").removesuffix("]")


LINUX = subprocess.run(["uname", "-s"], capture_output=True, text=True).stdout.strip() == "Linux"
NVIDIA = Path("/proc/driver/nvidia/version").exists() or shutil.which("nvidia-smi")
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def quiet_pip(tmp_path) -> dict:
    """The environment with pip's own configuration (which may set an index) left out."""
    empty = tmp_path / "pip.conf"
    empty.write_text("")
    kept = {k: v for k, v in os.environ.items() if k != "PIP_INDEX_URL"}
    return {**kept, "PIP_CONFIG_FILE": str(empty)}


@pytest.mark.skipif(not LINUX or NVIDIA, reason="Linux without an NVIDIA GPU only")
def test_linux_without_an_nvidia_gpu_gets_the_cpu_build(tmp_path):
    assert torch_index(tmp_path, env=quiet_pip(tmp_path)) == CPU_INDEX


@pytest.mark.skipif(not LINUX, reason="the choice is made on Linux")
def test_an_nvidia_gpu_or_an_index_of_pips_own_keeps_pips_default(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nvidia-smi").write_text("#!/bin/sh\n")
    (fake / "nvidia-smi").chmod(0o755)
    with_gpu = {**quiet_pip(tmp_path), "PATH": f"{fake}:{os.environ['PATH']}"}
    assert torch_index(tmp_path, env=with_gpu) == ""
    mirror = {**quiet_pip(tmp_path), "PIP_INDEX_URL": "https://mirror.example/simple"}
    assert torch_index(tmp_path, env=mirror) == ""


def test_torch_index_can_be_chosen(tmp_path):
    assert torch_index(tmp_path, "TORCH_INDEX=") == ""
    assert torch_index(tmp_path, "TORCH_INDEX=https://x.example/cu126") == "https://x.example/cu126"


def test_what_a_working_python_writes_to_stderr_is_not_its_version(tmp_path):
    noisy = fake_python(tmp_path, 'echo "a warning" >&2; echo "3.12"')
    done = make(tmp_path, ".venv/bin/python", f"PYTHON={noisy}")
    assert "could not run" not in done.stdout and "is Python" not in done.stdout
    assert f"{noisy} -m venv .venv" in done.stdout  # the check passed: on to the venv
