"""The Makefile's set-up says what went wrong when PYTHON cannot be used, and picks torch's build."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def make(tmp_path, *args) -> subprocess.CompletedProcess:
    """``make ARGS`` with a copy of the Makefile in an empty folder (no .venv to reuse)."""
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    shutil.copy(ROOT / "requirements.txt", tmp_path / "requirements.txt")
    return subprocess.run(
        ["make", "--no-print-directory", *args], cwd=tmp_path, capture_output=True, text=True
    )


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


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ((), None),  # chosen from this machine: see below
        (("TORCH_INDEX=",), ""),
        (("TORCH_INDEX=https://example.org/whl/cu126",), "https://example.org/whl/cu126"),
    ],
)
def test_torch_comes_from_the_cpu_index_on_linux_without_an_nvidia_gpu(tmp_path, given, expected):
    done = make(tmp_path, "-n", "--eval=show: ; @echo 'index=$(TORCH_INDEX)'", "show", *given)
    index = done.stdout.strip().removeprefix("echo 'index=").removesuffix("'")
    if expected is None:
        linux = subprocess.run(["uname", "-s"], capture_output=True, text=True).stdout.strip()
        gpu = Path("/proc/driver/nvidia/version").exists() or shutil.which("nvidia-smi")
        expected = "https://download.pytorch.org/whl/cpu" if linux == "Linux" and not gpu else ""
    assert index == expected
