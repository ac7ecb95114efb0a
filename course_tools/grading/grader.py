"""Grading submissions: one notebook end to end, many in parallel, and the report files.

A submission file is only ever read: a copy runs in a fresh kernel in the submission's own
sandbox (``sandbox``), and its answers are checked in this process's forked children on plain
data from that sandbox (``checking``), never in the kernel.

Multiple choices are graded against the version of the lesson the submission was made from,
as the options it lists show (``course_lib.choice_history``; never the version its metadata
claims): a letter from an earlier version counts as the option it named there. When its
listing is on no record, its multiple choices are not graded, and the notes say why and what
the student does.
"""

import json
import tempfile
import tomllib
from concurrent.futures import ProcessPoolExecutor, as_completed
from functools import partial
from pathlib import Path

from course_lib import choice_history
from course_lib.checks import EXERCISES, FAILED, PASSED, exercises

from . import execution, notebooks, reports
from .checking import Link, evaluate
from .reports import NOT_GRADED, ExerciseGrade, SubmissionGrade

# The course's folders, relative to where the command runs (the repository root by default).
SOLUTIONS, LESSONS = Path("solutions"), Path("lessons")
POINTS = Path("points.toml")  # points per exercise; nbgrader's and otter's builds read it too
WRITTEN_POINTS = "written"  # its key for the points of each written answer (graded by hand)


def grade(
    path: Path,
    student: str,
    *,
    timeout: int,
    points: dict,
    lesson: int | None = None,
    solutions: Path = SOLUTIONS,
    lessons: Path = LESSONS,
    record: dict | None = None,
    sandboxed: bool = True,
) -> SubmissionGrade:
    """Grade one submission; every failure of the notebook ends up in the result, not raised.

    ``record`` is where earlier versions' multiple-choice letters stand today
    (``course_lib.choice_history.EARLIER`` unless given)."""
    graded = SubmissionGrade(student, str(path), None)
    try:
        nb = notebooks.read(path)
        claimed = notebooks.claimed_passes(nb)  # before running clears the stored outputs
        graded.lesson = notebooks.lesson_of(path, nb, lesson)
        if graded.lesson is None:
            raise notebooks.InvalidNotebook(
                "its lesson is unknown (name it NN_..., or pass --lesson)"
            )
        found = notebooks.lesson_exercises(graded.lesson)
        reference = notebooks.lesson_notebook(lessons, graded.lesson)
        reference = notebooks.read(reference) if reference else None
        graded.free_text = notebooks.free_text(nb, reference)
        letters = choice_history.letters(nb, reference or {}, graded.lesson, record)
        unread = set() if letters.readable else {e.id for e in found if e.kind == "choice"}
        if unread:  # its letters may name other options than today's: say so, grade the rest
            graded.problems.append(_unread_letters(path, graded.lesson, letters, unread, record))
        checked = [e for e in found if e.id not in unread]
        sources = notebooks.code_cells(nb)  # what the exercises' rules read, as in the notebook
        moves = letters.moves  # the multiple choices whose options moved since its version
        names = [n for e in checked for n in e.names]
        with tempfile.TemporaryDirectory(prefix="grade-") as tmp:
            folder = Path(tmp) / "submission"  # the sandbox's only writable folder
            folder.mkdir()
            with Link(folder, sandboxed, timeout) as link:
                results = {}

                def check_answers(listener, stop_kernel):  # while the kernel serves
                    link.attach(listener, stop_kernel)  # or, if it never connects, a process
                    results.update(evaluate(link, checked, sources, timeout, moves))
                    link.stop()

                ran = execution.run(nb, folder, names, timeout, sandboxed, check_answers)
                graded.problems += ran.problems
                if not ran.exported:
                    results = {}
                elif not results:  # the kernel was never asked to serve: a server process
                    results = evaluate(link, checked, sources, timeout, moves)
    except (notebooks.InvalidNotebook, ValueError) as e:
        graded.invalid = str(e)
        _score_nothing(graded, graded.lesson or lesson or notebooks.lesson_in_name(path), points)
        return graded
    for e in found:
        if e.id in unread:
            message = UNREAD.format(lesson=graded.lesson)
            graded.exercises.append(
                ExerciseGrade(e.id, e.title, NOT_GRADED, message, 0.0, points.get(e.id, e.points))
            )
            continue
        result = results.get(
            e.id, {"status": FAILED, "message": "not checked: see the problems above."}
        )
        uses = sorted(result.get("uses", []))  # course_lib names the exercise's rules refuse
        worth = points.get(e.id, e.points)
        earned = worth if result["status"] == PASSED else 0.0
        graded.exercises.append(
            ExerciseGrade(e.id, e.title, result["status"], result["message"], earned, worth, uses)
        )
        if result.get("trouble"):  # the answer hung or crashed its check: worth a look
            graded.problems.append(f"checking {e.id}: {result['trouble']}")
    passed = {e.id for e in graded.exercises if e.status == PASSED}
    unproven = sorted(claimed - passed - unread, key=_order)
    if unproven:
        graded.problems.append(
            f"its stored outputs show ✓ Passed for {', '.join(unproven)}, which this run does not "
            "reproduce (outputs edited, or answers changed after they were checked)"
        )
    return graded


def _order(exercise_id: str) -> list[int]:
    return [int(k) if k.isdigit() else 0 for k in exercise_id.split(".")]


def _score_nothing(graded: SubmissionGrade, lesson: int | None, points: dict) -> None:
    """An invalid notebook of a known lesson scores 0 of that lesson's points, not 0 of 0."""
    if lesson is None:
        return
    graded.lesson = lesson
    for e in exercises(lesson):
        why = "not graded: the notebook could not be graded (see the note above)."
        graded.exercises.append(
            ExerciseGrade(e.id, e.title, NOT_GRADED, why, 0.0, points.get(e.id, e.points))
        )


