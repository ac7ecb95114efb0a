"""The instructor's grader: ``python -m course_tools.grade SUBMISSIONS... --out grades.csv``.

One concept per module:

- ``notebooks``: reading a submission without running it (which lesson, which cells hold
  which answer, free-text answers, uses of the course's reference code);
- ``sandbox``: the bubblewrap sandbox each submission's code runs in, and its limits;
- ``execution``: running a copy of a submission in a fresh kernel, surviving errors,
  timeouts and dying kernels, and exporting the answer objects (inside the sandbox);
- ``inside``: what runs in the sandbox: the notebook, then a server for the checks' calls;
- ``checking``: checking the answers outside the sandbox, on plain data only;
- ``reports``: the CSV, the summary and one feedback file per student;
- ``grader``: one submission end to end, many in parallel, and the report files;
- ``validation``: every check passes on ``solutions/`` and none on ``lessons/``.

The command line is ``course_tools.grade``.

Why a sandbox and plain data: the student's code can do anything its user can. In the sandbox
it reads nothing of the course but ``course_lib`` (no solutions, no other submissions), writes
nothing but its own copy, reaches no network, and leaves no process behind. Its answers reach
the checks only as plain data, and the learner's functions stay in the sandbox, called from
outside: a value that compares as it likes, or a function that patches ``torch`` or the checks
while it runs, changes nothing in the process that decides the grade.
"""
