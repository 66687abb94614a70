"""Build the assignments with ``otter assign`` and grade submissions with ``otter run``.

Everything runs on the teacher's machine, in the course's environment: no
server, no Docker.

Building turns each master notebook ``assignments/<name>/<name>.ipynb`` into

- ``<build>/<name>/student/<name>.ipynb``: what students get, with the
  solutions replaced by ``...`` and only the public tests;
- ``<build>/<name>/autograder/autograder.zip``: every test, public and hidden;
- ``<build>/<name>/autograder/<name>.ipynb``: the solutions, without otter's markup.

and copies each student notebook to ``assignments/<name>/student/``, the
committed copy that the book offers for download.

Grading reads a folder that holds one entry per student: either a notebook
``<student>.ipynb`` or a folder ``<student>/`` with one notebook inside. Each
notebook is copied into a temporary folder and graded there by
:func:`otter.api.grade_submission` in a subprocess of its own, so a
submission is never written to, and one that crashes or hangs cannot stop the
others. A cell still running after half the time limit (``--cell-timeout``) is
interrupted: the questions that need it score zero and the rest of the
notebook goes on. A submission still running at the limit is stopped and
scores zero. The result is one CSV row per
student: a score per question, the total, the points possible and the reason
for any lost work (not a notebook, a cell that raised, a time-out).

Command line, with the course's Python (``python3 tasks.py assignments`` and
``python3 tasks.py grade`` call it)::

    python -m classroom.grading build [--build DIR] [--no-run-tests]
    python -m classroom.grading grade FOLDER [--out scores.csv] [--timeout SECONDS]
                                             [--cell-timeout SECONDS] [--assignment NAME]
                                             [--jobs N] [--build DIR]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import dataclasses
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
#: Where the master notebooks live, one folder per assignment.
ASSIGNMENTS = ROOT / "assignments"
#: Where ``build`` writes student notebooks and autograder bundles (ignored by git).
BUILD = ASSIGNMENTS / "_build"
#: Seconds one submission may run before it is stopped.
DEFAULT_TIMEOUT = 120.0
#: Metadata key under which each cell of a submission's copy keeps its position.
_CELL_KEY = "classroom_cell"


class ClassroomError(Exception):
    """A problem with the command as given (a missing build, an unknown folder)."""


# --------------------------------------------------------------------------- masters


@dataclasses.dataclass(frozen=True)
class AssignmentInfo:
    """What a master notebook says about itself.

    Attributes:
        name: the folder and file name, e.g. ``"encoding_matrix"``.
        number: the assignment's number in the course.
        title: a short title.
        minutes: the time a student should plan for it.
        chapters: labels of the chapters it practises.
        points: points of each question, in order.
    """

    name: str
    number: int
    title: str
    minutes: int
    chapters: tuple[str, ...]
    points: dict[str, float]

    @property
    def total(self) -> float:
        """Points for the whole assignment."""
        return sum(self.points.values())


def master_paths(root: Path = ASSIGNMENTS) -> list[Path]:
    """Every master notebook ``<root>/<name>/<name>.ipynb``, sorted by name.

    >>> [path.name for path in master_paths()][:1]
    ['encoding_matrix.ipynb']
    """
    root = Path(root)
    if not root.is_dir():
        raise ClassroomError(f"root must be a folder of assignments, got {str(root)!r}")
    return sorted(
        path for path in root.glob("*/*.ipynb")
        if path.stem == path.parent.name and not path.parent.name.startswith(("_", "."))
    )


def describe(master: Path) -> AssignmentInfo:
    """Read a master's title, time and chapters (its ``classroom`` metadata) and its questions.

    >>> info = describe(ASSIGNMENTS / "encoding_matrix" / "encoding_matrix.ipynb")
    >>> info.name, list(info.points)
    ('encoding_matrix', ['q1', 'q2', 'q3', 'q4'])
    """
    notebook = nbformat.read(Path(master), as_version=4)
    about = notebook.metadata.get("classroom", {})
    points = {}
    for cell in notebook.cells:
        first, _, rest = cell.source.lstrip().partition("\n")
        if cell.cell_type == "raw" and first.strip().upper() == "# BEGIN QUESTION":
            config = yaml.safe_load(rest) or {}
            value = config.get("points", 1)
            points[config["name"]] = float(sum(value) if isinstance(value, list) else value)
    return AssignmentInfo(
        name=Path(master).stem,
        number=int(about.get("number", 0)),
        title=str(about.get("title", Path(master).stem)),
        minutes=int(about.get("minutes", 0)),
        chapters=tuple(about.get("chapters", ())),
        points=points,
    )


# --------------------------------------------------------------------------- building


@dataclasses.dataclass(frozen=True)
class Built:
    """The files ``build_assignment`` made for one assignment."""

    name: str
    student: Path
    autograder: Path
    solutions: Path


def student_notebook_text(path: Path) -> str:
    """The student notebook at ``path`` as text, with cell ids numbered in order.

    ``otter assign`` gives the cells it adds random ids; numbering them makes
    two builds of the same master byte for byte identical.
    """
    notebook = nbformat.read(Path(path), as_version=4)
    for index, cell in enumerate(notebook.cells):
        cell.id = f"cell-{index:02d}"
    return nbformat.writes(notebook) + "\n"


def build_assignment(master: Path, build: Path = BUILD, *, run_tests: bool = True) -> Built:
    """Run ``otter assign`` on ``master`` and put its results in ``build/<name>/``.

    otter assign works on a copy of the master in a temporary folder. Only the
    ``student`` and ``autograder`` subfolders of ``build/<name>`` are replaced;
    nothing else there is touched.

    Args:
        master: the master notebook ``<name>/<name>.ipynb``.
        build: the build folder.
        run_tests: let otter assign check that the solutions pass every test
            (it runs the whole notebook once more).
    """
    master, build = Path(master), Path(build)
    name = master.stem
    with tempfile.TemporaryDirectory(prefix=f"assign-{name}-") as scratch:
        scratch = Path(scratch)
        source = scratch / "master" / master.name
        source.parent.mkdir()
        shutil.copyfile(master, source)
        command = [sys.executable, "-m", "otter", "assign", str(source), str(scratch / "dist")]
        if not run_tests:
            command.append("--no-run-tests")
        done = subprocess.run(command, cwd=scratch, capture_output=True, text=True)
        if done.returncode:
            raise ClassroomError(f"otter assign failed on {master}:\n{done.stdout}{done.stderr}")
        dist = scratch / "dist"
        bundles = sorted((dist / "autograder").glob("*.zip"))
        if len(bundles) != 1:
            raise ClassroomError(f"otter assign made {len(bundles)} autograder zips for {master}, expected 1")

        staging = scratch / "staging"
        (staging / "student").mkdir(parents=True)
        (staging / "autograder").mkdir()
        (staging / "student" / master.name).write_text(student_notebook_text(dist / "student" / master.name))
        shutil.copyfile(bundles[0], staging / "autograder" / "autograder.zip")
        shutil.copyfile(dist / "autograder" / master.name, staging / "autograder" / master.name)

        target = build / name
        target.mkdir(parents=True, exist_ok=True)
        for part in ("student", "autograder"):
            shutil.rmtree(target / part, ignore_errors=True)
            shutil.move(str(staging / part), str(target / part))
    return Built(
        name=name,
        student=target / "student" / master.name,
        autograder=target / "autograder" / "autograder.zip",
        solutions=target / "autograder" / master.name,
    )


def publish(built: Built, root: Path = ASSIGNMENTS) -> Path:
    """Copy a built student notebook to ``root/<name>/student/``, the copy the book links to.

    The file is rewritten only when its content changes.
    """
    target = Path(root) / built.name / "student" / built.student.name
    text = built.student.read_text()
    if not target.exists() or target.read_text() != text:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return target


def build_all(build: Path = BUILD, *, run_tests: bool = True, root: Path = ASSIGNMENTS,
              publish_students: bool = True, log=print) -> list[Built]:
    """Build every master under ``root`` and (by default) publish the student notebooks."""
    built = []
    for master in master_paths(root):
        log(f"building {master.stem} ...")
        result = build_assignment(master, build, run_tests=run_tests)
        if publish_students:
            publish(result, root)
        log(f"  student notebook: {result.student}\n  autograder:       {result.autograder}")
        built.append(result)
    return built


# --------------------------------------------------------------------------- grading


@dataclasses.dataclass(frozen=True)
class Submission:
    """One student's entry in a submissions folder.

    Attributes:
        student: the file name without ``.ipynb``, or the folder name.
        path: the notebook to grade, or ``None`` if the entry holds no single notebook.
        problem: why it cannot be graded, if ``path`` is ``None``.
    """

    student: str
    path: Path | None
    problem: str = ""


@dataclasses.dataclass(frozen=True)
class Grade:
    """The result for one student: points per question and the reason for any zero."""

    student: str
    scores: dict[str, float]
    reason: str = ""


def find_submissions(folder: Path) -> list[Submission]:
    """One :class:`Submission` per file or folder in ``folder`` (hidden names are skipped).

    A file is one student's submission; a folder is one too and must hold
    exactly one notebook (``.ipynb_checkpoints`` do not count).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ClassroomError(f"the submissions folder {str(folder)!r} does not exist or is not a folder")
    found = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            notebooks = sorted(
                path for path in entry.rglob("*.ipynb")
                if ".ipynb_checkpoints" not in path.parts and not path.name.startswith(".")
            )
            if len(notebooks) == 1:
                found.append(Submission(entry.name, notebooks[0]))
            else:
                found.append(Submission(entry.name, None, f"not a notebook: the folder holds {len(notebooks)} notebooks, not one"))
        elif entry.is_file():
            found.append(Submission(entry.stem if entry.suffix == ".ipynb" else entry.name, entry))
    return found


