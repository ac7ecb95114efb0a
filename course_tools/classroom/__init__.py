"""The course on the platforms instructors already run: nbgrader and otter-grader.

Both builds start from ``solutions/``, like ``lessons/``, and reuse the lessons' stubs
(:func:`course_tools.authoring.regions`) and the grader's points file (``points.toml``). Their
tests call :func:`course_lib.checks.require`, the raising form of the notebooks' checks, so a
platform's score is the course's own verdict and the test cells show no answer.

- :mod:`.nbgrader_course`: ``make nbgrader`` writes a course directory to ``build/nbgrader/``.
- :mod:`.otter_assignments`: ``make otter`` writes otter-assign notebooks to ``build/otter/``.
- :mod:`.sandboxed_kernel`: ``make autograde`` runs nbgrader's autograde with each
  student's kernel in the grader's sandbox.

Commands (run from the repository root)::

    python -m course_tools.classroom nbgrader [--out build/nbgrader] [--lessons 03 05]
    python -m course_tools.classroom otter [--out build/otter] [--lessons 03 05]
"""
