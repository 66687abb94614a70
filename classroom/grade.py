"""Grade a folder of submissions into a CSV: confined runs, scores decided here.

For each student, one at a time per job: read the notebook (never writing to
it, and keeping it only while that student is graded), decide its
assignment, take its code cells, note any use of a forbidden module, run the
cells and the probes in the sandbox (:mod:`classroom.execute`), and judge the
answers against the references with the assignment's checks
(:mod:`classroom.compare`).

The assignment is decided per notebook: the one its metadata names, else
the teacher's ``assignment``. A notebook of another assignment is graded as
that one, says so in its row, and changes nothing for the others.
"""

from __future__ import annotations

import concurrent.futures
import math
import re
import threading
from pathlib import Path

from classroom import compare, execute, report, sandbox
from classroom.build import load_references
from classroom.masters import ASSIGNMENTS, BUILD, ClassroomError, describe, load_spec, master_paths
from classroom.submissions import (Submission, assignment_name, code_cells, find_submissions,
                                   forbidden_uses, read_submission)

#: Seconds one submission may run before it is stopped.
DEFAULT_TIMEOUT = 120.0
#: The flag that grades without the sandbox; its name says what it is.
UNSAFE_FLAG = "--unsafe-no-sandbox"
#: The reason of a notebook whose metadata names no assignment, when the teacher named none.
NO_ASSIGNMENT = "not graded: its metadata names no assignment; pass --assignment NAME to grade it"


def _check_number(name: str, value) -> None:
    if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ClassroomError(f"{name} must be a number of seconds > 0, got {value!r}")


class _Assignments:
    """Spec, description and references of each assignment, loaded once, when first needed."""

    def __init__(self, build: Path):
        self.build, self.loaded, self.lock = build, {}, threading.Lock()

    def get(self, name: str):
        """``(spec, info, references)``, or a string saying why the assignment cannot be graded."""
        with self.lock:
            if name not in self.loaded:
                try:
                    spec = load_spec(name)
                    info = describe(ASSIGNMENTS / name / f"{name}.ipynb")
                    self.loaded[name] = (spec, info, load_references(self.build, name))
                except ClassroomError as error:
                    known = ", ".join(path.stem for path in master_paths())
                    self.loaded[name] = (f"not graded: its metadata names the assignment {name!r}, "
                                         f"which is not one of {known}"
                                         if "must be one of" in str(error) else f"not graded: {error}")
            return self.loaded[name]