def read_submission(path: Path) -> tuple[nbformat.NotebookNode | None, str]:
    """The notebook at ``path``, or ``None`` and the reason it is not a readable notebook."""
    path = Path(path)
    if path.suffix != ".ipynb":
        return None, f"not a notebook: {path.name} is not an .ipynb file"
    try:
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
    except Exception as error:  # a broken file is a reason to report, never a crash
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return None, f"not a notebook: {message[:160]}"
    return notebook, ""


def assignment_name(notebook: nbformat.NotebookNode) -> str | None:
    """The assignment a student notebook belongs to, as ``otter assign`` recorded it."""
    return notebook.metadata.get("otter", {}).get("assignment_name")


def question_points(autograder: Path) -> dict[str, float]:
    """Points of each question in an autograder bundle, in question order."""
    from otter.test_files import OKTestFile

    points = {}
    with zipfile.ZipFile(autograder) as bundle, tempfile.TemporaryDirectory() as scratch:
        names = sorted(name for name in bundle.namelist() if name.startswith("tests/") and name.endswith(".py"))
        for name in names:
            path = bundle.extract(name, scratch)
            test = OKTestFile.from_file(path)
            points[test.name] = float(test.possible)
    return dict(sorted(points.items(), key=lambda item: _natural_key(item[0])))


