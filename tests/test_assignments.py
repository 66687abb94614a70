"""The classroom assignments: built by otter assign, graded in the sandbox.

Each NumPy assignment's solutions and blank student version are graded for
real; the Keras assignment's solutions are judged through the references
its build computed by running them (grading them again would give the same
answers), so that its one sandboxed run is the build.
"""

from __future__ import annotations

import copy
import csv
import json
import os
import re
from pathlib import Path

import nbformat
import pytest

from classroom import compare, sandbox
from classroom.build import load_references, question_points, write_references
from classroom.cli import main
from classroom.grade import grade_folder
from classroom.masters import ClassroomError, describe, load_spec, master_paths
from classroom.submissions import Submission, find_submissions

MASTERS = {path.stem: path for path in master_paths()}
NUMPY_ONLY = ["encoding_matrix", "relative_positions", "attention_biases"]
FIRST = "encoding_matrix"

# Skipped where bubblewrap cannot run, except under CI, where that is a failure.
needs_sandbox = pytest.mark.skipif(bool(sandbox.check()) and not os.environ.get("CI"), reason=sandbox.check() or "")


def replace_cell(notebook, containing: str, source: str):
    """A copy of ``notebook`` with the one cell that contains ``containing`` replaced."""
    notebook = copy.deepcopy(notebook)
    matches = [cell for cell in notebook.cells if containing in cell.source]
    assert len(matches) == 1, f"{len(matches)} cells contain {containing!r}"
    matches[0].source = source
    return notebook


@pytest.fixture(scope="module")
def graded(builds, tmp_path_factory):
    """Solutions and blanks of every NumPy assignment, plus broken notebooks for the first."""
    root = tmp_path_factory.mktemp("submissions")
    rows = {}
    for name in NUMPY_ONLY:
        built = builds(name)
        folder = root / name
        folder.mkdir()
        solutions = nbformat.read(built.solutions, as_version=4)
        nbformat.write(solutions, folder / "solutions.ipynb")
        (folder / "blank.ipynb").write_bytes(built.student.read_bytes())
        if name == FIRST:
            nbformat.write(replace_cell(solutions, "norms_squared = (table",
                                        "table = encoding_matrix(200, 16)\nnorms_squared = table.norm()"),
                           folder / "raises.ipynb")
            nbformat.write(replace_cell(solutions, "fast_wave_pair = closest_rows(np.sin",
                                        "while True:\n    pass"), folder / "endless_cell.ipynb")
            (folder / "not_json.ipynb").write_text("this is not a notebook")
            (folder / "essay.pdf").write_bytes(b"%PDF-1.4 not a notebook")
            (folder / "two_notebooks").mkdir()
            for copy_name in ("a.ipynb", "b.ipynb"):
                (folder / "two_notebooks" / copy_name).write_bytes(built.student.read_bytes())
        rows[name] = grade_folder(folder, out=root.parent / f"{name}.csv", build=built.student.parents[2],
                                  jobs=2, cell_timeout=3, log=lambda line: None)
    return {"rows": rows, "csv": {name: root.parent / f"{name}.csv" for name in NUMPY_ONLY}}


def row(graded, run: str, student: str) -> dict:
    (match,) = [entry for entry in graded["rows"][run] if entry["student"] == student]
    return match


@needs_sandbox
@pytest.mark.parametrize("name", NUMPY_ONLY)
def test_the_solutions_earn_full_marks(graded, name):
    result = row(graded, name, "solutions")
    assert result["reason"] == "" and result["flags"] == ""
    assert float(result["total"]) == float(result["possible"]) == describe(MASTERS[name]).total > 0


@needs_sandbox
@pytest.mark.parametrize("name", NUMPY_ONLY)
def test_the_blank_student_version_earns_zero_and_says_why_per_question(graded, name):
    result = row(graded, name, "blank")
    assert float(result["total"]) == 0
    for question in describe(MASTERS[name]).points:
        assert f"{question}: " in result["reason"]


