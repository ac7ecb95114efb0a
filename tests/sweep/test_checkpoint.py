"""The shipped checkpoint is what ``make checkpoint`` trains, bit for bit, where that can hold.

Lesson 7 and the learners' guide promise that the same kind of processor, kernels and thread
count give the same weights. The translator is retrained in a fresh process under the kernels
the checkpoint records, and every weight compared; on another processor, one that cannot run
those kernels, or another torch build, the promise does not apply and the test is skipped
(after a change of the course's torch, ``make checkpoint`` trains the new shipped one).
"""

import subprocess
import sys

import pytest
import torch

from course_lib.experiments import kernels
from course_lib.pretrained import CHECKPOINT


def setting_of(recorded: str) -> str:
    """The kernel setting of a record such as "torch kernels AVX512, MKL_CBWR unset, 1 thread"."""
    capability, mkl = recorded.removeprefix("torch kernels ").split(", ")[:2]
    if mkl != "MKL_CBWR unset":
        pytest.skip(f"the checkpoint was trained with {mkl}, a setting this test does not make")
    setting = next((s for s, names in kernels.NAMES.items() if capability in names), None)
    if setting is None:
        pytest.skip(f"no kernel setting of this course makes {capability!r}")
    return setting


def test_setting_of_reads_the_record():
    assert setting_of("torch kernels AVX2, MKL_CBWR unset, 1 thread") == "avx2"
    assert setting_of("torch kernels NO AVX, MKL_CBWR unset, 1 thread") == "default"
    with pytest.raises(pytest.skip.Exception, match="no kernel setting"):
        setting_of("torch kernels SVE256, MKL_CBWR unset, 1 thread")


def test_make_checkpoint_gives_the_shipped_weights(tmp_path):
    shipped = torch.load(CHECKPOINT, map_location="cpu", weights_only=True)
    if shipped.get("processor") != kernels.processor():
        pytest.skip(f"trained on {shipped.get('processor')}, this is {kernels.processor()}")
    setting = setting_of(shipped["kernels"])
    if why := kernels.unavailable(setting):
        pytest.skip(why)
    if shipped.get("torch") != str(torch.__version__):  # its kernels and MKL may differ
        pytest.skip(f"trained with torch {shipped.get('torch')}, this is {torch.__version__}")
    out = tmp_path / "translator.pt"
    command = [sys.executable, "-m", "course_lib.pretrained", "--out", str(out)]
    done = subprocess.run(command, env=kernels.environment(setting), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    again = torch.load(out, map_location="cpu", weights_only=True)
    assert again["kernels"] == shipped["kernels"]
    differ = [
        k for k, v in shipped["state_dict"].items() if not torch.equal(v, again["state_dict"][k])
    ]
    assert not differ, (
        f"retrained weights differ from the shipped ones in {differ}: make checkpoint"
    )