def _natural_key(name: str) -> list:
    """Sort ``q2`` before ``q10``."""
    import re

    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _kill_tree(process: subprocess.Popen) -> None:
    """Kill a grading subprocess and everything it started (the notebook's kernel included)."""
    children = []
    try:
        import psutil

        children = psutil.Process(process.pid).children(recursive=True)
    except Exception:
        pass  # without psutil the kernel still exits on its own once its parent is gone
    for child in children:
        try:
            child.kill()
        except Exception:
            pass
    try:
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except (ProcessLookupError, PermissionError):
        pass


def grade_notebook(student: str, notebook: nbformat.NotebookNode, autograder: Path, *,
                   filename: str = "submission.ipynb", timeout: float = DEFAULT_TIMEOUT,
                   cell_timeout: float | None = None) -> Grade:
    """Grade one notebook with otter in a subprocess, within ``timeout`` seconds.

    The notebook is written to a temporary folder as ``filename`` (the name
    its otter cell opens) and graded there; its original file is never
    opened for writing. A cell still running after ``cell_timeout`` seconds
    (default: half of ``timeout``) is interrupted.
    """
    cell_timeout = timeout / 2 if cell_timeout is None else cell_timeout
    notebook = nbformat.from_dict(json.loads(nbformat.writes(notebook)))
    for number, cell in enumerate(notebook.cells, start=1):
        cell.metadata[_CELL_KEY] = number
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    with tempfile.TemporaryDirectory(prefix="grade-", ignore_cleanup_errors=True) as scratch:
        scratch = Path(scratch)
        copy, result = scratch / filename, scratch / "result.json"
        nbformat.write(notebook, copy)
        command = [sys.executable, "-m", "classroom.grading", "_worker", str(Path(autograder).resolve()),
                   str(copy), str(result), "--cell-timeout", str(cell_timeout)]
        environment = {**os.environ, "TMPDIR": str(scratch),
                       "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        process = subprocess.Popen(command, cwd=scratch, env=environment, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_tree(process)
            process.communicate()
            return Grade(student, {}, f"timed out: still running after {timeout:g} s, stopped")
        if not result.exists():
            lines = output.decode(errors="replace").strip().splitlines() or ["no output"]
            return Grade(student, {}, f"the grader failed: {lines[-1][:160]}")
        data = json.loads(result.read_text())
    return Grade(student, data["scores"], "; ".join(data["problems"]))


def _cell_problems(executed: nbformat.NotebookNode, cell_timeout: float) -> list[str]:
    """A line for each cell of the executed notebook that ended in an error."""
    problems = []
    for cell in executed.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") != "error":
                continue
            number = cell.metadata.get(_CELL_KEY)
            where = f"cell {number}" if number else "a grading cell"
            if output.get("ename") == "KeyboardInterrupt":
                problems.append(f"{where} ran past the {cell_timeout:g} s limit for one cell and was stopped")
            else:
                value = (str(output.get("evalue", "")).strip().splitlines() or [""])[0][:120]
                problems.append(f"{where} raised {output.get('ename')}: {value}".rstrip(": "))
    return list(dict.fromkeys(problems))  # a cell interrupted twice is reported once


def _worker(autograder: str, notebook: str, result: str, cell_timeout: float) -> None:
    """Grade ``notebook`` in this process and write its scores and problems to ``result``.

    Each cell gets ``cell_timeout`` seconds; then its kernel is interrupted and
    the next cell runs. otter's own ``ExecutePreprocessor`` takes no time
    limit, so a subclass with one takes its place for this process only.
    """
    import nbconvert.preprocessors as preprocessors

    class BoundedExecutePreprocessor(preprocessors.ExecutePreprocessor):
        def __init__(self, **options):
            super().__init__(**options)
            self.timeout = max(1, math.ceil(cell_timeout))
            self.interrupt_on_timeout = True

    preprocessors.ExecutePreprocessor = BoundedExecutePreprocessor
    from otter.api import grade_submission

    try:
        results = grade_submission(notebook, autograder, quiet=True)
    except Exception as error:
        message = (str(error).strip().splitlines() or [type(error).__name__])[-1][:160]
        outcome = {"scores": {}, "problems": [f"otter could not grade it: {message}"]}
    else:
        problems = []
        if results.has_catastrophic_failure():
            problems.append(f"otter could not grade it: {results.catastrophic_error}")
        if results.notebook is not None:
            problems += _cell_problems(results.notebook, cell_timeout)
        scores = {name: float(test.score) for name, test in results.results.items()}
        outcome = {"scores": scores, "problems": problems}
    Path(result).write_text(json.dumps(outcome))


def _number(value: float) -> str:
    """A score as short text: 2, 0.75, 1.3333."""
    return f"{round(value, 4):g}"


def grade_folder(folder: Path, *, out: Path | None = Path("scores.csv"), assignment: str | None = None,
                 build: Path = BUILD, timeout: float = DEFAULT_TIMEOUT, cell_timeout: float | None = None,
                 jobs: int = 1, log=print) -> list[dict]:
    """Grade every submission in ``folder`` and write one CSV row per student to ``out``.

    Args:
        folder: one notebook (or one folder with a notebook) per student.
        out: the CSV to write; it may not lie inside ``folder``. ``None``
            writes nothing.
        assignment: the assignment's name; by default the one the notebooks
            in ``folder`` name in their metadata.
        build: the build folder holding ``<assignment>/autograder/autograder.zip``.
        timeout: seconds each submission may run.
        cell_timeout: seconds one cell may run before it is interrupted;
            half of ``timeout`` by default.
        jobs: submissions graded at the same time.

    Returns:
        The rows written, as dictionaries: ``student``, one key per question,
        ``total``, ``possible`` and ``reason``.
    """
    folder = Path(folder).resolve()
    for name, value in (("timeout", timeout), ("cell_timeout", cell_timeout)):
        if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise ClassroomError(f"{name} must be a number of seconds > 0, got {value!r}")
    if not (isinstance(jobs, int) and jobs >= 1):
        raise ClassroomError(f"jobs must be an integer >= 1, got {jobs!r}")
    submissions = find_submissions(folder)
    if out is not None:
        out = Path(out).resolve()
        if out == folder or out.is_relative_to(folder):
            raise ClassroomError(f"out must lie outside the submissions folder, got {str(out)!r}")

    notebooks = {}
    for submission in submissions:
        if submission.path is not None:
            notebooks[submission.student] = read_submission(submission.path)
    if assignment is None:
        named = sorted({assignment_name(nb) for nb, _ in notebooks.values() if nb is not None} - {None})
        if len(named) != 1:
            found = ", ".join(named) or "none"
            raise ClassroomError(f"cannot tell which assignment these are (found: {found}); pass --assignment NAME")
        assignment = named[0]
    autograder = Path(build) / assignment / "autograder" / "autograder.zip"
    if not autograder.exists():
        raise ClassroomError(f"no autograder for {assignment!r} at {autograder}: run `python3 tasks.py assignments` first")
    points = question_points(autograder)

    def grade(submission: Submission) -> Grade:
        if submission.path is None:
            return Grade(submission.student, {}, submission.problem)
        notebook, problem = notebooks[submission.student]
        if notebook is None:
            return Grade(submission.student, {}, problem)
        try:
            return grade_notebook(submission.student, notebook, autograder, filename=f"{assignment}.ipynb",
                                  timeout=timeout, cell_timeout=cell_timeout)
        except Exception as error:  # one student's failure never stops the others
            return Grade(submission.student, {}, f"the grader failed: {type(error).__name__}: {error}")

    rows = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for result in pool.map(grade, submissions):
            scores = {question: float(result.scores.get(question, 0.0)) for question in points}
            total = sum(scores.values())
            row = {"student": result.student, **{q: _number(s) for q, s in scores.items()},
                   "total": _number(total), "possible": _number(sum(points.values())), "reason": result.reason}
            rows.append(row)
            log(f"{result.student}: {row['total']}/{row['possible']}" + (f"  ({result.reason})" if result.reason else ""))
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=["student", *points, "total", "possible", "reason"])
            writer.writeheader()
            writer.writerows(rows)
        log(f"{len(rows)} submissions of {assignment} graded; scores written to {out}")
    return rows


