"""Classroom assignments, graded safely on the teacher's own machine.

Each assignment is an otter-grader master notebook with a grading spec
beside it, ``assignments/<name>/checks.py``. The package is split by job:

- :mod:`classroom.masters`: the masters, their questions and specs;
- :mod:`classroom.build`: ``otter assign`` and the reference answers;
- :mod:`classroom.submissions`: a folder of submissions, their code, their imports;
- :mod:`classroom.files`: reading a file the grader does not trust (bounded, timed);
- :mod:`classroom.sandbox` and :mod:`classroom.seccomp`: the bubblewrap command
  line, its limits, and the system calls it refuses;
- :mod:`classroom.runner`: what runs inside the sandbox (answers only);
- :mod:`classroom.execute`: one confined run, watched, its answers read back safely;
- :mod:`classroom.answers`, :mod:`classroom.expect`, :mod:`classroom.compare`:
  decoding, checks and scores, in the grader's process;
- :mod:`classroom.report`: the CSV and the feedback files;
- :mod:`classroom.grade` and :mod:`classroom.cli`: grading a folder, the command line;
- :mod:`classroom.demo`: the made-up class of the Classroom chapter.

``python3 tasks.py assignments`` and ``python3 tasks.py grade FOLDER`` are the
two commands; the Classroom chapter of the book explains them.
"""
