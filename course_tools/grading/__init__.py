"""The instructor's grader: ``python -m course_tools.grade SUBMISSIONS... --out grades.csv``.

One concept per module:

- ``notebooks``: reading a submission without running it (which lesson, which cells hold
  which answer, free-text answers, uses of the course's reference code);
- ``execution``: running a copy of a submission in a fresh kernel, surviving errors,
  timeouts and dying kernels, and exporting the answer objects;
- ``checking``: checking the exported answers in a separate, clean process;
- ``reports``: the CSV, the summary and one feedback file per student;
- ``grader``: one submission end to end, many in parallel, and the report files;
- ``validation``: every check passes on ``solutions/`` and none on ``lessons/``.

The command line is ``course_tools.grade``.

Why two processes: the student's kernel can redefine ``check``, patch ``course_lib`` or
``torch``, or print text that looks like a passed check. None of that reaches the checks,
which run in a process that never executed the notebook and import ``course_lib`` afresh.
"""