UNREAD = (
    "not graded: your notebook lists the options differently from today's lesson and from "
    "every earlier version on record, so your letter may name another option now. Run "
    "`make update LESSON={lesson:02d}` (it carries your answers over), check this answer and "
    "submit again."
)


def _unread_letters(path: Path, lesson: int, letters, unread: set[str], record) -> str:
    """The note on a submission whose multiple-choice letters cannot be read."""
    n = f"{lesson:02d}"
    claims = f"claims version {letters.claimed}" if letters.claimed else "claims no version"
    known = choice_history.known_versions(lesson, record)
    today = f"today's {letters.today}" if letters.today else f"no lessons/{n}_*.ipynb"
    earlier = f" and the earlier {', '.join(known)}" if known else ""
    ids = ", ".join(sorted(unread, key=_order))
    return (
        f"{path.name} {claims} of lesson {n}, but lists its multiple-choice options as no "
        f"version this grader has a record of (it knows {today}{earlier}): {ids} not graded, "
        "since a letter may name another option there. The student "
        f"runs `make update LESSON={n}`, which carries the answers over, checks those answers "
        "and submits again."
    )


def _safe_grade(item, **options) -> SubmissionGrade:
    path, student = item
    try:
        return grade(path, student, **options)
    except Exception as e:  # a bug or a broken installation must not cost the other students
        return SubmissionGrade(
            student, str(path), None, invalid=f"the grader failed: {type(e).__name__}: {e}"
        )


def grade_many(
    items: list[tuple[Path, str]], jobs: int = 1, progress=None, **options
) -> list[SubmissionGrade]:
    """Grade submissions, ``jobs`` at a time in separate processes; results in input order.

    ``progress``, if given, is called with (number done, total, the grade just finished)."""
    task = partial(_safe_grade, **options)
    if jobs <= 1:  # in this process: nothing to lose to a worker that dies
        grades = []
        for done, item in enumerate(items, start=1):
            grades.append(task(item))
            if progress:
                progress(done, len(items), grades[-1])
        return grades
    grades: list[SubmissionGrade | None] = [None] * len(items)
    with ProcessPoolExecutor(max_workers=min(jobs, len(items))) as pool:
        running = {pool.submit(task, item): i for i, item in enumerate(items)}
        for done, future in enumerate(as_completed(running), start=1):
            grades[running[future]] = future.result()
            if progress:
                progress(done, len(items), grades[running[future]])
    return grades


def find_submissions(arguments: list[Path]) -> list[tuple[Path, str]]:
    """(path, student) pairs. Under a folder given, the student is the sub-folder the file is
    in (``alice/03_x.ipynb`` is alice's, however the file is named), or the file's name without
    ``.ipynb`` when it lies in the folder itself. A file given by path is named by its stem, or
    by its folder when other files given share that stem."""
    found = []
    for p in arguments:
        files = sorted(p.rglob("*.ipynb")) if p.is_dir() else [p]
        for f in files:
            if ".ipynb_checkpoints" not in f.parts:
                inside = f.relative_to(p).parts if p.is_dir() else (f.name,)
                found.append((f, inside[0] if len(inside) > 1 else f.stem))
    given = [f.stem for f in arguments if not f.is_dir()]  # alice/03_x.ipynb bob/03_x.ipynb
    return [(f, f.parent.name if given.count(name) > 1 else name) for f, name in found]


def load_points(path: Path | None) -> dict[str, float]:
    """Points per exercise id and per written answer (``written``): each exercise's own
    (:attr:`~course_lib.checks.Exercise.points`) and 1 per written answer, unless the JSON or
    TOML file ``path`` says otherwise (``"3.4" = 3``, ``written = 2``)."""
    points = {e.id: e.points for e in EXERCISES.values()} | {WRITTEN_POINTS: 1.0}
    if path is None:
        return points
    text = path.read_text(encoding="utf-8")
    table = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    for key, value in table.items():
        if key not in EXERCISES and key != WRITTEN_POINTS:
            raise ValueError(f"points: unknown exercise {key!r} in {path}")
        if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
            raise ValueError(f"points: {key!r} should be a number >= 0; got {value!r}")
    return points | {k: float(v) for k, v in table.items()}


def write_reports(grades, out: Path) -> str:
    ids = list(dict.fromkeys(e.id for g in grades for e in g.exercises))
    _note_repeats(grades)
    out.parent.mkdir(parents=True, exist_ok=True)
    reports.write_csv(grades, out, ids)
    folder = out.parent / "feedback"
    folder.mkdir(exist_ok=True)
    written: set[str] = set()
    for g in grades:
        name = reports.file_name(g.student, g.lesson)
        while name in written:  # the same student's second notebook of a lesson
            name = name.removesuffix(".md") + "+.md"
        written.add(name)
        (folder / name).write_text(reports.feedback(g), encoding="utf-8")
    text = reports.summary(grades, ids)
    (out.parent / "summary.md").write_text(text, encoding="utf-8")
    return text


def _note_repeats(grades: list[SubmissionGrade]) -> None:
    """A student with two notebooks of one lesson gets two rows; say so on both."""
    for g in grades:
        same = [h.path for h in grades if (h.student, h.lesson) == (g.student, g.lesson)]
        if g.lesson is not None and len(same) > 1:
            g.problems.append(f"{len(same)} notebooks of lesson {g.lesson}: {', '.join(same)}")
