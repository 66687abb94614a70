"""The classroom assignments: built by otter assign, graded locally by otter run.

Every master is built once per session into a temporary folder (without
otter's own run of the solutions: grading the solutions below checks the
same thing). The submissions are then graded in four folder runs, which the
tests read: the solutions and blank student versions of every assignment,
and for the first assignment a notebook whose cell raises, one with an
endless cell, one that ignores interrupts, and entries that are not notebooks.
"""

from __future__ import annotations

import concurrent.futures
import copy
import csv
import hashlib
import re
from pathlib import Path

import nbformat
import pytest

from classroom import grading

MASTERS = {path.stem: path for path in grading.master_paths()}
FIRST = "encoding_matrix"
CELL_TIMEOUT = 8
#: Limit for the submission that ignores interrupts: it always runs this long.
STUBBORN_TIMEOUT = 8


def replace_cell(notebook, containing: str, source: str):
    """A copy of ``notebook`` with the one cell that contains ``containing`` replaced by ``source``."""
    notebook = copy.deepcopy(notebook)
    matches = [cell for cell in notebook.cells if containing in cell.source]
    assert len(matches) == 1, f"{len(matches)} cells contain {containing!r}"
    matches[0].source = source
    return notebook


def checksums(folder: Path) -> dict[str, str]:
    """The SHA-256 of every file under ``folder``, by relative path."""
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Every assignment built once, side by side, into a temporary build folder."""
    build = tmp_path_factory.mktemp("build")
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(MASTERS)) as pool:
        results = pool.map(lambda master: grading.build_assignment(master, build, run_tests=False), MASTERS.values())
    return build, {result.name: result for result in results}


@pytest.fixture(scope="module")
def graded(built, tmp_path_factory):
    """Grade every prepared folder once; return the CSV rows by folder, and checksums before and after."""
    build, assignments = built
    root = tmp_path_factory.mktemp("submissions")
    folders = {}
    for name, result in assignments.items():
        folder = root / name
        folder.mkdir()
        nbformat.write(nbformat.read(result.solutions, as_version=4), folder / "solutions.ipynb")
        (folder / "blank.ipynb").write_bytes(result.student.read_bytes())
        folders[name] = folder

    solutions = nbformat.read(assignments[FIRST].solutions, as_version=4)
    first = folders[FIRST]
    nbformat.write(replace_cell(solutions, "norms_squared = (table",
                                "table = encoding_matrix(200, 16)\nnorms_squared = table.norm()"), first / "raises.ipynb")
    nbformat.write(replace_cell(solutions, "fast_wave_pair = closest_rows(np.sin",
                                "while True:\n    pass"), first / "endless_cell.ipynb")
    (first / "not_json.ipynb").write_text("this is not a notebook")
    (first / "essay.pdf").write_bytes(b"%PDF-1.4 not a notebook")
    (first / "two_notebooks").mkdir()
    for copy_name in ("a.ipynb", "b.ipynb"):
        (first / "two_notebooks" / copy_name).write_bytes(assignments[FIRST].student.read_bytes())
    stubborn = root / "stubborn"
    stubborn.mkdir()
    nbformat.write(replace_cell(solutions, "fast_wave_pair = closest_rows(np.sin",
                                "import time\nwhile True:\n    try:\n        time.sleep(0.1)\n"
                                "    except KeyboardInterrupt:\n        pass"), stubborn / "ignores_interrupts.ipynb")

    before = {folder: checksums(folder) for folder in root.iterdir()}
    out = tmp_path_factory.mktemp("scores")
    runs = {name: dict(folder=folder) for name, folder in folders.items()}
    runs[FIRST]["cell_timeout"] = CELL_TIMEOUT
    runs["stubborn"] = dict(folder=stubborn, assignment=FIRST, timeout=STUBBORN_TIMEOUT)
    rows = {}
    for name, options in runs.items():
        rows[name] = grading.grade_folder(out=out / f"{name}.csv", build=build, jobs=2, log=lambda line: None, **options)
    after = {folder: checksums(folder) for folder in root.iterdir()}
    return {"rows": rows, "out": out, "before": before, "after": after, "points": {
        name: grading.question_points(result.autograder) for name, result in assignments.items()}}


def row(graded, run: str, student: str) -> dict:
    (match,) = [entry for entry in graded["rows"][run] if entry["student"] == student]
    return match


# --------------------------------------------------------------------------- item 4: marks


@pytest.mark.parametrize("name", MASTERS)
def test_the_solutions_earn_full_marks(graded, name):
    result = row(graded, name, "solutions")
    assert result["reason"] == ""
    assert float(result["total"]) == float(result["possible"]) == sum(graded["points"][name].values()) > 0


@pytest.mark.parametrize("name", MASTERS)
def test_the_blank_student_version_earns_zero_without_crashing_the_grader(graded, name):
    result = row(graded, name, "blank")
    assert all(float(result[question]) == 0 for question in graded["points"][name])
    assert float(result["total"]) == 0
    assert not result["reason"].startswith(("timed out", "the grader failed", "otter could not", "not a notebook"))


def test_a_cell_that_raises_costs_only_its_question(graded):
    result = row(graded, FIRST, "raises")
    assert [result[q] for q in ("q1", "q2", "q3", "q4")] == ["2", "4", "0", "3"]
    assert re.fullmatch(r"cell \d+ raised AttributeError: 'numpy.ndarray' object has no attribute 'norm'", result["reason"])


def test_an_endless_cell_is_interrupted_and_the_rest_is_graded(graded):
    result = row(graded, FIRST, "endless_cell")
    assert [result[q] for q in ("q1", "q2", "q3", "q4")] == ["2", "4", "2", "0"]
    assert re.fullmatch(rf"cell \d+ ran past the {CELL_TIMEOUT} s limit for one cell and was stopped", result["reason"])


def test_a_submission_that_never_finishes_is_stopped_and_scores_zero(graded):
    (result,) = graded["rows"]["stubborn"]
    assert result["total"] == "0"
    assert result["reason"] == f"timed out: still running after {STUBBORN_TIMEOUT} s, stopped"


@pytest.mark.parametrize("student, reason", [
    ("not_json", "not a notebook: Notebook does not appear to be JSON: 'this is not a notebook'"),
    ("essay.pdf", "not a notebook: essay.pdf is not an .ipynb file"),
    ("two_notebooks", "not a notebook: the folder holds 2 notebooks, not one"),
])
def test_entries_that_are_not_one_notebook_score_zero_with_a_reason(graded, student, reason):
    result = row(graded, FIRST, student)
    assert result["total"] == "0" and result["reason"] == reason


# --------------------------------------------------------------------------- item 2: the CSV, submissions untouched


def test_grading_never_writes_to_a_submission(graded):
    assert graded["after"] == graded["before"]
    assert all(graded["before"].values())


def test_the_csv_has_a_row_per_student_and_a_column_per_question(graded):
    with open(graded["out"] / f"{FIRST}.csv", newline="") as handle:
        table = list(csv.reader(handle))
    assert table[0] == ["student", "q1", "q2", "q3", "q4", "total", "possible", "reason"]
    assert [line[0] for line in table[1:]] == [
        "blank", "endless_cell", "essay.pdf", "not_json", "raises", "solutions", "two_notebooks"]
    assert {line[-2] for line in table[1:]} == {"11"}


def test_a_csv_inside_the_submissions_folder_is_refused(tmp_path):
    (tmp_path / "alice.ipynb").write_text("{}")
    with pytest.raises(grading.ClassroomError, match="out must lie outside the submissions folder"):
        grading.grade_folder(tmp_path, out=tmp_path / "scores.csv", assignment=FIRST)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["alice.ipynb"]


def test_the_assignment_must_be_known(tmp_path):
    (tmp_path / "alice.pdf").write_text("no notebook here")
    with pytest.raises(grading.ClassroomError, match="cannot tell which assignment"):
        grading.grade_folder(tmp_path, out=None)
    with pytest.raises(grading.ClassroomError, match="no autograder for 'nonesuch'"):
        grading.grade_folder(tmp_path, out=None, assignment="nonesuch")


@pytest.mark.parametrize("options, message", [
    ({"timeout": 0}, "timeout must be a number of seconds > 0, got 0"),
    ({"timeout": float("nan")}, "timeout must be a number of seconds > 0, got nan"),
    ({"cell_timeout": -1}, "cell_timeout must be a number of seconds > 0, got -1"),
    ({"jobs": 0}, "jobs must be an integer >= 1, got 0"),
])
def test_bad_limits_are_refused(tmp_path, options, message):
    with pytest.raises(grading.ClassroomError, match=re.escape(message)):
        grading.grade_folder(tmp_path, out=None, assignment=FIRST, **options)


def test_a_missing_folder_is_refused_by_the_command_line(tmp_path, capsys):
    assert grading.main(["grade", str(tmp_path / "missing"), "--out", str(tmp_path / "s.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_folder_with_one_notebook_is_one_student(tmp_path):
    (tmp_path / "zoe").mkdir()
    (tmp_path / "zoe" / "work.ipynb").write_text("{}")
    (tmp_path / "zoe" / ".ipynb_checkpoints").mkdir()
    (tmp_path / "zoe" / ".ipynb_checkpoints" / "work-checkpoint.ipynb").write_text("{}")
    (tmp_path / ".DS_Store").write_text("")
    assert grading.find_submissions(tmp_path) == [grading.Submission("zoe", tmp_path / "zoe" / "work.ipynb")]


def test_tasks_offers_both_commands():
    import tasks

    assert tasks.COMMANDS["assignments"] is tasks.assignments and tasks.COMMANDS["grade"] is tasks.grade


# --------------------------------------------------------------------------- item 4: nothing leaks to students


def _squash(text: str) -> str:
    """Code without white space and with one kind of quote (otter rewrites test code)."""
    return re.sub(r"\s+", "", text.replace('"', "'"))


def _secrets(master: Path) -> list[str]:
    """The solution lines and hidden test lines of a master notebook."""
    secrets, block = [], None
    for cell in nbformat.read(master, as_version=4).cells:
        head = cell.source.strip().upper()
        if cell.cell_type == "raw" and head.startswith("# BEGIN "):
            block = head.split()[2]
        elif cell.cell_type == "raw" and head.startswith("# END "):
            block = None
        elif cell.cell_type == "code" and block == "SOLUTION":
            inside = False
            for line in cell.source.splitlines():
                if line.strip() in ("# BEGIN SOLUTION", "# END SOLUTION"):
                    inside = line.strip() == "# BEGIN SOLUTION"
                elif inside:
                    secrets.append(line)
                elif line.rstrip().endswith("# SOLUTION"):
                    secrets.append(line.rsplit("# SOLUTION", 1)[0].split("=", 1)[-1])
        elif cell.cell_type == "code" and block == "TESTS" and "HIDDEN" in cell.source.splitlines()[0].upper():
            secrets += cell.source.splitlines()[1:]
    return [line for line in secrets if len(_squash(line)) >= 12 and not line.strip().startswith("#")]


def _visible_code(notebook) -> str:
    """Every code cell and every test case a student's notebook holds.

    Markdown is left out: a prompt may quote a line of the answer on purpose
    (``keras.utils.set_random_seed(0)``, for one).
    """
    tests = notebook.metadata.get("otter", {}).get("tests", {})
    cases = [case["code"] for test in tests.values() for suite in test["suites"] for case in suite["cases"]]
    return "\n".join([cell.source for cell in notebook.cells if cell.cell_type == "code"] + cases)


@pytest.mark.parametrize("name", MASTERS)
def test_the_student_version_holds_no_solution_or_hidden_test(built, name):
    _, assignments = built
    secrets = _secrets(MASTERS[name])
    student = nbformat.read(assignments[name].student, as_version=4)
    solutions = _squash(_visible_code(nbformat.read(assignments[name].solutions, as_version=4)))
    visible = _squash(_visible_code(student))
    assert len(secrets) >= 10
    assert sum(_squash(line) in solutions for line in secrets) >= 5  # the search does find solution code
    assert [line for line in secrets if _squash(line) in visible] == []
    tests = student.metadata["otter"]["tests"]
    cases = [case for test in tests.values() for suite in test["suites"] for case in suite["cases"]]
    assert cases and not any(case["hidden"] for case in cases)
    assert sorted(tests) == sorted(grading.describe(MASTERS[name]).points)


@pytest.mark.parametrize("name", MASTERS)
def test_the_committed_student_notebook_is_what_otter_assign_makes(built, name):
    _, assignments = built
    committed = MASTERS[name].parent / "student" / f"{name}.ipynb"
    assert committed.read_text() == assignments[name].student.read_text(), (
        f"{committed} is out of date: run `python3 tasks.py assignments`")


@pytest.mark.parametrize("name", MASTERS)
def test_the_master_and_its_bundle_agree_on_the_points(built, name):
    _, assignments = built
    info = grading.describe(MASTERS[name])
    assert info.points == grading.question_points(assignments[name].autograder)
    assert info.title and info.minutes > 0 and info.chapters


def test_there_are_three_assignments_in_course_order():
    numbers = {name: grading.describe(master).number for name, master in MASTERS.items()}
    assert numbers == {"encoding_matrix": 1, "relative_positions": 2, "keras_positions": 3}