# --------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m classroom.grading", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="build every student notebook and autograder bundle")
    build.add_argument("--build", type=Path, default=BUILD, help="build folder (default: assignments/_build)")
    build.add_argument("--no-run-tests", action="store_true", help="skip checking the solutions against the tests")
    grade = commands.add_parser("grade", help="grade a folder of submissions into a CSV")
    grade.add_argument("folder", type=Path, help="one notebook, or one folder with a notebook, per student")
    grade.add_argument("--out", type=Path, default=Path("scores.csv"), help="CSV to write (default: scores.csv)")
    grade.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                       help=f"seconds per submission (default: {DEFAULT_TIMEOUT:g})")
    grade.add_argument("--cell-timeout", type=float, default=None,
                       help="seconds one cell may run before it is interrupted (default: half of --timeout)")
    grade.add_argument("--assignment", help="assignment name (default: read from the notebooks)")
    grade.add_argument("--jobs", type=int, default=1, help="submissions graded at once (default: 1)")
    grade.add_argument("--build", type=Path, default=BUILD, help="build folder (default: assignments/_build)")
    worker = commands.add_parser("_worker")  # internal: grades one copied notebook
    worker.add_argument("autograder")
    worker.add_argument("notebook")
    worker.add_argument("result")
    worker.add_argument("--cell-timeout", type=float, required=True)
    arguments = parser.parse_args(argv)
    try:
        if arguments.command == "build":
            build_all(arguments.build, run_tests=not arguments.no_run_tests)
        elif arguments.command == "grade":
            grade_folder(arguments.folder, out=arguments.out, assignment=arguments.assignment,
                         build=arguments.build, timeout=arguments.timeout,
                         cell_timeout=arguments.cell_timeout, jobs=arguments.jobs)
        else:
            _worker(arguments.autograder, arguments.notebook, arguments.result, arguments.cell_timeout)
    except ClassroomError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
