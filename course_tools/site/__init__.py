"""An offline static HTML site of the course: one page per lesson and an index.

Each page shows a notebook as Run All leaves it: the learners' site runs a copy of each
lesson of ``lessons/`` (exercises unsolved), the instructors' site a copy of each notebook of
``solutions/``. The explorers respond: their controls switch between pictures drawn in
advance by the lesson's kernel. Every page loads its scripts and styles from ``_static/``
beside it, so the site opens from disk with no network. The site is built beside ``--out``
and replaces it only when every page built. From the repository root::

    python -m course_tools.site                     # learners' pages -> build/site/
    python -m course_tools.site --solutions         # instructors' pages -> build/site-solutions/
    python -m course_tools.site --lessons 03 05     # only some lessons
"""

import re
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import nbformat

from course_lib.workspace import find_lesson

from . import assets, explorers, index, navigation, pages, publish

EXPLORER_NOTE = (
    "The explorers respond here: their controls switch between pictures drawn in advance for "
    "some settings, and each explorer says what it leaves out. Other combinations, inputs of "
    "your own, and running or changing code need the lesson open in JupyterLab."
)
LEARNER_NOTE = (
    "Each lesson as it looks after running every cell of a fresh copy: the exercises are "
    f"not solved yet, so their checks say 'not done yet'. {EXPLORER_NOTE} To work through "
    "the lessons, install the course (see its README)."
)
INSTRUCTOR_NOTE = (
    "Instructors' version: every lesson with its solutions and their outputs, as a run "
    f"of each solution notebook leaves them. {EXPLORER_NOTE}"
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


def _load(path: Path):
    """Worker: (built notebook, seconds, None), or (None, seconds, why it failed)."""
    start = time.perf_counter()
    try:
        built = pages.load(path)
    except Exception as error:  # reported by name; the other lessons still run
        why = re.sub(r"\x1b\[[0-9;]*m", "", str(error))  # a traceback's terminal colours
        return None, time.perf_counter() - start, f"{type(error).__name__}: {why[-1500:]}"
    return built, time.perf_counter() - start, None


def load_all(paths: list[Path], jobs: int = 1):
    """Yield (path, (built notebook or None, seconds, error or None)) as each one is ready."""
    if jobs <= 1 or len(paths) == 1:
        for path in paths:
            yield path, _load(path)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(_load, path): path for path in paths}
        for future in as_completed(futures):
            yield futures[future], future.result()


def write_page(folder: Path, stem: str, built, banner: str, neighbours) -> tuple[str, bool]:
    """Write one lesson's page and its explorers' pictures into ``folder``.

    Returns what was made, and whether the page loads the widget renderer.
    """
    nb, files = explorers.replace(built.nb, built.explorers, stem)
    for name, png in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(png)
    missing = pages.describe_images(nb)
    page = pages.render(nb, banner, neighbours=neighbours)
    (folder / f"{stem}.html").write_text(page, encoding="utf-8")
    made = f"{len(built.explorers)} explorer(s), {len(files)} picture(s)"
    made += "".join(f"\n  figure with no description: {where}" for where in missing)
    return made, assets.exporter_urls()["widget_renderer_url"] in page


def build_site(
    source: Path,
    out: Path,
    names: list[str] | None = None,
    instructors: bool = False,
    jobs: int = 1,
    npm_dir: Path = Path("build/npm"),
    readme: Path = Path("README.md"),
    log=lambda message: print(message, flush=True),
) -> list[str]:
    """Build the site from the notebooks of ``source`` into ``out``; returns the failures.

    ``out`` is replaced only when every page built; after a failure it is left as it was.
    """
    paths = select(source, names)
    npm = assets.install(npm_dir)
    text = readme.read_text(encoding="utf-8")
    rows = index.readme_rows(text)
    entries = {
        path.stem: index.make_entry(path.stem, pages.title_of(nbformat.read(path, 4)), rows)
        for path in paths
    }
    plan = navigation.plan(list(entries.values()))
    banner = INSTRUCTOR_BANNER if instructors else ""
    failures = []
    widgets = False  # whether some page still shows a widget
    with publish.staging(out) as folder:
        for path, (built, seconds, error) in load_all(paths, jobs):
            if error:
                failures.append(f"{path}: {error}")
                log(f"FAILED {path} after {seconds:.1f} s")
                continue
            try:
                made, shows = write_page(
                    folder, path.stem, built, banner, plan[entries[path.stem].page]
                )
            except (ValueError, TypeError) as error:  # e.g. an explorer exported wrongly
                failures.append(f"{path}: {type(error).__name__}: {error}")
                log(f"FAILED {path}: its page could not be made")
                continue
            widgets = widgets or shows
            log(f"{path} -> {out / path.stem}.html ({seconds:.1f} s; {made})")
        if failures:
            log(f"{len(failures)} page(s) failed: {out} left as it was")
            return failures
        assets.copy_static(npm, folder, widgets)
        note = INSTRUCTOR_NOTE if instructors else LEARNER_NOTE
        page = index.index_html(index.readme_title(text), list(entries.values()), note)
        (folder / "index.html").write_text(page, encoding="utf-8")
        publish.swap(folder, out)
    return failures