def test_the_keras_solutions_meet_every_check_of_their_spec(builds):
    built = builds("keras_positions")
    references = load_references(built.student.parents[2], "keras_positions")
    spec, info = load_spec("keras_positions"), describe(MASTERS["keras_positions"])
    results = compare.score_all(spec.questions, info.points, references, references)
    assert {q: r.score for q, r in results.items()} == info.points
    blank = compare.score_all(spec.questions, info.points, {}, references)
    assert sum(r.score for r in blank.values()) == 0 and all(r.failures for r in blank.values())


@needs_sandbox
def test_a_cell_that_raises_costs_only_what_depends_on_it(graded):
    result = row(graded, FIRST, "raises")
    assert [result[q] for q in ("q1", "q2", "q3", "q4")] == ["2", "4", "0.4", "3"]
    assert re.search(r"cell \d+ raised AttributeError: 'numpy.ndarray' object has no attribute 'norm'",
                     result["reason"])
    assert "q3: norms_squared: not answered" not in result["reason"]


@needs_sandbox
def test_an_endless_cell_is_interrupted_and_the_rest_is_graded(graded):
    result = row(graded, FIRST, "endless_cell")
    assert [result[q] for q in ("q1", "q2", "q3")] == ["2", "4", "2"] and float(result["q4"]) < 3
    assert re.search(r"cell \d+ raised OutOfTime: ran past its time and was stopped", result["reason"])


@pytest.mark.parametrize("student, reason", [
    ("not_json", "not a notebook: Notebook does not appear to be JSON: 'this is not a notebook'"),
    ("essay.pdf", "not a notebook: essay.pdf is not an .ipynb file"),
    ("two_notebooks", "not a notebook: the folder holds 2 notebooks, not one"),
])
@needs_sandbox
def test_entries_that_are_not_one_notebook_score_zero_with_a_reason(graded, student, reason):
    result = row(graded, FIRST, student)
    assert result["total"] == "0" and result["reason"] == reason


@needs_sandbox
def test_the_csv_has_a_row_per_student_and_a_column_per_question(graded):
    with open(graded["csv"][FIRST], newline="") as handle:
        table = list(csv.reader(handle))
    assert table[0] == ["student", "assignment", "q1", "q2", "q3", "q4", "total", "possible", "flags", "reason"]
    assert [line[0] for line in table[1:]] == [
        "blank", "endless_cell", "essay.pdf", "not_json", "raises", "solutions", "two_notebooks"]
    assert {line[-3] for line in table[1:]} == {"11"}


def test_a_csv_inside_the_submissions_folder_is_refused(tmp_path):
    (tmp_path / "alice.ipynb").write_text("{}")
    with pytest.raises(ClassroomError, match="out must lie outside the submissions folder"):
        grade_folder(tmp_path, out=tmp_path / "scores.csv", assignment=FIRST)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["alice.ipynb"]


def test_the_assignment_must_be_known(tmp_path):
    (tmp_path / "alice.pdf").write_text("no notebook here")
    with pytest.raises(ClassroomError, match="cannot tell which assignment"):
        grade_folder(tmp_path, out=None, unsafe_no_sandbox=True)
    with pytest.raises(ClassroomError, match="assignment must be one of .*, got 'nonesuch'"):
        grade_folder(tmp_path, out=None, assignment="nonesuch", unsafe_no_sandbox=True)


@pytest.mark.parametrize("options, message", [
    ({"timeout": 0}, "timeout must be a number of seconds > 0, got 0"),
    ({"timeout": float("nan")}, "timeout must be a number of seconds > 0, got nan"),
    ({"cell_timeout": -1}, "cell_timeout must be a number of seconds > 0, got -1"),
    ({"jobs": 0}, "jobs must be an integer >= 1, got 0"),
])
def test_bad_limits_are_refused(tmp_path, options, message):
    with pytest.raises(ClassroomError, match=re.escape(message)):
        grade_folder(tmp_path, out=None, assignment=FIRST, **options)


