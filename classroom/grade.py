"""Grade a folder of submissions into a CSV: confined runs, scores decided here.

For each student: read the notebook (never writing to it), take its code
cells, note any use of a forbidden module, run the cells and the probes in
the sandbox (:mod:`classroom.execute`), and judge the answers against the
references with the assignment's checks (:mod:`classroom.compare`).
"""

from __future__ import annotations

import concurrent.futures
import math
from pathlib import Path

from classroom import compare, execute, report, sandbox
from classroom.build import load_references
from classroom.masters import ASSIGNMENTS, BUILD, ClassroomError, describe, load_spec
from classroom.submissions import (Submission, assignment_name, code_cells, find_submissions,
                                   forbidden_uses, read_submission)

#: Seconds one submission may run before it is stopped.
DEFAULT_TIMEOUT = 120.0
#: The flag that grades without the sandbox; its name says what it is.
UNSAFE_FLAG = "--unsafe-no-sandbox"


def _check_number(name: str, value) -> None:
    if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ClassroomError(f"{name} must be a number of seconds > 0, got {value!r}")


def grade_folder(folder: Path, *, out: Path | None = Path("scores.csv"), assignment: str | None = None,
                 build: Path = BUILD, timeout: float = DEFAULT_TIMEOUT, cell_timeout: float | None = None,
                 jobs: int = 1, feedback: Path | None = None, unsafe_no_sandbox: bool = False,
                 log=print) -> list[dict]:
    """Grade every submission in ``folder`` and write one CSV row per student to ``out``.

    Args:
        folder: one notebook (or one folder with a notebook) per student.
        out: the CSV to write, outside ``folder``; ``None`` writes nothing.
        assignment: the assignment's name; by default the one the notebooks
            name in their metadata. A notebook without metadata is graded as
            this assignment.
        build: the build folder with ``<assignment>/references.json``.
        timeout: seconds each submission may run, in all.
        cell_timeout: seconds one cell or probe may run (default: the spec's).
        jobs: submissions graded at the same time.
        feedback: a folder for one feedback file per student, or ``None``.
        unsafe_no_sandbox: run student code without the sandbox, with the
            teacher's rights. Only for trusted code on a machine without bubblewrap.

    Returns:
        The rows written: ``student``, one key per question, ``total``,
        ``possible``, ``flags`` and ``reason``.
    """
    folder = Path(folder).resolve()
    _check_number("timeout", timeout)
    _check_number("cell_timeout", cell_timeout)
    if not (isinstance(jobs, int) and not isinstance(jobs, bool) and jobs >= 1):
        raise ClassroomError(f"jobs must be an integer >= 1, got {jobs!r}")
    submissions = find_submissions(folder)
    for name, path in (("out", out), ("feedback", feedback)):
        if path is not None:
            path = Path(path).resolve()
            if path == folder or path.is_relative_to(folder) or folder.is_relative_to(path):
                raise ClassroomError(f"{name} must lie outside the submissions folder, got {str(path)!r}")
    confined = not unsafe_no_sandbox
    if confined:
        why = sandbox.check()
        if why:
            raise ClassroomError(f"cannot grade safely: {why}. To grade without the sandbox, "
                                 f"with your own rights, only code you trust, pass {UNSAFE_FLAG}.")

    notebooks = {s.student: read_submission(s.path) for s in submissions if s.path is not None}
    if assignment is None:
        named = sorted({assignment_name(nb) for nb, _ in notebooks.values() if nb is not None} - {None})
        if len(named) != 1:
            found = ", ".join(map(str, named)) or "none"
            raise ClassroomError(f"cannot tell which assignment these are (found: {found}); pass --assignment NAME")
        assignment = named[0]
    spec = load_spec(assignment)
    info = describe(ASSIGNMENTS / assignment / f"{assignment}.ipynb")
    references = load_references(build, assignment)
    points = info.points
    cell_seconds = cell_timeout or min(spec.seconds, timeout)

    def grade(submission: Submission) -> dict:
        details = {q: (0.0, p, []) for q, p in points.items()}
        flags, reasons = [], []
        notebook, problem = notebooks.get(submission.student, (None, submission.problem))
        if notebook is None:
            reasons.append(problem)
        else:
            named = assignment_name(notebook)
            if named not in (None, assignment):
                reasons.append(f"the notebook says it is {str(named)[:40]!r}; graded as {assignment}")
            cells = code_cells(notebook)
            flags = forbidden_uses(cells, spec.forbidden)
            if not cells:
                reasons.append("the notebook has no code cells")
            try:
                outcome = execute.run(cells, spec.probes, library=spec.library, timeout=timeout,
                                      cell_seconds=cell_seconds, confined=confined,
                                      memory_bytes=int(spec.memory_gib * (1 << 30)))
            except Exception as error:  # one student's failure never stops the others
                outcome = execute.Outcome({}, [], f"the grader failed: {type(error).__name__}")
            if outcome.problem:
                reasons.append(outcome.problem)
            for number, kind, message in outcome.cell_errors[:3]:
                reasons.append(f"cell {number} raised {kind}: {message}".rstrip(": "))
            results = compare.score_all(spec.questions, points, outcome.answers, references)
            details = {q: (r.score, points[q], r.failures) for q, r in results.items()}
        total = sum(score for score, _, _ in details.values())
        lost = [f"{q}: " + "; ".join(failures[:2]) + (f" (+{len(failures) - 2} more)" if len(failures) > 2 else "")
                for q, (score, possible, failures) in details.items() if failures and score < possible]
        if total == 0 and not reasons and not lost:
            reasons.append("no answer earned points")
        row = {"student": submission.student, **{q: report.number(s) for q, (s, _, _) in details.items()},
               "total": report.number(total), "possible": report.number(sum(points.values())),
               "flags": "; ".join(flags), "reason": " | ".join(reasons + lost)}
        if feedback is not None:
            report.write_feedback(feedback, submission.student,
                                  report.feedback_text(submission.student, info.title, details, row, reasons))
        return row

    rows = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for row in pool.map(grade, submissions):
            rows.append(row)
            log(f"{row['student']}: {row['total']}/{row['possible']}"
                + (f"  [{row['flags']}]" if row["flags"] else ""))
    if out is not None:
        report.write_csv(out, rows, list(points))
        log(f"{len(rows)} submissions of {assignment} graded; scores written to {out}")
    return rows
