"""Grade a folder of submissions into a CSV: confined runs, scores decided here.

Before anything runs, the outputs are checked writable and each notebook's
assignment is decided (:mod:`classroom.identify`); a folder whose notebooks
cannot be told apart is refused then, not after the class is graded.

For each student, one at a time per job: read the notebook (never writing to
it, and keeping it only while that student is graded), take its code cells
(bounded: :data:`classroom.submissions.CELL_LIMIT`), note any use of a
forbidden module, run the cells and the probes in the sandbox
(:mod:`classroom.execute`), and judge the answers against the references
with the assignment's checks (:mod:`classroom.compare`). Each student is
one unit: any failure in it becomes that row's reason, never the class's.

As each student finishes, a progress line is printed, the row is added to the
run's record (:mod:`classroom.progress`) and the feedback note is written;
the CSV is written whole at the end. A run that is stopped goes on where it
stopped when started again.
"""

from __future__ import annotations

import collections
import concurrent.futures
import math
import re
import threading
from pathlib import Path

from classroom import compare, execute, identify, progress, report, sandbox
from classroom.build import load_references, master_solutions
from classroom.masters import ASSIGNMENTS, BUILD, ClassroomError, describe, load_spec, master_paths
from classroom.submissions import (Submission, TooMuchCode, assignment_name, code_cells, find_submissions,
                                   forbidden_uses, hidden_entries, read_notebook)

#: Seconds one submission may run before it is stopped.
DEFAULT_TIMEOUT = 120.0
#: Most flags of forbidden uses shown in a row; the rest are counted.
FLAGS_SHOWN = 5
#: The flag that grades without the sandbox; its name says what it is.
UNSAFE_FLAG = "--unsafe-no-sandbox"


class OutputError(ClassroomError):
    """Grading finished but some of its outputs could not be written; the message says which."""


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


def _catalog() -> dict[str, frozenset]:
    """The graded names of every assignment (what its probes read that its master defines)."""
    catalog = {}
    for master in master_paths():
        try:
            spec = load_spec(master.stem)
            sources = [cell.source for cell in master_solutions(master).cells]
        except Exception:  # a master that cannot be read identifies nothing
            continue
        catalog[master.stem] = identify.graded_names(spec.probes, sources)
    return catalog


def _fingerprint(name: str | None, build: Path) -> str:
    """A digest of what grading as ``name`` depends on: its spec, master and references."""
    if not name or not name.isidentifier():
        return ""
    return progress.key([progress.file_digest(ASSIGNMENTS / name / "checks.py"),
                         progress.file_digest(ASSIGNMENTS / name / f"{name}.ipynb"),
                         progress.file_digest(Path(build).resolve() / name / "references.json")])


def _lost(details: dict) -> list[str]:
    return [f"{q}: " + "; ".join(failures[:2]) + (f" (+{len(failures) - 2} more)" if len(failures) > 2 else "")
            for q, (score, possible, failures) in details.items() if failures and score < possible]