def _question_order(name: str) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def grade_folder(folder: Path, *, out: Path | None = Path("scores.csv"), assignment: str | None = None,
                 build: Path = BUILD, timeout: float = DEFAULT_TIMEOUT, cell_timeout: float | None = None,
                 jobs: int = 1, feedback: Path | None = None, unsafe_no_sandbox: bool = False,
                 log=print) -> list[dict]:
    """Grade every submission in ``folder`` and write one CSV row per student to ``out``.

    Args:
        folder: one notebook (or one folder with a notebook) per student.
        out: the CSV to write, outside ``folder``; ``None`` writes nothing.
        assignment: the assignment of the notebooks whose metadata names none
            (answers pasted into a fresh notebook). A notebook whose metadata
            names an assignment is graded as that one.
        build: the build folder with ``<assignment>/references.json``.
        timeout: seconds each submission may run, in all.
        cell_timeout: seconds one cell or probe may run (default: the spec's).
        jobs: submissions graded at the same time.
        feedback: a folder for one feedback file per student, or ``None``.
        unsafe_no_sandbox: run student code without the sandbox, with the
            teacher's rights. Only for trusted code on a machine without bubblewrap.

    Returns:
        The rows written: ``student``, ``assignment``, one key per question,
        ``total``, ``possible``, ``flags``, ``reason`` and, with
        ``feedback``, the name of the student's ``feedback`` file.
    """
    folder = Path(folder).resolve()
    _check_number("timeout", timeout)
    _check_number("cell_timeout", cell_timeout)
    if not (isinstance(jobs, int) and not isinstance(jobs, bool) and jobs >= 1):
        raise ClassroomError(f"jobs must be an integer >= 1, got {jobs!r}")
    if assignment is not None:
        load_spec(assignment)  # an unknown name stops here, before anything runs
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
    assignments = _Assignments(Path(build))
    if assignment is not None and isinstance(assignments.get(assignment), str):
        raise ClassroomError(assignments.get(assignment).removeprefix("not graded: "))
    file_names = report.feedback_names([s.student for s in submissions]) if feedback is not None else {}
    named_by_metadata = set()

    def grade(submission: Submission) -> dict:
        reasons = [submission.note] if submission.note else []
        flags, details, name, info = [], {}, assignment, None
        problem = submission.problem
        notebook = None
        if submission.path is not None:
            notebook, problem = read_submission(submission.path)
        read = notebook is not None
        if notebook is not None:
            named = assignment_name(notebook)
            if named is not None:
                named_by_metadata.add(named)
                if assignment is not None and named != assignment:
                    reasons.append(f"its metadata says it is {named}, so it is graded as {named}, "
                                   f"not {assignment}")
                name = named
            if name is None:
                problem = NO_ASSIGNMENT
        if name is not None and not problem:
            context = assignments.get(name)
            if isinstance(context, str):
                problem = context
            else:
                spec, info, references = context
                cells = code_cells(notebook)
                del notebook  # only the code is kept while the sandbox runs
                flags = forbidden_uses(cells, spec.forbidden)
                if not cells:
                    reasons.append("the notebook has no code cells")
                try:
                    outcome = execute.run(cells, spec.probes, library=spec.library, timeout=timeout,
                                          cell_seconds=cell_timeout or min(spec.seconds, timeout),
                                          confined=confined,
                                          memory_bytes=int(spec.memory_gib * (1 << 30)),
                                          address_bytes=int(spec.address_gib * (1 << 30)))
                except Exception as error:  # one student's failure never stops the others
                    outcome = execute.Outcome({}, [], f"the grader failed: {type(error).__name__}")
                if outcome.problem:
                    reasons.append(outcome.problem)
                for number, kind, message in outcome.cell_errors[:3]:
                    reasons.append(f"cell {number} raised {kind}: {message}".rstrip(": "))
                results = compare.score_all(spec.questions, info.points, outcome.answers, references)
                details = {q: (r.score, info.points[q], r.failures) for q, r in results.items()}
        if problem:
            reasons.append(problem)
        return {"submission": submission, "name": name if info is not None else None, "info": info,
                "details": details, "flags": flags, "reasons": reasons, "notebook": read}

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        graded = list(pool.map(grade, submissions))

    if assignment is None and not named_by_metadata:
        raise ClassroomError("cannot tell which assignment these are: no notebook's metadata names one; "
                             "pass --assignment NAME")
    # A row that is no notebook of any assignment is shown under the class's
    # assignment: the teacher's, or the one every notebook's metadata names.
    fallback = assignment or (next(iter(named_by_metadata)) if len(named_by_metadata) == 1 else None)
    rows, questions = [], {}
    for result in graded:
        submission, details, reasons = result["submission"], result["details"], result["reasons"]
        name, info = result["name"], result["info"]
        if info is None and fallback is not None and not result["notebook"]:
            context = assignments.get(fallback)
            if not isinstance(context, str):
                name, info = fallback, context[1]
                details = {q: (0.0, p, []) for q, p in info.points.items()}
        total = sum(score for score, _, _ in details.values())
        lost = [f"{q}: " + "; ".join(failures[:2]) + (f" (+{len(failures) - 2} more)" if len(failures) > 2 else "")
                for q, (score, possible, failures) in details.items() if failures and score < possible]
        if total == 0 and not reasons and not lost:
            reasons.append("no answer earned points")
        row = {"student": submission.student, "assignment": name or "",
               **{q: report.number(score) for q, (score, _, _) in details.items()},
               "total": report.number(total),
               "possible": report.number(info.total) if info is not None else "",
               "flags": "; ".join(result["flags"]), "reason": " | ".join(reasons + lost)}
        for question in details:
            questions.setdefault(question, None)
        if feedback is not None:
            row["feedback"] = file_names[submission.student]
            title = info.title if info is not None else "Assignment"
            report.write_feedback(feedback, row["feedback"],
                                  report.feedback_text(submission.student, title, details, row, reasons))
        rows.append(row)
        log(f"{row['student']}: {row['total']}/{row['possible'] or '-'}"
            + (f"  [{row['flags']}]" if row["flags"] else ""))
    order = sorted(questions, key=_question_order)
    if out is not None:
        report.write_csv(out, rows, order, feedback=feedback is not None)
        names = ", ".join(sorted({row["assignment"] for row in rows if row["assignment"]})) or "no assignment"
        log(f"{len(rows)} submissions of {names} graded; scores written to {out}")
    unnamed = sum(NO_ASSIGNMENT in row["reason"] for row in rows)
    if unnamed:
        log(f"not graded, their metadata naming no assignment: {unnamed}")
        log("  (pass --assignment NAME to grade them)")
    return rows
