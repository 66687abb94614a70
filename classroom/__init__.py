"""Classroom assignments that grade themselves, on the teacher's own machine.

Each assignment is an otter-grader master notebook,
``assignments/<name>/<name>.ipynb``. :mod:`classroom.grading` builds the
student notebooks and autograder bundles from the masters (``otter assign``)
and grades a folder of submissions into one CSV (``otter run``, one
subprocess per submission, with a time limit). No server and no Docker.

``python3 tasks.py assignments`` and ``python3 tasks.py grade FOLDER`` are the
two commands; the Classroom chapter of the book explains them.
"""