def grade_folder(folder: Path, *, out: Path | None = Path("scores.csv"), assignment: str | None = None,
                 build: Path = BUILD, timeout: float = DEFAULT_TIMEOUT, cell_timeout: float | None = None,
                 jobs: int = 1, feedback: Path | None = None, unsafe_no_sandbox: bool = False,
                 regrade: bool = False, log=print) -> list[dict]:
    """Grade every submission in ``folder`` and write one CSV row per student to ``out``.

    Args:
        folder: one notebook (or one folder with a notebook) per student.
        out: the CSV to write, outside ``folder``; ``None`` writes nothing
            (and keeps no record of progress).
        assignment: the assignment of the notebooks whose metadata names none.
            A notebook whose metadata names an assignment is graded as that one.
        build: the build folder with ``<assignment>/references.json``.
        timeout: seconds each submission may run, in all.
        cell_timeout: seconds one cell or probe may run (default: the spec's).
        jobs: submissions graded at the same time.
        feedback: a folder for one feedback file per student, or ``None``.
        unsafe_no_sandbox: run student code without the sandbox, with the
            teacher's rights. Only for trusted code on a machine without bubblewrap.
        regrade: grade every student again, even those the record of an
            earlier run with the same ``out`` holds unchanged.

    Returns:
        The rows written: ``student``, ``assignment``, one key per question,
        ``total``, ``possible``, ``flags``, ``reason`` and, with
        ``feedback``, the name of the student's ``feedback`` file.

    Raises:
        ClassroomError: before anything runs, for a problem with the command
            as given (outputs not writable, notebooks whose assignment cannot
            be told); :class:`OutputError` after grading, when an output could
            not be written (every score was logged and recorded by then).
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
    for path, what, is_folder in ((out, "the scores", False), (feedback, "the feedback notes", True)):
        if path is not None:
            why = report.writable(path, folder=is_folder)
            if why:
                raise ClassroomError(f"cannot write {what}: {why}")
    confined = not unsafe_no_sandbox
    if confined:
        why = sandbox.check()
        if why:
            raise ClassroomError(f"cannot grade safely: {why}")
    assignments = _Assignments(Path(build))
    if assignment is not None and isinstance(assignments.get(assignment), str):
        raise ClassroomError(assignments.get(assignment).removeprefix("not graded: "))

    # Which assignment the folder is, decided before anything runs: the teacher's, if named.
    looks = {submission.student: identify.look(submission.path) for submission in submissions}
    catalog = _catalog()
    fallback = identify.class_assignment(looks, assignment, catalog, folder.name)
    if fallback is None:
        told_by = {student: seen.named if seen.named in catalog else identify.by_code(seen.defined, catalog)
                   for student, seen in looks.items() if seen.readable}
        counts = collections.Counter(name for name in told_by.values() if name)
        unknown = sorted(student for student, name in told_by.items() if not name)
        if not unknown and not counts:
            raise ClassroomError("cannot tell which assignment these are: no notebook names one; "
                                 "pass --assignment NAME")
        told = ", ".join(f"{name}: {count}" for name, count in sorted(counts.items()) if name)
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise ClassroomError(
            (f"cannot tell which assignment {len(unknown)} notebook(s) are ({shown}): their metadata names "
             "none and their code defines no one assignment's functions; " if unknown else
             "cannot tell which assignment this folder is: ")
            + (f"the others are {told}: no one assignment is more than half of them; " if told else "")
            + "pass --assignment NAME")
    decided = identify.decide(looks, fallback, catalog, teacher=assignment is not None)
    if isinstance(assignments.get(fallback), str):
        raise ClassroomError(assignments.get(fallback).removeprefix("not graded: "))
    scores_before = report.read_scores(out) if out is not None else None
    present = {report.neutral(submission.student) for submission in submissions}
    others = [row for row in scores_before or [] if row["student"] not in present]
    foreign = sorted({row.get("assignment", "") for row in others} - {"", fallback})
    if foreign:
        raise ClassroomError(f"{out} holds the scores of {len(others)} students who are not in {folder}, "
                             f"of {', '.join(foreign)}, not {fallback}: grade into another --out "
                             "(or move that file away)")
    file_names = (report.feedback_names([s.student for s in submissions],
                                        taken={row.get("feedback") or "" for row in others})
                  if feedback is not None else {})

    def grade(submission: Submission) -> dict:
        reasons = [submission.note] if submission.note else []
        flags, details, name, info = list(submission.flags), {}, None, None
        problem, digest, retry = submission.problem, "", False
        notebook = None
        if submission.path is not None:
            notebook, problem, digest = read_notebook(submission.path)
        read = notebook is not None
        if notebook is not None:
            name, why = decided.get(submission.student, (fallback, ""))
            named = assignment_name(notebook)
            if named != looks[submission.student].named:  # the file changed since the first look
                why = ("" if named in (None, name) else
                       f"its metadata names {named}, not {name}: graded as {name}")
            if why:
                flags.append(why)
        if name is not None and not problem:
            context = assignments.get(name)
            if isinstance(context, str):
                problem = context
            else:
                spec, info, references = context
                try:
                    cells = code_cells(notebook)
                except TooMuchCode as error:
                    cells, problem = None, f"not graded: {error}; hand in the notebook without it"
                del notebook  # only the code is kept while the sandbox runs
                if cells is not None:
                    used = forbidden_uses(cells, spec.forbidden)
                    flags += used[:FLAGS_SHOWN] + ([f"and {len(used) - FLAGS_SHOWN} more like these"]
                                                   if len(used) > FLAGS_SHOWN else [])
                    if not cells:
                        reasons.append("the notebook has no code cells")
                    outcome = execute.run(cells, spec.probes, library=spec.library, timeout=timeout,
                                          cell_seconds=cell_timeout or min(spec.seconds, timeout),
                                          confined=confined,
                                          memory_bytes=int(spec.memory_gib * (1 << 30)),
                                          address_bytes=int(spec.address_gib * (1 << 30)))
                    del cells
                    if outcome.problem:
                        reasons.append(outcome.problem)
                    for number, kind, message in outcome.cell_errors[:3]:
                        reasons.append(f"cell {number} raised {kind}: {message}".rstrip(": "))
                    if outcome.fault:
                        reasons.append(outcome.fault)
                        retry = True
                    results = compare.score_all(spec.questions, info.points, outcome.answers, references)
                    details = {q: (r.score, info.points[q], r.failures) for q, r in results.items()}
        if problem:
            reasons.append(problem)
        entry = _entry(submission, name if info is not None else None, info, details, flags, reasons, read)
        return dict(entry, digest=digest, retry=retry)

    def _entry(submission, name, info, details, flags, reasons, read) -> dict:
        if info is None and fallback is not None and not read:
            context = assignments.get(fallback)
            if not isinstance(context, str):
                name, info = fallback, context[1]
                details = {q: (0.0, p, []) for q, p in info.points.items()}
        if info is not None and not details:  # graded as an assignment, but nothing ran
            details = {q: (0.0, p, []) for q, p in info.points.items()}
        total = sum(score for score, _, _ in details.values())
        lost = _lost(details)
        if total == 0 and not reasons and not lost:
            reasons.append("no answer earned points")
        row = {"student": submission.student, "assignment": name or "",
               **{q: report.number(score) for q, (score, _, _) in details.items()},
               "total": report.number(total),
               "possible": report.number(info.total) if info is not None else "",
               "flags": "; ".join(flags), "reason": " | ".join(reasons + lost)}
        note = None
        if feedback is not None:
            row["feedback"] = file_names[submission.student]
            title = info.title if info is not None else "Assignment"
            note = report.feedback_text(submission.student, title, details, row, reasons)
        return {"row": row, "note": note, "questions": list(details)}

    def grade_one(submission: Submission) -> dict:
        try:
            return grade(submission)
        except (OSError, sandbox.SandboxUnavailable) as error:  # the machine's trouble, not the student's
            why = str(error) if isinstance(error, sandbox.SandboxUnavailable) else (error.strerror or str(error))
            reason = (f"not graded: the grader could not run it ({why}): the grader's fault, not the "
                      "notebook's; the next run grades it again")
        except Exception as error:  # one student's failure, wherever it happens, is that row's reason
            reason = f"not graded: the grader failed on this notebook ({type(error).__name__}); grade it by hand"
        try:
            return dict(_entry(submission, None, None, {}, [], [reason], False), retry=True)
        except Exception:
            row = {"student": submission.student, "assignment": "", "total": "0", "possible": "",
                   "flags": "", "reason": reason}
            if feedback is not None:
                row["feedback"] = file_names[submission.student]
            return {"row": row, "note": None, "questions": [], "retry": True}

    grader, library = progress.grader_digest(), progress.library_digest()

    def key_of(submission: Submission, digest: str | None = None) -> str:
        """What the row depends on; ``digest``: that of the bytes graded (default: those of the first look)."""
        seen = looks[submission.student]
        decided_name = decided.get(submission.student, (None, ""))[0]
        return progress.key([submission.student, str(submission.path), submission.problem, submission.note,
                             list(submission.flags), seen.digest if digest is None else digest, seen.named,
                             decided_name, fallback, assignment,
                             [_fingerprint(n, build) for n in (seen.named, decided_name, fallback)],
                             grader, library, timeout, cell_timeout, confined,
                             file_names.get(submission.student)])

    record_at = progress.record_path(Path(out).resolve()) if out is not None else None
    recorded = {} if record_at is None else progress.load(record_at)
    earlier = {} if regrade else recorded
    keys = {submission.student: key_of(submission) for submission in submissions}
    results = {student: earlier[k] for student, k in keys.items() if progress.reusable(earlier.get(k))}
    again = sum(1 for k in keys.values() if k in earlier and not progress.reusable(earlier[k]))
    students = {submission.student for submission in submissions}
    elsewhere = [entry for entry in recorded.values() if entry["row"].get("student") not in students]
    record = progress.Record(record_at, elsewhere + [dict(results[s.student], key=keys[s.student])
                                                     for s in submissions if s.student in results])
    todo = [submission for submission in submissions if submission.student not in results]
    if results:
        # Short lines: they are read in a terminal, and on a phone in the book.
        log(f"{len(results)} of {len(submissions)} kept from an earlier run")
        log("(unchanged; --regrade grades them again)")
    if again:
        log(f"{again} graded again: their earlier result may have been the machine's doing")
    if others:
        shown = ", ".join(row["student"] for row in others[:5]) + (" ..." if len(others) > 5 else "")
        log(f"{out} also holds {len(others)} student(s) not in this folder; their rows are kept: {shown}")
    hidden = hidden_entries(folder)
    if hidden:
        log(f"{len(hidden)} hidden entr{'y' if len(hidden) == 1 else 'ies'} of {folder} "
            f"(not notebooks) left out: {', '.join(hidden[:5])}" + (" ..." if len(hidden) > 5 else ""))
    unwritten, why_unwritten = [], ""

    def deliver(submission: Submission, entry: dict, count: str) -> None:
        nonlocal why_unwritten
        row = entry["row"]
        if feedback is not None and entry.get("note") is not None:
            try:
                report.write_feedback(feedback, row["feedback"], entry["note"])
            except Exception as error:  # a full disk, say: said at the end, and grading goes on
                unwritten.append(row["feedback"])
                why_unwritten = why_unwritten or (getattr(error, "strerror", None) or type(error).__name__)
        if count:
            log(f"[{count}] {row['student']}: {row['total']}/{row['possible'] or '-'}"
                + ("  (flagged)" if row["flags"] else ""))

    for submission in submissions:
        if submission.student in results:
            deliver(submission, results[submission.student], "")
    done = len(results)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(grade_one, submission): submission for submission in todo}
        try:
            for future in concurrent.futures.as_completed(futures):
                submission, entry = futures[future], future.result()
                results[submission.student] = entry
                graded_key = key_of(submission, entry["digest"]) if "digest" in entry else keys[submission.student]
                record.add(dict(entry, key=graded_key))
                done += 1
                deliver(submission, entry, f"{done}/{len(submissions)}")
        except BaseException:
            for future in futures:
                future.cancel()
            execute.stop_all()  # the students being graded are not waited for
            log(f"stopped after {done} of {len(submissions)} submissions"
                + (f"; those are recorded in {record_at}: run the same command again to go on"
                   if record_at is not None and not record.problem else ""))
            raise

    rows = [results[submission.student]["row"] for submission in submissions]
    questions = {q: None for submission in submissions for q in results[submission.student]["questions"]}
    fixed = set(report.columns([], feedback=True))
    questions.update({q: None for row in others for q in row if q not in fixed})
    order = sorted(questions, key=_question_order)
    with_notes = feedback is not None or any(row.get("feedback") for row in others)
    if others:  # the rows of the students of another folder, kept, in order of name
        rows = sorted(rows + others, key=lambda row: report.neutral(row["student"]))
    problems = []
    if record.problem:
        problems.append(f"the record of progress {record_at} could not be written ({record.problem})")
    if unwritten:
        problems.append(f"{len(unwritten)} of {len(rows)} feedback notes were not written ({why_unwritten}): "
                        + ", ".join(unwritten[:5]) + (" ..." if len(unwritten) > 5 else ""))
    if out is not None:
        try:
            report.write_csv(out, rows, order, feedback=with_notes)
        except OSError as error:
            problems.insert(0, f"the scores were not written to {out} ({error.strerror or error}); "
                               "the file there, if any, is as it was")
        else:
            names = ", ".join(sorted({row["assignment"] for row in rows if row["assignment"]})) or "no assignment"
            log(f"{len(rows)} submissions of {names} graded;")
            log(f"scores written to {out}")
    if feedback is not None:
        stale = report.stale_notes(feedback, {row.get("feedback") for row in rows})
        if stale:
            log(f"{len(stale)} note(s) in {feedback} name no student of this run, left from an earlier "
                f"one (left as they are): {', '.join(stale[:5])}" + (" ..." if len(stale) > 5 else ""))
    if problems:
        raise OutputError("; ".join(problems) + ". Every score is on the lines above"
                          + ("" if record.problem or record_at is None else f" and in {record_at}")
                          + ": free some space and run the same command again")
    return rows
