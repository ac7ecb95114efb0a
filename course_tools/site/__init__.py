"""An offline static HTML site of the course: one page per lesson and an index.

The learners' site shows each lesson of ``lessons/`` as it looks after Run All on an
untouched copy; the instructors' site shows ``solutions/`` with its stored outputs. Every
page loads its scripts (widget renderer, require.js, MathJax) from ``_static/`` beside it,
so the site opens from disk with no network. Build it from the repository root::

    python -m course_tools.site                     # learners' pages -> build/site/
    python -m course_tools.site --solutions         # instructors' pages -> build/site-solutions/
    python -m course_tools.site --lessons 03 05     # only some lessons
"""

import shutil
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from course_lib.workspace import find_lesson

from . import assets, index, pages

LEARNER_NOTE = (
    "Each lesson as it looks after running every cell of a fresh copy: the exercises are "
    "not solved yet, so their checks say 'not done yet'. The widgets show their last picture; "
    "moving their controls redraws nothing here, since that needs Python. To work through "
    "the lessons, install the course (see its README) and open them in JupyterLab."
)
INSTRUCTOR_NOTE = (
    "Instructors' version: every lesson with its solutions and their outputs. The widgets "
    "show their last picture; moving their controls needs a running notebook."
)
INSTRUCTOR_BANNER = "Instructors' version, with solutions"


def select(folder: Path, names: list[str] | None = None) -> list[Path]:
    """The notebooks to publish: all of ``folder``, or those named like ``03`` or ``5``."""
    if not names:
        found = sorted(folder.glob("[0-9][0-9]_*.ipynb"))
        if not found:
            raise ValueError(f"folder {folder} holds no lesson notebooks (NN_name.ipynb)")
        return found
    return sorted({find_lesson(name, folder) for name in names})


def _load(path: Path, force_run: bool):
    """Worker: (notebook, seconds, None), or (None, seconds, why it failed)."""
    start = time.perf_counter()
    try:
        nb = pages.load(path, force_run)
    except Exception as error:  # reported by name; the other lessons still build
        return None, time.perf_counter() - start, f"{type(error).__name__}: {str(error)[-1500:]}"
    return nb, time.perf_counter() - start, None


def load_all(paths: list[Path], force_run: bool = False, jobs: int = 1):
    """Yield (path, (notebook or None, seconds, error or None)) as each one is ready."""
    if jobs <= 1 or len(paths) == 1:
        for path in paths:
            yield path, _load(path, force_run)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(_load, path, force_run): path for path in paths}
        for future in as_completed(futures):
            yield futures[future], future.result()


def _clear(out: Path) -> None:
    """Remove a previous build's pages and assets (and nothing else) from ``out``."""
    for page in out.glob("[0-9][0-9]_*.html"):  # lesson pages; index.html is rewritten
        page.unlink()
    if (out / assets.STATIC).is_dir():
        shutil.rmtree(out / assets.STATIC)


def build_site(
    source: Path,
    out: Path,
    names: list[str] | None = None,
    instructors: bool = False,
    force_run: bool = False,
    jobs: int = 1,
    npm_dir: Path = Path("build/npm"),
    readme: Path = Path("README.md"),
    log=lambda message: print(message, flush=True),
) -> list[str]:
    """Build the site from the notebooks of ``source`` into ``out``; returns the failures."""
    paths = select(source, names)
    npm = assets.install(npm_dir)
    out.mkdir(parents=True, exist_ok=True)
    _clear(out)
    assets.copy_static(npm, out)
    text = readme.read_text(encoding="utf-8")
    rows, entries, failures = index.readme_rows(text), [], []
    banner = INSTRUCTOR_BANNER if instructors else ""
    for path, (nb, seconds, error) in load_all(paths, force_run, jobs):
        if error:
            failures.append(f"{path}: {error}")
            log(f"FAILED {path} after {seconds:.1f} s")
            continue
        (out / f"{path.stem}.html").write_text(pages.render(nb, banner), encoding="utf-8")
        entries.append(index.make_entry(path.stem, pages.title_of(nb), rows))
        log(f"{path} -> {out / path.stem}.html ({seconds:.1f} s)")
    note = INSTRUCTOR_NOTE if instructors else LEARNER_NOTE
    page = index.index_html(index.readme_title(text), entries, note)
    (out / "index.html").write_text(page, encoding="utf-8")
    return failures
