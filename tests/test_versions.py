"""The declared versions: one range per package in every file, and the floors derived from them."""

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from versions import HOSTED, conda_text, declared, disagreements, floor, ranges


def test_pyproject_the_requirements_files_and_environment_yml_state_the_same_ranges():
    sources = declared()
    assert {"pyproject.toml", "requirements.txt", "environment.yml"} <= set(sources)
    assert disagreements(sources) == []


@pytest.mark.parametrize(
    "stated, problem",
    [
        (
            {"a.txt": ["numpy>=1.26,<3"], "b.toml": ["numpy>=1.25,<3"]},
            "numpy: the files state different ranges (a.txt: <3,>=1.26; b.toml: <3,>=1.25)",
        ),
        (
            {"a.txt": ["torch==2.4.1"], "b.toml": ["torch>=2.5,<3"]},
            "torch: a.txt pins ==2.4.1, outside b.toml's <3,>=2.5",
        ),
        (
            {"a.txt": ["torch==2.13.0"], "b.yml": ["torch==2.12.0"]},
            "torch: the files state different pins (a.txt: ==2.13.0; b.yml: ==2.12.0)",
        ),
    ],
)
def test_a_range_or_pin_that_differs_between_files_is_named(stated, problem):
    sources = {name: [Requirement(r) for r in rs] for name, rs in stated.items()}
    assert disagreements(sources) == [problem]


def test_the_floors_are_the_declared_lower_bounds_torch_and_python_included():
    found = {name: floor(spec, name) for name, spec in ranges(declared()).items()}
    assert found["torch"] == "2.5" and found["python"] == "3.11"
    assert found["ipywidgets"] == "7.7" and found["matplotlib"] == "3.8"
    assert {"pytest", "nbval", "jupyterlab", "setuptools"} <= set(found)  # make test's tools too


def test_a_package_without_a_lower_bound_has_no_floor():
    with pytest.raises(ValueError, match="numpy must declare one lower bound"):
        floor(SpecifierSet("<3"), "numpy")


def test_environment_yml_is_read_without_its_channels_and_pip_itself():
    text = "channels:\n  - conda-forge\ndependencies:\n  - python>=3.11\n  - pip\n  - pip:\n      - torch==2.13.0\n"
    assert [str(r) for r in conda_text(text)] == ["python>=3.11", "torch==2.13.0"]


def test_environment_yml_lines_with_a_comment_are_read():
    text = "dependencies:\n  - numpy>=1.26,<3  # hand computations\n  - tqdm # bars\n"
    assert [str(r) for r in conda_text(text)] == ["numpy<3,>=1.26", "tqdm"]


def test_the_emulated_hosted_notebook_is_inside_the_declared_ranges():
    declared_ranges = ranges(declared())
    for line in HOSTED:
        requirement = Requirement(line)
        spec = declared_ranges.get(requirement.name)
        pinned = next((s.version for s in requirement.specifier if s.operator == "=="), None)
        if spec is not None and pinned is not None:
            assert spec.contains(pinned.replace(".*", ".0")), f"{line} is outside {spec}"
