"""The Binder / JupyterHub image: what repo2docker builds from binder/.

``jupyter-repo2docker --no-build`` prints the Dockerfile it would build, with no container
engine. It runs on a temporary copy of the files git tracks plus binder/ as it is in the work
tree (it may not be committed yet), so ignored local files (virtual environments, workspace/)
play no part, as on Binder, which builds a clone.

Run:  .venv-graders/bin/python -m pytest tests/graders/test_binder.py -p no:cacheprovider
"""

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("repo2docker", reason="jupyter-repo2docker is not installed (.venv-graders)")
from repo2docker.app import Repo2Docker  # noqa: E402

from course_tools import release  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    """A copy of the tracked files and binder/, as a fresh clone with binder/ committed."""
    copy = tmp_path_factory.mktemp("repo")
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    files = {ROOT / name for name in listed.split("\0") if name}
    files |= set((ROOT / "binder").rglob("*"))
    for source in files:
        if source.is_file():  # not a tracked file deleted in the work tree
            target = copy / source.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)  # keeps postBuild's executable bit
    return copy


@pytest.fixture(scope="module")
def build(repo) -> subprocess.CompletedProcess:
    """repo2docker's dry run: the Dockerfile on stdout, its log on stderr."""
    # Binder builds as jovyan (uid 1000); as root here the Dockerfile would chown to root.
    command = [sys.executable, "-m", "repo2docker", "--no-build", "--debug"]
    command += ["--user-id", "1000", "--user-name", "jovyan", str(repo)]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)


def steps(dockerfile: str) -> list[str]:
    """The Dockerfile's instructions, one string each (continued lines joined)."""
    lines = dockerfile.replace("\\\n", " ").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def index(found: list[str], pattern: str) -> int:
    """Position of the one instruction matching ``pattern``."""
    matches = [i for i, step in enumerate(found) if re.search(pattern, step)]
    assert len(matches) == 1, f"{pattern!r} matches {len(matches)} Dockerfile instructions"
    return matches[0]


def test_python_build_pack_with_python_311(repo):
    # The dry run does not name its build pack: pick it as repo2docker does (first to detect).
    with contextlib.chdir(repo):
        packs = (pack(base_image="") for pack in Repo2Docker().buildpacks)
        picked = next(pack for pack in packs if pack.detect())
        assert type(picked).__name__ == "PythonBuildPack"
        assert picked.python_version == "3.11"
        assert not picked.separate_kernel_env


def test_one_environment_for_server_and_kernel(build):
    assert "Building conda environment for python=3.11" in build.stderr
    assert "ENV KERNEL_PYTHON_PREFIX=${NB_PYTHON_PREFIX}" in build.stdout
    assert "KERNEL_ENVIRONMENT_FILE" not in build.stdout
    assert "env update" not in build.stdout  # no environment.yml (the top-level one) is used


def test_installs_binder_requirements_then_runs_post_build(build):
    found = steps(build.stdout)
    repo_copied = index(found, r"^COPY .* src/ \$\{REPO_DIR\}/$")
    pip = index(
        found, r'^RUN \$\{KERNEL_PYTHON_PREFIX\}/bin/pip install .*-r "binder/requirements.txt"$'
    )
    post_build = index(found, r"^RUN \./binder/postBuild$")
    # After the whole repository is copied: its `-r ../requirements.txt` and `.` need it.
    assert repo_copied < pip < post_build
    workdirs = [step for step in found[:pip] if step.startswith("WORKDIR ")]
    assert workdirs[-1] == "WORKDIR ${REPO_DIR}"  # pip runs from the repository root


def test_binder_requirements_are_cpu_torch_the_learners_and_course_lib(repo):
    lines = (repo / "binder" / "requirements.txt").read_text().splitlines()
    lines = [line.split("#")[0].strip() for line in lines]
    # pip reads `-r` relative to the requirements file, a plain path relative to its own cwd.
    included = [repo / "binder" / line.removeprefix("-r ") for line in lines if line[:3] == "-r "]
    assert [path.resolve() for path in included] == [(repo / "requirements.txt").resolve()]
    (pin,) = [word for word in included[0].read_text().split() if word.startswith("torch==")]
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in lines
    assert f"{pin}+cpu" in lines  # the learners' pin, which its CPU build satisfies
    assert "." in lines
    assert 'include = ["course_lib*", "course_tools*"]' in (repo / "pyproject.toml").read_text()


def test_post_build_copies_the_lessons_into_workspace(repo):
    # With this interpreter as `python`, from the repository root as repo2docker runs it.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    run = subprocess.run(
        ["./binder/postBuild"],
        cwd=repo,
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    lessons = sorted(p.name for p in (repo / "lessons").glob("*.ipynb"))
    assert lessons
    assert sorted(p.name for p in (repo / "workspace").glob("*.ipynb")) == lessons


class _Engine:
    """Takes the build context repo2docker would send to a container engine, and builds nothing."""

    def build(self, fileobj, **options):
        self.context = fileobj.getvalue()
        return iter(())


def _context(folder: Path, into: Path) -> Path:
    """What repo2docker copies from ``folder`` into the image (its ``src/``), unpacked in ``into``."""
    engine = _Engine()
    with contextlib.chdir(folder):
        packs = (pack(base_image="") for pack in Repo2Docker().buildpacks)
        picked = next(pack for pack in packs if pack.detect())
        picked.platform = "linux/amd64"  # as repo2docker sets it for Binder's machines
        list(picked.build(engine, "course", 0, {}, [], {}))
    with tarfile.open(fileobj=io.BytesIO(engine.context)) as context:
        members = [m for m in context.getmembers() if m.name.startswith("src/")]
        context.extractall(into, members=members, filter="data")
    return into / "src"


@pytest.fixture(scope="module")
def answers():
    return release.answers(ROOT / "solutions", ROOT / "lessons")


def test_an_image_of_the_whole_repository_holds_no_answer(repo, answers, tmp_path):
    src = _context(repo, tmp_path)
    assert (src / "binder" / "postBuild").is_file() and (src / "course_lib").is_dir()
    assert not (src / "solutions").exists() and not (src / "tests").exists()
    assert release.leaks(src, answers) == []
    # what binder/requirements.txt installs (`.`) still builds, with course_lib alone
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    subprocess.run([*command, "-w", tmp_path / "wheel", src], check=True, timeout=300)
    [wheel] = (tmp_path / "wheel").glob("*.whl")
    assert "course_lib/checks/__init__.py" in zipfile.ZipFile(wheel).namelist()


def test_an_image_of_the_students_release_holds_no_answer(answers, tmp_path):
    built = tmp_path / "release"
    release.build(built)
    src = _context(built, tmp_path / "image")
    assert sorted(p.name for p in (src / "lessons").glob("*.ipynb")) == sorted(
        p.name for p in (ROOT / "lessons").glob("*.ipynb")
    )
    assert release.leaks(src, answers) == []
