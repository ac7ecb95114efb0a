"""Two packages: what a notebook imports (course_lib) and the instructors' tools (course_tools)."""

import importlib
import pkgutil
import subprocess
import sys

import pytest


@pytest.mark.parametrize("package", ["course_lib", "course_tools"])
def test_each_package_docstring_lists_every_module(package):
    module = importlib.import_module(package)
    names = {m.name for m in pkgutil.iter_modules(module.__path__) if not m.name.startswith("_")}
    listed = {line.split()[0] for line in module.__doc__.splitlines() if line.startswith("    ")}
    assert names <= listed, f"not in {package}'s docstring: {sorted(names - listed)}"


def test_the_learners_package_imports_no_instructor_tool():
    code = (
        "import sys, course_lib.checks, course_lib.widgets, course_lib.workspace, "
        "course_lib.model, course_lib.experiments; "
        "print(sorted(m for m in ('course_tools', 'nbclient', 'nbconvert', 'cloudpickle', "
        "'jupytext') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