def test_without_bubblewrap_grading_refuses_and_never_suggests_dropping_the_sandbox(tmp_path, monkeypatch):
    (tmp_path / "alice.ipynb").write_text("{}")
    monkeypatch.setattr(sandbox, "check", lambda: "bubblewrap (bwrap) is not installed")
    with pytest.raises(ClassroomError, match="cannot grade safely: bubblewrap") as refused:
        grade_folder(tmp_path, out=None, assignment=FIRST)
    assert "unsafe" not in str(refused.value)


def test_a_missing_folder_is_refused_by_the_command_line(tmp_path, capsys):
    assert main(["grade", str(tmp_path / "missing"), "--out", str(tmp_path / "s.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_folder_with_one_notebook_is_one_student(tmp_path):
    (tmp_path / "zoe").mkdir()
    (tmp_path / "zoe" / "work.ipynb").write_text("{}")
    (tmp_path / "zoe" / ".ipynb_checkpoints").mkdir()
    (tmp_path / "zoe" / ".ipynb_checkpoints" / "work-checkpoint.ipynb").write_text("{}")
    (tmp_path / ".DS_Store").write_text("")
    assert find_submissions(tmp_path) == [Submission("zoe", tmp_path / "zoe" / "work.ipynb")]


def test_tasks_offers_both_commands():
    import tasks

    assert tasks.COMMANDS["assignments"] is tasks.assignments and tasks.COMMANDS["grade"] is tasks.grade


# --------------------------------------------------------------------------- nothing leaks to students


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
    """Every code cell and every test case a student's notebook holds (Markdown left out)."""
    tests = notebook.metadata.get("otter", {}).get("tests", {})
    cases = [case["code"] for test in tests.values() for suite in test["suites"] for case in suite["cases"]]
    return "\n".join([cell.source for cell in notebook.cells if cell.cell_type == "code"] + cases)


@pytest.mark.parametrize("name", MASTERS)
def test_the_student_version_holds_no_solution_or_hidden_test(builds, name):
    built = builds(name)
    secrets = _secrets(MASTERS[name])
    student = nbformat.read(built.student, as_version=4)
    solutions = _squash(_visible_code(nbformat.read(built.solutions, as_version=4)))
    visible = _squash(_visible_code(student))
    assert len(secrets) >= 8
    assert sum(_squash(line) in solutions for line in secrets) >= 5  # the search does find solution code
    assert [line for line in secrets if _squash(line) in visible] == []
    tests = student.metadata["otter"]["tests"]
    cases = [case for test in tests.values() for suite in test["suites"] for case in suite["cases"]]
    assert cases and not any(case["hidden"] for case in cases)
    assert sorted(tests) == sorted(describe(MASTERS[name]).points)


@pytest.mark.parametrize("name", MASTERS)
def test_the_committed_student_notebook_is_what_otter_assign_makes(builds, name):
    committed = MASTERS[name].parent / "student" / f"{name}.ipynb"
    assert committed.read_text() == builds(name).student.read_text(), (
        f"{committed} is out of date: run `python3 tasks.py assignments`")


@pytest.mark.parametrize("name", MASTERS)
def test_the_master_its_bundle_and_its_spec_agree_on_the_questions(builds, name):
    info = describe(MASTERS[name])
    assert question_points(builds(name).autograder) == pytest.approx(info.points)
    assert list(load_spec(name).questions) == list(info.points)
    assert info.title and info.minutes > 0 and info.chapters


def test_there_is_one_assignment_for_each_part_of_the_course():
    numbers = {name: describe(master).number for name, master in MASTERS.items()}
    assert numbers == {"encoding_matrix": 1, "relative_positions": 2, "keras_positions": 3,
                       "attention_biases": 4}
    chapters = {describe(master).chapters for master in MASTERS.values()}
    assert any("chapter-beyond-sinusoids" in group for group in chapters)


@needs_sandbox
@pytest.mark.parametrize("name", NUMPY_ONLY)
def test_references_written_from_the_master_are_those_of_the_build(builds, name, tmp_path):
    """write_references (no otter assign) gives the answers otter's autograder notebook gives."""
    built = builds(name)
    written = write_references(name, tmp_path)
    assert json.loads(written.read_text()) == json.loads(built.references.read_text())
