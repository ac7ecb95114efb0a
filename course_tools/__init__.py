"""Tools for the course's instructors and maintainers (``pip install -e ".[tools]"``).

    sources         the solutions' text sources (jupytext percent scripts) and their notebooks
    authoring       building and running solutions/, generating lessons/ from them
    setup_cell      every lesson's first code cell: installs the course on Colab or Kaggle
    repository      the course's address (pyproject.toml), the links written from it
    prompts         each exercise prompt's "What you may use", written from its rules
    grade           the grader's and validator's command line
    grading         the grader: reading, running and checking submissions; reports
    classroom       the course for nbgrader and otter-grader (make nbgrader, make otter)
    release         what students receive, without solutions (make release)
    site            the offline HTML site of the course
    mutation        wrong variants of every model answer run through the checks (figures)

Each command takes the course's folders from its options, relative to the working directory
(the repository root by default), never from where this package is installed.
"""
